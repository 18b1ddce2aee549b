"""Webhook tools on the live path, end to end: the room's own secret signs the call (never
an environment variable, never another room's secret), internal addresses are refused, and
a webhook that hangs is cut off by the room's deadline, not by its own timeout_s."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from harness_app import services
from harness_app.harness.model import Tool, ToolExecutor
from harness_app.models import Harness
from tests.experiments_app.test_live_reply_api import URL, body, key_client, say, tool
from tests.inference.scripted_server import ScriptedServer
from training_app.models import ModelEndpoint

pytestmark = pytest.mark.django_db
SECRET_A = "room-a-signing-secret-0123456789"
LOOPBACK = ["127.0.0.1/32"]


class Receiver(BaseHTTPRequestHandler):
    calls: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        ts = self.headers["X-HAT-Timestamp"]
        mac = hmac.new(SECRET_A.encode(), f"{ts}.".encode() + raw, hashlib.sha256).hexdigest()
        Receiver.calls.append(
            {"path": self.path, "signed_by_a": self.headers["X-HAT-Signature"] == f"sha256={mac}"}
        )
        if self.path == "/hang":
            time.sleep(5)
        payload = json.dumps({"eta_days": 2, "internal": "db-password=hunter2"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def receiver() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    httpd.daemon_threads = True
    httpd.handle_error = lambda request, address: None  # type: ignore[method-assign]
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def eta_tool(url: str, secret_ref: str = "ETA_SECRET", timeout_s: float = 30.0) -> Tool:
    return Tool(
        name="eta",
        description="Delivery ETA for a region",
        input_schema={
            "type": "object",
            "properties": {"region": {"type": "string"}},
            "required": ["region"],
        },
        executor=ToolExecutor(kind="webhook", url=url, timeout_s=timeout_s, secret_ref=secret_ref),
    )


def publish_with(room, demo_harness, operator, extra: Tool):  # type: ignore[no-untyped-def]
    harness = Harness.objects.get(room=room)
    latest = harness.versions.order_by("-number").first()
    content = dataclasses.replace(demo_harness, tools=(*demo_harness.tools, extra))
    version = services.harness_version_create(
        harness=harness,
        content=content,
        base_version=latest.number if latest else None,
        author=operator,
        message="with eta webhook",
    )
    services.harness_version_publish(version=version)
    return version


@pytest.fixture
def model(published_room) -> Iterator[ScriptedServer]:  # type: ignore[no-untyped-def]
    with ScriptedServer() as srv:
        endpoint = ModelEndpoint.objects.create(
            name="scripted", base_url=srv.base_url, model_name="scripted-model", timeout_s=5
        )
        published_room.reply_endpoint = endpoint
        published_room.save()
        yield srv


def tool_steps(data: dict[str, Any]) -> list[dict[str, Any]]:
    from experiments_app.models import LiveReply

    trace = LiveReply.objects.get(pk=data["trace_id"]).trace
    return [s for s in trace["steps"] if s["kind"] == "tool_call"]


@override_settings(HAT_WEBHOOK_ALLOWED_NETWORKS=LOOPBACK)
def test_the_rooms_own_secret_signs_the_call(  # type: ignore[no-untyped-def]
    published_room, demo_harness, operator, receiver, model, monkeypatch
):
    # given room A's secret, and an environment variable of the same name with another value
    monkeypatch.setenv("ETA_SECRET", "from-the-server-environment")
    services.webhook_secret_create(
        room=published_room, name="ETA_SECRET", value=SECRET_A, created_by=None
    )
    publish_with(published_room, demo_harness, operator, eta_tool(f"{receiver}/ok"))
    model.enqueue(tool("eta", region="Zhejiang"), say("About 2 days."))
    # when a viewer asks
    data = key_client(published_room).post(URL, body(published_room), format="json").json()
    # then the webhook was signed with the room's secret, and the trace never holds it
    assert data["reply"] == "About 2 days."
    assert Receiver.calls[-1] == {"path": "/ok", "signed_by_a": True}
    assert tool_steps(data)[0]["detail"]["result"]["eta_days"] == 2
    assert SECRET_A not in json.dumps(data) and SECRET_A not in json.dumps(tool_steps(data))


@override_settings(HAT_WEBHOOK_ALLOWED_NETWORKS=LOOPBACK)
def test_a_secret_of_room_a_is_never_usable_from_room_b(  # type: ignore[no-untyped-def]
    published_room, other_room, demo_harness, operator, receiver, monkeypatch
):
    # given room A holds ETA_SECRET, room B does not (but the server environment does)
    monkeypatch.setenv("ETA_SECRET", SECRET_A)
    services.webhook_secret_create(
        room=published_room, name="ETA_SECRET", value=SECRET_A, created_by=None
    )
    harness_b = Harness.objects.get(room=other_room)
    content = dataclasses.replace(
        demo_harness, tools=(*demo_harness.tools, eta_tool(f"{receiver}/ok"))
    )
    version = services.harness_version_create(
        harness=harness_b, content=content, base_version=None, author=operator
    )
    # then room B cannot publish a harness naming it ...
    with pytest.raises(services.PublishBlocked) as refused:
        services.harness_version_publish(version=version)
    index = len(demo_harness.tools)
    assert [e.path for e in refused.value.errors] == [f"tools[{index}].executor.secret_ref"]
    # ... and at run time room B's resolver does not find it either
    from experiments_app.agent_factory import build_agent
    from training_app.models import ModelEndpoint as Endpoint

    endpoint = Endpoint.objects.create(name="x", base_url="http://127.0.0.1:9/v1")
    built = build_agent(arm="harness", room=other_room, version=version, endpoint=endpoint)
    calls = len(Receiver.calls)
    outcome = built.agent.tools.run("eta", {"region": "X"})
    assert outcome.result == {"error": "webhook secret 'ETA_SECRET' does not exist in this room"}
    assert len(Receiver.calls) == calls


def test_an_internal_webhook_is_refused_and_its_answer_never_reaches_the_trace(  # type: ignore[no-untyped-def]
    published_room, demo_harness, operator, receiver, model
):
    # given a harness saved while loopback was allowed, served after the allow-list is gone
    services.webhook_secret_create(
        room=published_room, name="ETA_SECRET", value=SECRET_A, created_by=None
    )
    with override_settings(HAT_WEBHOOK_ALLOWED_NETWORKS=LOOPBACK):
        publish_with(published_room, demo_harness, operator, eta_tool(f"{receiver}/ok"))
    model.enqueue(tool("eta", region="X"), say("I cannot check that right now."))
    calls = len(Receiver.calls)
    data = key_client(published_room).post(URL, body(published_room), format="json").json()
    # then the connect-time check refused it: nothing reached the receiver, and the merchant's
    # trace holds the refusal, not the internal service's answer
    assert len(Receiver.calls) == calls
    step = tool_steps(data)[0]["detail"]
    assert step["result"] == {
        "error": "webhook address not allowed: it is (or resolves to) an internal or reserved "
        "address"
    }
    assert "hunter2" not in json.dumps(data) and "eta_days" not in json.dumps(tool_steps(data))


@override_settings(HAT_WEBHOOK_ALLOWED_NETWORKS=LOOPBACK)
def test_a_hanging_webhook_is_cut_off_by_the_room_deadline(  # type: ignore[no-untyped-def]
    published_room, demo_harness, operator, receiver, model
):
    # given a webhook allowed 30 s in a room that promises an answer within 1.5 s
    published_room.reply_deadline_ms = 1500
    published_room.fallback_reply = "One moment, checking!"
    published_room.save()
    services.webhook_secret_create(
        room=published_room, name="ETA_SECRET", value=SECRET_A, created_by=None
    )
    client: APIClient = key_client(published_room)
    # a first request pays this process's one-time costs (lazy imports, URL conf, the first
    # webhook's TLS/crypto set-up): ~1.7 s when this test runs first. A server pays them at
    # start; the deadline promise is about every reply after that, so warm up first.
    publish_with(published_room, demo_harness, operator, eta_tool(f"{receiver}/fast"))
    model.enqueue(tool("eta", region="X"), say("Two days."))
    warm = client.post(URL, body(published_room, request_id="warm-up"), format="json")
    assert warm.status_code == 200 and warm.json()["reply"] == "Two days."
    publish_with(published_room, demo_harness, operator, eta_tool(f"{receiver}/hang"))
    model.enqueue(tool("eta", region="X"), say("never reached"))
    # when the webhook hangs
    started = time.perf_counter()
    response = client.post(URL, body(published_room), format="json")
    elapsed = time.perf_counter() - started
    # then the reply is the fallback, within the deadline + 100 ms, and the tool timed out
    data = response.json()
    assert response.status_code == 200
    assert (data["reply"], data["fallback"]) == ("One moment, checking!", True)
    assert elapsed < 1.5 + 0.1, elapsed
    assert data["latency_ms"] < 1600
    error = tool_steps(data)[0]["detail"]["result"]["error"]
    assert error.startswith("webhook timed out after 1.") and "reply deadline" in error
