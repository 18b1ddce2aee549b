"""POST /api/v1/live/reply end to end over HTTP to a scripted OpenAI-compatible server:
idempotency, deadlines, outages and bad input, none of which may produce a 5xx."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from experiments_app.models import LiveReply
from harness_app import services
from harness_app.models import Coupon
from tests.inference.scripted_server import Hang, ScriptedServer, SseReply, chunk
from training_app.models import ModelEndpoint

pytestmark = pytest.mark.django_db
URL = "/api/v1/live/reply"


def say(text: str) -> SseReply:
    return SseReply(
        [
            chunk(role="assistant", content=text),
            chunk(
                finish_reason="stop",
                usage={"prompt_tokens": 50, "completion_tokens": 8, "total_tokens": 58},
            ),
        ]
    )


def tool(tool_name: str, **args: object) -> SseReply:
    call = [
        {
            "index": 0,
            "id": f"call_{tool_name}",
            "type": "function",
            "function": {"name": tool_name, "arguments": json.dumps(args)},
        }
    ]
    return SseReply([chunk(role="assistant", tool_calls=call), chunk(finish_reason="tool_calls")])


@pytest.fixture
def live_room(published_room):  # type: ignore[no-untyped-def]
    services.products_import(
        room=published_room,
        fmt="json",
        data=json.dumps(
            [{"sku": "SW-1001", "title": "Merino Wool Crew Sweater", "price": "89.00", "stock": 12}]
        ).encode(),
    )
    Coupon.objects.create(
        room=published_room,
        code="AUTUMN20",
        description="20 off 199",
        amount="20.00",
        threshold="199.00",
    )
    return published_room


@pytest.fixture
def server(live_room):  # type: ignore[no-untyped-def]
    with ScriptedServer() as srv:
        endpoint = ModelEndpoint.objects.create(
            name="scripted", base_url=srv.base_url, model_name="scripted-model", timeout_s=5
        )
        live_room.reply_endpoint = endpoint
        live_room.save()
        yield srv


def key_client(room, scopes=("reply",)) -> APIClient:  # type: ignore[no-untyped-def]
    _, raw = services.api_key_create(
        room=room, name="backend", scopes=list(scopes), created_by=None
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def body(room, request_id="r-1", comment="How much is the sweater?", **extra):  # type: ignore[no-untyped-def]
    return {
        "request_id": request_id,
        "room": room.pk,
        "uv_id": "uv-9",
        "comment": comment,
        "context": {"product_sku": "SW-1001", "recent_comments": ["hi!"]},
    } | extra


def test_reply_runs_the_published_harness_over_http(live_room, server):
    server.enqueue(
        tool("load_skill", name="product-qa"),
        tool("get_product", sku="SW-1001"),
        say("The sweater is $89.00."),
    )
    response = key_client(live_room).post(URL, body(live_room), format="json")
    assert response.status_code == 200, response.json()
    data = response.json()
    assert data["reply"] == "The sweater is $89.00."
    assert (data["arm"], data["harness_version"], data["fallback"]) == ("harness", 1, False)
    record = LiveReply.objects.get(pk=data["trace_id"])
    assert (
        record.skill == "product-qa" and record.prompt_tokens == 50 and record.ttft_ms is not None
    )
    tool_steps = [s for s in record.trace["steps"] if s["kind"] == "tool_call"]
    assert tool_steps[0]["detail"]["result"]["price"] == "89.00"
    # the live context reached the model: product on screen in the system prompt
    system = server.requests[0].body["messages"][0]["content"]
    assert "Merino Wool Crew Sweater" in system and "SW-1001" in system


def test_retry_with_same_request_id_returns_the_same_reply_without_a_model_call(live_room, server):
    server.enqueue(say("Hello there!"))
    client = key_client(live_room)
    first = client.post(URL, body(live_room), format="json").json()
    calls = len(server.requests)
    second = client.post(URL, body(live_room), format="json").json()
    assert second == first
    assert len(server.requests) == calls
    assert LiveReply.objects.filter(room=live_room).count() == 1


def test_model_hang_is_answered_with_the_fallback_within_the_deadline(live_room, server):
    live_room.reply_deadline_ms = 600
    live_room.fallback_reply = "One moment, checking!"
    live_room.save()
    server.enqueue(Hang(seconds=3))
    response = key_client(live_room).post(URL, body(live_room), format="json")
    assert response.status_code == 200
    data = response.json()
    assert (data["reply"], data["fallback"]) == ("One moment, checking!", True)
    assert data["fallback_reason"] == "model_timeout"
    assert data["latency_ms"] < 1500


def test_model_outage_is_a_fallback_not_a_5xx(live_room):
    endpoint = ModelEndpoint.objects.create(
        name="down", base_url="http://127.0.0.1:9/v1", model_name="x", timeout_s=1
    )
    live_room.reply_endpoint = endpoint
    live_room.save()
    response = key_client(live_room).post(URL, body(live_room), format="json")
    assert response.status_code == 200
    assert response.json()["fallback"] is True
    assert response.json()["fallback_reason"] == "model_unavailable"


def test_room_without_published_harness_falls_back(room, other_room):
    response = key_client(room).post(URL, body(room), format="json")
    assert response.status_code == 200
    assert response.json()["fallback"] is True
    assert response.json()["fallback_reason"].startswith("not_served")


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"comment": "   "}, "comment"),
        ({"request_id": "has spaces"}, "request_id"),
        ({"uv_id": ""}, "uv_id"),
        ({"context": {"recent_comments": "not a list"}}, "context.recent_comments"),
    ],
)
def test_bad_input_is_400_naming_the_field(live_room, patch, field):  # type: ignore[no-untyped-def]
    response = key_client(live_room).post(URL, body(live_room) | patch, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == field
    assert LiveReply.objects.count() == 0


def test_over_long_comment_uses_the_rooms_limit(live_room):
    live_room.max_comment_chars = 20
    live_room.save()
    response = key_client(live_room).post(URL, body(live_room, comment="x" * 21), format="json")
    assert response.status_code == 400
    assert "at most 20" in response.json()["errors"][0]["message"]


def test_unknown_room_and_other_rooms_key_are_404(live_room, other_room):
    assert (
        key_client(live_room)
        .post(URL, body(live_room) | {"room": 999999}, format="json")
        .status_code
        == 404
    )
    assert key_client(other_room).post(URL, body(live_room), format="json").status_code == 404


def test_events_only_key_cannot_ask_for_replies(live_room):
    assert (
        key_client(live_room, scopes=("events",))
        .post(URL, body(live_room), format="json")
        .status_code
        == 403
    )


def test_session_users_cannot_call_the_live_api(live_room, operator_api):
    assert operator_api.post(URL, body(live_room), format="json").status_code in (401, 403)
