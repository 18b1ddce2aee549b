"""Live replies: the path every viewer comment takes on air.

It must never fall over: a model timeout or outage, a missing published harness or an
unexpected runtime error all end in the room's fallback reply with ``fallback=True``, and
the request is still recorded with its trace. Once a request's row is claimed it always ends
``done``: text PostgreSQL cannot store (U+0000, lone surrogates, non-finite numbers) is
replaced before the UPDATE (a reply containing it is not said: the fallback is), and if the
UPDATE still fails, a minimal fallback result is written instead.
"""

from __future__ import annotations

import logging
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from experiments_app.agent_factory import build_agent
from experiments_app.models import LiveReply
from experiments_app.routing import ArmChoice, NoServingConfig, choose_arm
from harness_app.models import Room
from inference.agents.session import LiveContext
from inference.trace import ReplyTrace

log = logging.getLogger(__name__)
PENDING_POLL_S = 0.05
HOOK_BLOCKING_ACTIONS = frozenset({"block", "fallback_reply"})


@dataclass(frozen=True)
class ReplyRequest:
    request_id: str
    uv_id: str
    comment: str
    product_sku: str = ""
    recent_comments: tuple[str, ...] = ()
    extra_context: dict[str, Any] = field(default_factory=dict)

    def context_json(self) -> dict[str, Any]:
        return {
            "product_sku": self.product_sku,
            "recent_comments": list(self.recent_comments),
            **self.extra_context,
        }


def live_reply(
    *,
    room: Room,
    request: ReplyRequest,
    source: str = LiveReply.Source.LIVE,
    choice: ArmChoice | None = None,
) -> LiveReply:
    """Answer one comment, idempotently on ``(room, request_id)``.

    ``choice`` overrides routing (the console's try-it box picks a version and endpoint).
    """
    started = time.perf_counter()
    deadline_s = room.reply_deadline_ms / 1000
    try:
        record = _claim(room, request, source)
    except IntegrityError:
        # A retry (or a concurrent duplicate) of a request we have seen: answer with its reply.
        existing = LiveReply.objects.get(room=room, request_id=request.request_id)
        return _wait_for(existing, started + deadline_s, room)

    try:
        trace, choice = _run(room, request, choice, deadline_s - (time.perf_counter() - started))
        if _unstorable(trace.reply):
            # A model reply with NUL or a lone surrogate is broken output, not for viewers.
            trace.add("fallback", "unstorable_reply", trace.now_ms(), reply=room.fallback_reply)
            trace.finish(room.fallback_reply, fallback_reason="unstorable_reply")
        result = _storable(_result(trace, choice, started))
    except Exception:  # the claimed row must still end done, with the fallback
        log.exception("live reply failed for room %s request %s", room.pk, request.request_id)
        result = _fallback_result(room, choice, started, "runtime_error")
    try:
        # One UPDATE of the claimed row (no save() machinery on the hot path); a savepoint,
        # so a failure leaves a caller's transaction usable for the fallback write.
        with transaction.atomic():
            LiveReply.objects.filter(pk=record.pk).update(**result)
    except Exception:
        log.exception("storing live reply %s failed; storing the fallback", record.pk)
        result = _fallback_result(room, choice, started, "store_error")
        LiveReply.objects.filter(pk=record.pk).update(**result)
    for name, value in result.items():
        setattr(record, name, value)
    return record


def _result(trace: ReplyTrace, choice: ArmChoice | None, started: float) -> dict[str, Any]:
    return {
        **_choice_fields(choice),
        "hook_blocked": hook_blocked(trace),
        "reply": trace.reply,
        "fallback": trace.fallback_used,
        "fallback_reason": trace.fallback_reason,
        "skill": trace.skill or "",
        "model_ms": round(trace.model_ms, 3),
        "ttft_ms": _first_ttft(trace),
        "prompt_tokens": trace.prompt_tokens,
        "completion_tokens": trace.completion_tokens,
        "trace": trace.to_dict(),
        "status": LiveReply.Status.DONE,
        "latency_ms": round((time.perf_counter() - started) * 1000, 3),
        "updated_at": timezone.now(),
    }


def _choice_fields(choice: ArmChoice | None) -> dict[str, Any]:
    return {
        "arm": choice.arm if choice else LiveReply.Arm.HARNESS,
        "harness_version": choice.version if choice else None,
        "endpoint": choice.endpoint if choice else None,
        "experiment_id": choice.experiment_id if choice else None,
        "experiment_arm_id": choice.experiment_arm_id if choice else None,
    }


