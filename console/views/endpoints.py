"""Model endpoints (operators only): the list, create, edit, a connection test, and the
`vllm serve` command that serves each one."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console.forms.endpoints import EndpointForm
from console.views.access import operator_required
from training_app import selectors, services
from training_app.models import ModelEndpoint
from training_app.selectors.endpoints import CONNECTION_CHECK_TIMEOUT_S as CONNECTION_TIMEOUT_S
from training_app.selectors.endpoints import ConnectionCheck


@require_GET
@operator_required
def endpoint_list(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "training_app/endpoint_list.html",
        {"endpoints": selectors.endpoints_list(), "default_name": settings.HAT_DEFAULT_ENDPOINT},
    )


@require_http_methods(["GET", "POST"])
@operator_required
def endpoint_create(request: HttpRequest) -> HttpResponse:
    form = EndpointForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        endpoint = _save(form, None)
        if endpoint is not None:
            messages.success(request, f"Endpoint {endpoint.name} created.")
            return redirect("console:endpoint-edit", endpoint_id=endpoint.pk)
    status = 400 if form.errors else 200
    return render(request, "training_app/endpoint_form.html", {"form": form}, status=status)


@require_http_methods(["GET", "POST"])
@operator_required
def endpoint_edit(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    endpoint = selectors.endpoint_get(endpoint_id=endpoint_id)
    form = EndpointForm(request.POST or None, initial=EndpointForm.initial_from(endpoint))
    if request.method == "POST" and form.is_valid():
        if _save(form, endpoint) is not None:
            messages.success(request, f"Endpoint {endpoint.name} saved.")
            return redirect("console:endpoint-edit", endpoint_id=endpoint.pk)
        endpoint = selectors.endpoint_get(endpoint_id=endpoint_id)  # unchanged in the database
    status = 400 if form.errors else 200
    return render(
        request,
        "training_app/endpoint_form.html",
        _edit_context(endpoint, form=form),
        status=status,
    )


@require_POST
@operator_required
def endpoint_test(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    """Probe ``GET /models``, then redirect to the endpoint page (post/redirect/get: a reload
    does not re-run the probe) with the outcome as messages (never a 500)."""
    endpoint = selectors.endpoint_get(endpoint_id=endpoint_id)
    check = selectors.endpoint_check_connection(endpoint=endpoint, timeout_s=CONNECTION_TIMEOUT_S)
    for level, text in connection_check_messages(endpoint, check):
        messages.add_message(request, level, text)
    return redirect("console:endpoint-edit", endpoint_id=endpoint.pk)


SHOWN_MODEL_IDS = 10


def connection_check_messages(
    endpoint: ModelEndpoint, check: ConnectionCheck
) -> list[tuple[int, str]]:
    """The check as (level, text) messages: the outcome first, then each hint."""
    ms = f"{check.round_trip_ms:.0f} ms"
    if check.ok:
        ids = [
            f"{m} (this endpoint's model)" if m == endpoint.model_name else m
            for m in check.models[:SHOWN_MODEL_IDS]
        ]
        more = len(check.models) - len(ids)
        listed = ", ".join(ids) + (f" and {more} more" if more > 0 else "")
        n = len(check.models)
        outcome = (
            messages.SUCCESS,
            f"✓ Connected in {ms}: GET {endpoint.base_url}/models lists {n} "
            f"model{'' if n == 1 else 's'}{': ' + listed if listed else ''}.",
        )
    else:
        problem = check.problem[:1].upper() + check.problem[1:]
        outcome = (messages.ERROR, f"✗ {problem} after {ms}: {check.message}")
    hint_level = messages.WARNING if check.ok else messages.INFO
    return [outcome, *((hint_level, hint) for hint in check.hints)]


def _edit_context(endpoint: ModelEndpoint, **extra: Any) -> dict[str, Any]:
    try:
        command, command_error = selectors.endpoint_vllm_command(endpoint), ""
    except ValueError as exc:
        command, command_error = "", str(exc)
    return {
        "endpoint": endpoint,
        "vllm_command": command,
        "vllm_command_error": command_error,
        "uses_h20_profile": selectors.endpoint_is_qwen_moe(endpoint),
        "is_default": endpoint.name == settings.HAT_DEFAULT_ENDPOINT,
        "connection_timeout_s": CONNECTION_TIMEOUT_S,
        **extra,
    }


def _save(form: EndpointForm, endpoint: ModelEndpoint | None) -> ModelEndpoint | None:
    """Save through the service; its errors (a taken name, a bad URL, the model's own
    validators) land on their fields."""
    try:
        if endpoint is None:
            return services.endpoint_create(**form.endpoint_fields())
        return services.endpoint_update(endpoint=endpoint, **form.endpoint_fields())
    except ValidationError as exc:
        for field, errors in exc.message_dict.items():
            form.add_error(field if field in form.fields else None, errors)
        return None
