"""Reads for model endpoints: the rows, the ``vllm serve`` command line each endpoint runs,
and a live check of what the endpoint's server answers (``GET /models``).

Endpoints are operator-level configuration (no tenancy): the console's endpoint pages check
the operator role before calling these.
"""

from __future__ import annotations

import os
import re
import shlex
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from urllib.parse import urlparse

from django.conf import settings
from django.db.models import Count, QuerySet
from django.http import Http404

from inference.clients.openai_compatible import ModelCallError, ModelProtocolError, ModelTimeout
from inference.workers.profiles import VllmProfile, qwen_moe_h20_profile, vllm_serve_command
from training_app.models import ModelEndpoint

# "Qwen3.6-35B-A3B", "qwen3-30b-a3b", "qwen-moe-h20": a Qwen mixture-of-experts checkpoint
# (the "-A3B" suffix is its active-parameter count), served with the report's H20 profile.
QWEN_MOE_PATTERN = re.compile(r"qwen.*(moe|-a\d+(\.\d+)?b\b)", re.IGNORECASE)
DEFAULT_VLLM_PORT = 8000
# How long "Test connection" (console page and API) waits for GET /models.
CONNECTION_CHECK_TIMEOUT_S = 3.0


def endpoints_list() -> QuerySet[ModelEndpoint]:
    """Every endpoint, with how many rooms reply through it (``room_count``)."""
    return ModelEndpoint.objects.annotate(room_count=Count("rooms")).order_by("name")


def endpoints_active() -> QuerySet[ModelEndpoint]:
    return ModelEndpoint.objects.filter(is_active=True).order_by("name")


def endpoint_get(*, endpoint_id: int) -> ModelEndpoint:
    try:
        return endpoints_list().get(pk=endpoint_id)
    except (ModelEndpoint.DoesNotExist, ValueError, TypeError):
        raise Http404("No such model endpoint.") from None


def endpoint_get_by_name(name: str) -> ModelEndpoint | None:
    return ModelEndpoint.objects.filter(name=name).first()


def endpoint_is_qwen_moe(endpoint: ModelEndpoint) -> bool:
    return bool(QWEN_MOE_PATTERN.search(f"{endpoint.name} {endpoint.model_name}"))


def endpoint_vllm_profile(
    endpoint: ModelEndpoint,
    *,
    model: str | None = None,
    gpu_memory_utilization: float | None = None,
) -> VllmProfile:
    """The vLLM launch profile that serves ``endpoint``.

    The served model name is the endpoint's ``model_name`` (the ``model`` field its client
    sends), so the server answers to exactly what the console asks for; ``model`` (weights:
    a hub id or a local directory) defaults to the same name. The port comes from the base
    URL. A Qwen MoE gets the report's tuned H20 profile (MTP on, ``max_num_seqs`` 4); any
    other model a plain profile sized by the endpoint's max concurrency. Raises ValueError
    when there is nothing to serve (no model name and no ``model``) or a bad utilization.
    """
    weights = model or endpoint.model_name
    if not weights:
        raise ValueError(
            f"endpoint {endpoint.name!r} has no model name; pass the weights to serve "
            "(a hub id or a local directory)"
        )
    served_name = endpoint.model_name or endpoint.name
    port = urlparse(endpoint.base_url).port or DEFAULT_VLLM_PORT
    native_tools = endpoint.tool_mode == ModelEndpoint.ToolMode.NATIVE
    if endpoint_is_qwen_moe(endpoint):
        profile = qwen_moe_h20_profile(weights, served_model_name=served_name, port=port)
        if not native_tools:
            profile = replace(profile, tool_call_parser=None, enable_auto_tool_choice=False)
    else:
        profile = VllmProfile(
            model=weights,
            served_model_name=served_name,
            port=port,
            tool_call_parser="hermes" if native_tools else None,
            enable_auto_tool_choice=native_tools,
            reasoning_parser="qwen3" if "qwen3" in weights.lower() else None,
            max_model_len=None,
            max_num_seqs=endpoint.max_concurrency,
        )
    profile = replace(profile, api_key_env=endpoint.api_key_ref or None)
    if gpu_memory_utilization is not None:
        profile = replace(profile, gpu_memory_utilization=gpu_memory_utilization)
    return profile


def endpoint_vllm_command(
    endpoint: ModelEndpoint,
    *,
    model: str | None = None,
    gpu_memory_utilization: float | None = None,
) -> str:
    """The shell-quoted ``vllm serve`` line for ``endpoint``.

    With an API-key reference, vLLM's own ``VLLM_API_KEY`` is set from that variable, so the
    key never appears on the command line (or in ``ps``).
    """
    profile = endpoint_vllm_profile(
        endpoint, model=model, gpu_memory_utilization=gpu_memory_utilization
    )
    line = shlex.join(vllm_serve_command(profile))
    if profile.api_key_env:
        line = f'VLLM_API_KEY="${{{profile.api_key_env}}}" {line}'
    return line


