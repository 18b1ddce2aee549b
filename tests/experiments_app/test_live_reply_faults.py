"""Issue 9's target: every fault a model, a hook condition, a tool schema or a webhook can
produce, replayed through POST /api/v1/live/reply with a room key on a 1.5 s room deadline.
Every reply answers 200 with its fallback within deadline + 100 ms, and no reply row is left
pending. Everything runs on 127.0.0.1 in-process servers."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from rest_framework.test import APIClient

from experiments_app.models import LiveReply
from experiments_app.services import live_replies
from harness_app import services
from harness_app.harness.model import Harness as HarnessContent
from harness_app.harness.model import Hook, Tool, ToolExecutor
from tests.inference.scripted_server import (
    Hang,
    JsonReply,
    ScriptedServer,
    SseReply,
    Step,
    Trickle,
    chunk,
)
from training_app.models import ModelEndpoint

pytestmark = pytest.mark.django_db
URL = "/api/v1/live/reply"
DEADLINE_MS = 1500
SLACK_S = 0.1
FALLBACK = "One moment, our host will answer you shortly!"
WEBHOOK_SECRET_REF = "FAULTS_WEBHOOK_SECRET"
REDOS_PATTERN = r"^(a+)+$"
# Cheap by the save-time estimate, but over 3,000 quoted prices it would run for minutes.
SLOW_CONDITION = "quoted_prices.exists(x, quoted_prices.exists(y, x == y + 0.5))"


# --- a local webhook that fails ---------------------------------------------------------------


class _FailingWebhook:
    """``/hang`` sleeps (until the test ends) before answering; ``/500`` answers 500."""

    def __init__(self) -> None:
        self.stopping = threading.Event()
        stopping = self.stopping

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path == "/hang":
                    stopping.wait(10)
                payload = b'{"error": "internal"}'
                try:
                    self.send_response(500)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass  # the caller gave up

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def url(self, path: str) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}{path}"

    def __enter__(self) -> _FailingWebhook:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()


# --- the room ---------------------------------------------------------------------------------


def _fault_harness(demo: HarnessContent, webhook: _FailingWebhook) -> HarnessContent:
    def webhook_tool(name: str, path: str) -> Tool:
        return Tool(
            name,
            "Ask the shop's order system.",
            {"type": "object", "properties": {"q": {"type": "string"}}},
            ToolExecutor(
                kind="webhook", url=webhook.url(path), timeout_s=5.0, secret_ref=WEBHOOK_SECRET_REF
            ),
        )

    redos_tool = Tool(
        "lookup_code",
        "Look up a promotion code.",
        {"type": "object", "properties": {"code": {"type": "string", "pattern": REDOS_PATTERN}}},
        ToolExecutor(kind="catalog", operation="get_product"),
    )
    # Stopped at timeout_ms (open: skipped), then at the reply's deadline (open: skipped),
    # then not evaluated at all past the deadline (closed: fires its fallback).
    slow_hooks = tuple(
        Hook(
            name=f"slow-{i}",
            event="pre_reply",
            condition=SLOW_CONDITION,
            action="fallback_reply",
            fallback_reply=FALLBACK,
            fail_mode="closed" if i == 2 else "open",
            timeout_ms=1000,
        )
        for i in range(3)
    )
    return dataclasses.replace(
        demo,
        tools=(
            *demo.tools,
            redos_tool,
            webhook_tool("order_status", "/500"),
            webhook_tool("order_history", "/hang"),
        ),
        hooks=(*slow_hooks, *demo.hooks),
    )


@pytest.fixture
def webhook() -> Iterator[_FailingWebhook]:
    with _FailingWebhook() as running:
        yield running


@pytest.fixture
def model() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


@pytest.fixture
def fault_room(room, operator, demo_harness, webhook, model, settings):  # type: ignore[no-untyped-def]
    # The failing webhook listens on loopback, which the default address policy refuses.
    settings.HAT_WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    services.webhook_secret_create(
        room=room, name=WEBHOOK_SECRET_REF, value="faults-test-secret-value", created_by=None
    )
    version = services.harness_version_create(
        harness=room.harness,
        content=_fault_harness(demo_harness, webhook),
        base_version=None,
        author=operator,
        message="faults",
    )
    services.harness_version_publish(version=version)
    room.reply_endpoint = ModelEndpoint.objects.create(
        name="faulty", base_url=model.base_url, model_name="scripted-model", timeout_s=5
    )
    room.reply_deadline_ms = DEADLINE_MS
    room.fallback_reply = FALLBACK
    room.save()
    # One ordinary reply first: a process's first request pays for lazy imports and caches
    # (about a second here) before the view starts the reply's clock; a gunicorn worker
    # pays it once, at its first request, not per reply.
    model.enqueue(_say("Hello!"))
    warm = _client(room).post(
        URL,
        {"request_id": "warm-up", "room": room.pk, "uv_id": "uv-0", "comment": "hi"},
        format="json",
    )
    assert (warm.status_code, warm.json()["fallback"]) == (200, False), warm.json()
    return room


def _client(room) -> APIClient:  # type: ignore[no-untyped-def]
    _, raw = services.api_key_create(room=room, name="backend", scopes=["reply"], created_by=None)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


# --- model answers ----------------------------------------------------------------------------


def _say(text: str) -> SseReply:
    return SseReply([chunk(role="assistant", content=text), chunk(finish_reason="stop")])


def _call(tool_name: str, **args: object) -> SseReply:
    call = {
        "index": 0,
        "id": f"call_{tool_name}",
        "type": "function",
        "function": {"name": tool_name, "arguments": json.dumps(args)},
    }
    return SseReply([chunk(role="assistant", tool_calls=[call]), chunk(finish_reason="tool_calls")])


MEGABYTE = b"x" * (1024 * 1024)
MANY_PRICES = " ".join(f"${i}.00" for i in range(3000))

# (model script, expected fallback_reason; "|" separates accepted alternatives)
FAULTS: dict[str, tuple[list[Step], str]] = {
    "model-hangs": ([Hang(seconds=5)], "model_timeout"),
    "sse-comment-trickle": ([Trickle(b": keep-alive\n", count=400, delay_s=0.02)], "model_timeout"),
    "slow-bytes-no-newline": ([Trickle(b"d", count=400, delay_s=0.02)], "model_timeout"),
    "50-mb-body": ([Trickle(MEGABYTE, count=50)], "model_protocol"),
    "malformed-json-chunk": ([SseReply(["{not json"])], "model_protocol"),
    "http-500": ([JsonReply({"error": {"message": "boom"}}, status=500)], "model_unavailable"),
    "http-503-every-time": ([JsonReply({}, status=503)] * 3, "model_unavailable"),
    "nul-in-reply": ([_say("Sure!\u0000 It is in stock.")], "unstorable_reply"),
    "lone-surrogate-in-reply": ([_say("Sure! \ud800")], "unstorable_reply"),
    "nul-in-tool-arguments": ([_call("get_product", sku="SW\u00001001"), Hang(5)], "model_timeout"),
    "slow-cel-hooks": ([_say(f"Prices today: {MANY_PRICES}")], "hook:slow-2"),
    "redos-tool-argument": ([_call("lookup_code", code="a" * 32 + "!"), Hang(5)], "model_timeout"),
    "webhook-500": ([_call("order_status", q="A-1"), Hang(5)], "model_timeout"),
    # A webhook capped at the time left ends the reply at the deadline itself ("deadline"),
    # or leaves a moment for the next model call ("model_timeout"); either is the fallback.
    "webhook-hangs": ([_call("order_history", q="A-1"), Hang(5)], "deadline|model_timeout"),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_every_fault_is_a_fallback_within_the_deadline(fault_room, model, fault: str) -> None:  # type: ignore[no-untyped-def]
    script, reason = FAULTS[fault]
    model.enqueue(*script)
    client = _client(fault_room)
    payload = {
        "request_id": f"fault-{fault}",
        "room": fault_room.pk,
        "uv_id": "uv-1",
        "comment": "Is the sweater in stock?",
        "context": {"product_sku": "SW-1001"},
    }
    started = time.perf_counter()
    response = client.post(URL, payload, format="json")
    elapsed = time.perf_counter() - started

    assert response.status_code == 200
    data = response.json()
    assert (data["reply"], data["fallback"]) == (FALLBACK, True)
    assert data["fallback_reason"] in reason.split("|")
    assert elapsed < DEADLINE_MS / 1000 + SLACK_S, f"{fault}: {elapsed:.3f} s"
    record = LiveReply.objects.get(pk=data["trace_id"])
    assert record.status == LiveReply.Status.DONE
    assert not LiveReply.objects.filter(status=LiveReply.Status.PENDING).exists()


def test_unstorable_text_is_stored_sanitized_in_the_trace(fault_room, model) -> None:  # type: ignore[no-untyped-def]
    model.enqueue(_say("Sure!\u0000 \ud800 It is in stock."))
    payload = {"request_id": "nul", "room": fault_room.pk, "uv_id": "uv-1", "comment": "stock?"}
    data = _client(fault_room).post(URL, payload, format="json").json()
    record = LiveReply.objects.get(pk=data["trace_id"])
    said = [s for s in record.trace["steps"] if s["kind"] == "model_call"]
    assert said[0]["detail"]["content"] == "Sure!\ufffd \ufffd It is in stock."
    assert record.trace["steps"][-1]["name"] == "unstorable_reply"
    assert (record.reply, record.fallback_reason) == (FALLBACK, "unstorable_reply")


def test_a_failed_result_write_still_ends_the_row_with_the_fallback(
    fault_room, model, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    # Take away the sanitizer: the UPDATE with U+0000 in the trace fails in PostgreSQL, and
    # the minimal fallback result is written instead of leaving the claim pending.
    monkeypatch.setattr(live_replies, "_storable", lambda value: value)
    model.enqueue(_call("get_product", sku="SW\u00001001"), _say("It is in stock."))
    payload = {"request_id": "store", "room": fault_room.pk, "uv_id": "uv-1", "comment": "stock?"}
    response = _client(fault_room).post(URL, payload, format="json")
    assert response.status_code == 200
    data = response.json()
    assert (data["reply"], data["fallback"], data["fallback_reason"]) == (
        FALLBACK,
        True,
        "store_error",
    )
    record = LiveReply.objects.get(request_id="store")
    assert (record.status, record.reply, record.fallback_reason) == (
        LiveReply.Status.DONE,
        FALLBACK,
        "store_error",
    )