def _fallback_result(
    room: Room, choice: ArmChoice | None, started: float, reason: str
) -> dict[str, Any]:
    """A result that can always be stored: the room's fallback and a one-step trace."""
    result = _result(_fallback_trace(room, reason), choice, started)
    return _storable(result)


# Characters PostgreSQL text and jsonb cannot hold: NUL, and lone UTF-16 surrogates (which
# do not encode to UTF-8 at all).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _unstorable(text: str) -> bool:
    return _UNSTORABLE.search(text) is not None


def _storable(value: Any) -> Any:
    """``value`` with every string made storable (U+FFFD for each bad character) and
    non-finite floats (which jsonb rejects) written as strings; other values unchanged."""
    if isinstance(value, str):
        return _UNSTORABLE.sub("\ufffd", value) if _unstorable(value) else value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {_storable(k) if isinstance(k, str) else k: _storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_storable(v) for v in value]
    return value


def _claim(room: Room, request: ReplyRequest, source: str) -> LiveReply:
    """Insert the pending row; IntegrityError when (room, request_id) exists. The atomic
    block (a savepoint inside a caller's transaction) keeps that transaction usable after
    the IntegrityError."""
    with transaction.atomic():
        return LiveReply.objects.create(
            room=room,
            request_id=request.request_id,
            uv_id=request.uv_id,
            comment=request.comment,
            context=request.context_json(),
            source=source,
        )


def _run(
    room: Room, request: ReplyRequest, choice: ArmChoice | None, remaining_s: float
) -> tuple[ReplyTrace, ArmChoice | None]:
    try:
        choice = choice or choose_arm(room=room, uv_id=request.uv_id)
        built = build_agent(
            arm=choice.arm, room=room, version=choice.version, endpoint=choice.endpoint
        )
        context = _live_context(room, request, built.gateway)
        return built.agent.reply(request.comment, context, deadline_s=max(0.0, remaining_s)), choice
    except NoServingConfig as exc:
        return _fallback_trace(room, f"not_served: {exc}"), choice
    except Exception:  # the live path never returns a 5xx; the trace says what happened
        log.exception("live reply failed for room %s request %s", room.pk, request.request_id)
        return _fallback_trace(room, "runtime_error"), choice


def _live_context(room: Room, request: ReplyRequest, gateway: Any) -> LiveContext:
    product = gateway.get_product(request.product_sku) if request.product_sku else {}
    found = "error" not in product
    return LiveContext(
        room_name=room.name,
        room_locale=room.locale,
        currency=room.currency,
        product_sku=request.product_sku if found else "",
        product_title=str(product.get("title", "")) if found else "",
        product_price=str(product.get("price", "")) if found else "",
        uv_id=request.uv_id,
        recent_comments=request.recent_comments,
        today=timezone.localdate().isoformat(),
    )


def _fallback_trace(room: Room, reason: str) -> ReplyTrace:
    trace = ReplyTrace(agent="none")
    trace.add("fallback", reason, 0.0, reply=room.fallback_reply)
    return trace.finish(room.fallback_reply, fallback_reason=reason)


def hook_blocked(trace: ReplyTrace) -> bool:
    """A hook stopped the output (``block`` or ``fallback_reply``): the guardrail counts it."""
    return any(
        step.kind == "hook" and step.detail.get("action") in HOOK_BLOCKING_ACTIONS
        for step in trace.steps
    )


def _first_ttft(trace: ReplyTrace) -> float | None:
    for step in trace.steps:
        if step.kind == "model_call" and step.detail.get("ttft_ms") is not None:
            return float(step.detail["ttft_ms"])
    return None


def _wait_for(record: LiveReply, deadline: float, room: Room) -> LiveReply:
    """Return a finished record; while its first request is still running, wait for it."""
    while record.status == LiveReply.Status.PENDING and time.perf_counter() < deadline:
        time.sleep(PENDING_POLL_S)
        record.refresh_from_db()
    if record.status == LiveReply.Status.PENDING:
        # Still running past the deadline: answer with the fallback, store nothing new.
        record.reply = room.fallback_reply
        record.fallback = True
        record.fallback_reason = "pending_duplicate"
    return record