# --- connection check ----------------------------------------------------------------------


@dataclass(frozen=True)
class ConnectionCheck:
    """What ``GET /models`` on an endpoint said: served ids, or why it failed."""

    ok: bool
    round_trip_ms: float
    models: tuple[str, ...] = ()
    problem: str = ""  # "connection refused", "timeout", "HTTP 401", ...
    message: str = ""
    hints: tuple[str, ...] = field(default_factory=tuple)


def endpoint_check_connection(
    *, endpoint: ModelEndpoint, timeout_s: float = CONNECTION_CHECK_TIMEOUT_S
) -> ConnectionCheck:
    """Ask the endpoint's server which models it serves (through the same pooled client the
    live path uses). Never raises: every failure becomes a ``ConnectionCheck`` that says
    what went wrong and what to look at."""
    # Imported here: experiments_app builds on this app, not the other way round; only this
    # check borrows its pooled client (the one live replies use).
    from experiments_app.agent_factory import endpoint_client

    hints: list[str] = []
    if endpoint.api_key_ref and not os.environ.get(endpoint.api_key_ref):
        hints.append(
            f"The API key variable {endpoint.api_key_ref} is not set in the console's "
            "environment, so requests go out without a key."
        )
    started = time.perf_counter()
    try:
        models = endpoint_client(endpoint).list_models(timeout_s=timeout_s)
    except ModelCallError as exc:
        problem, more = _classify(exc, endpoint, timeout_s)
        return ConnectionCheck(
            False, _ms_since(started), problem=problem, message=str(exc), hints=(*more, *hints)
        )
    except Exception as exc:  # a probe button must never become a 500
        return ConnectionCheck(
            False,
            _ms_since(started),
            problem="unexpected error",
            message=f"{type(exc).__name__}: {exc}",
            hints=tuple(hints),
        )
    elapsed = _ms_since(started)
    if endpoint.model_name and endpoint.model_name not in models:
        hints.append(
            f"The server does not list {endpoint.model_name!r}; requests naming it will be "
            "rejected. Set the model name to one of the ids above (or leave it empty)."
        )
    return ConnectionCheck(True, elapsed, models=tuple(models), hints=tuple(hints))


def _classify(
    exc: ModelCallError, endpoint: ModelEndpoint, timeout_s: float
) -> tuple[str, tuple[str, ...]]:
    # list_models raises ModelTimeout, ModelUnavailable (with status_code for HTTP >= 400)
    # or ModelProtocolError.
    if isinstance(exc, ModelTimeout):
        return "timeout", (
            f"No answer within {timeout_s:g} s: the server may be starting, overloaded, or "
            "behind a firewall that drops packets.",
        )
    if exc.status_code is not None:
        status = exc.status_code
        if status in (401, 403):
            hint = "The server refused the key: check the API key variable."
        elif status == 404:
            hint = "No /models here: the base URL usually ends with /v1."
        else:
            hint = "The server is up but failed the request; see its logs."
        return f"HTTP {status}", (hint,)
    if isinstance(exc, ModelProtocolError):
        return "not an OpenAI-compatible answer", (
            "Something answered, but not with a model list: is the base URL right?",
        )
    host = urlparse(endpoint.base_url).netloc
    lowered = str(exc).lower()
    if "refused" in lowered:
        return "connection refused", (
            f"Nothing is listening at {host}: start the model server (see the vllm serve "
            "command below) or fix the host and port.",
        )
    if "name or service not known" in lowered or "getaddrinfo" in lowered:
        return "unknown host", (f"The host name in {host} does not resolve.",)
    return "unreachable", ("The server could not be reached.",)


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


# Jobs on the eval queue (blind-test replies, judge calibrations) ask this before they start:
# on `make run` the model worker starts beside the Celery workers and may not be up yet.
ENDPOINT_RETRY_S = 15


def endpoints_unreachable(endpoints: Iterable[ModelEndpoint]) -> list[str]:
    """Names of the endpoints whose ``GET /models`` does not answer (refused, timed out)."""
    seen: dict[int, ModelEndpoint] = {e.pk: e for e in endpoints}
    return [
        e.name for e in seen.values() if not endpoint_check_connection(endpoint=e, timeout_s=3.0).ok
    ]


def endpoint_wait_retries() -> int:
    """How many ``ENDPOINT_RETRY_S`` retries make ``HAT_JOB_ENDPOINT_WAIT_S``."""
    return max(0, int(settings.HAT_JOB_ENDPOINT_WAIT_S // ENDPOINT_RETRY_S))
