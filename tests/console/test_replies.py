"""A room's replies: the list (filters, pagination, flat queries), the trace page with its
timeline, the try-it box, and tenancy (another merchant's replies are 404)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from experiments_app.models import LiveReply
from harness_app import services
from tests.console.conftest import say

pytestmark = pytest.mark.django_db

# A hand-made trace: 1000 ms in all; every number below is checked on the page.
TRACE: dict[str, Any] = {
    "agent": "harness",
    "reply": "The sweater is $89.00 - use AUTUMN20 over $199!",
    "fallback_used": False,
    "fallback_reason": "",
    "skill": "product-qa",
    "prompt_tokens": 120,
    "completion_tokens": 30,
    "model_calls": 2,
    "model_ms": 800.0,
    "total_ms": 1000.0,
    "overhead_ms": 200.0,
    "steps": [
        {
            "kind": "model_call",
            "name": "turn-1",
            "started_ms": 0.0,
            "duration_ms": 400.0,
            "detail": {
                "ok": True,
                "model": "scripted",
                "ttft_ms": 120.5,
                "prompt_tokens": 60,
                "completion_tokens": 10,
                "finish_reason": "tool_calls",
                "content": "",
                "tool_calls": [{"name": "get_product", "arguments": '{"sku": "SW-1001"}'}],
            },
        },
        {
            "kind": "hook",
            "name": "PreToolUse",
            "started_ms": 400.0,
            "duration_ms": 5.0,
            "detail": {
                "action": "allow",
                "hook": None,
                "error": "",
                "evaluated": [{"hook": "no-write-tools", "fired": False, "error": ""}],
            },
        },
        {
            "kind": "tool_call",
            "name": "get_product",
            "started_ms": 405.0,
            "duration_ms": 95.0,
            "detail": {
                "ok": True,
                "arguments": {"sku": "SW-1001"},
                "result": {"sku": "SW-1001", "price": "89.00", "stock": 12},
                "error": None,
            },
        },
        {
            "kind": "retry",
            "name": "price-check",
            "started_ms": 500.0,
            "duration_ms": 0.0,
            "detail": {"attempt": 1, "feedback": "Quote the price from get_product."},
        },
        {
            "kind": "model_call",
            "name": "turn-2",
            "started_ms": 600.0,
            "duration_ms": 400.0,
            "detail": {
                "ok": True,
                "model": "scripted",
                "ttft_ms": 90.0,
                "prompt_tokens": 60,
                "completion_tokens": 20,
                "finish_reason": "stop",
                "content": "The sweater is $89.00",
                "tool_calls": [],
            },
        },
    ],
}


def make_reply(room: Any, n: int = 0, **fields: Any) -> LiveReply:
    defaults: dict[str, Any] = {
        "room": room,
        "request_id": f"r-{n}",
        "uv_id": "uv-1",
        "status": "done",
        "comment": f"How much is the sweater? ({n})",
        "reply": "It is $89.00.",
        "latency_ms": 1234.5,
        "context": {"product_sku": "SW-1001", "recent_comments": ["hi"]},
    }
    return LiveReply.objects.create(**(defaults | fields))


def test_list_shows_replies_newest_first_with_fallback_badges(
    merchant_client: Client, room: Any
) -> None:
    make_reply(room, 1, comment="first comment")
    make_reply(
        room,
        2,
        comment="second comment",
        fallback=True,
        fallback_reason="model_timeout",
        reply="One moment!",
    )
    html = merchant_client.get(reverse("console:reply-list", args=[room.pk])).content.decode()
    assert html.index("second comment") < html.index("first comment")
    assert html.count('class="is-fallback"') == 1
    assert 'title="model_timeout">fallback</span>' in html
    assert "1235 ms" in html  # 1234.5 rounded


def test_list_filters_by_fallback_and_source_and_pages_keep_them(
    merchant_client: Client, room: Any
) -> None:
    for i in range(35):
        make_reply(room, i, source="replay", fallback=i % 5 == 0)
    make_reply(room, 100, source="console", comment="from the console")
    url = reverse("console:reply-list", args=[room.pk])
    only_fallback = merchant_client.get(url + "?fallback=yes").content.decode()
    assert only_fallback.count('class="is-fallback"') == 7
    assert "from the console" not in only_fallback
    console = merchant_client.get(url + "?source=console").content.decode()
    assert "from the console" in console and console.count("<tr") == 2  # header + 1
    no_fallback = merchant_client.get(url + "?fallback=no&source=replay").content.decode()
    assert no_fallback.count("<tr") == 1 + 28  # header + the 28 replays without fallback
    assert no_fallback.count('class="is-fallback"') == 0
    paged = merchant_client.get(url + "?source=replay").content.decode()
    assert "Page 1 of 2" in paged
    assert "?source=replay&amp;page=2" in paged  # the filter survives paging
    assert merchant_client.get(url + "?fallback=maybe").status_code == 200  # ignored


def test_list_query_count_is_flat(
    merchant_client: Client, published_room: Any, django_assert_max_num_queries: Any
) -> None:
    version = published_room.harness.published_version
    from training_app.models import ModelEndpoint

    endpoint = ModelEndpoint.objects.create(name="e", base_url="http://x:1/v1")
    for i in range(20):
        make_reply(published_room, i, harness_version=version, endpoint=endpoint)
    # session, user, groups, room, count, one page with version and endpoint joined
    with django_assert_max_num_queries(6):
        response = merchant_client.get(reverse("console:reply-list", args=[published_room.pk]))
    assert response.status_code == 200
    assert response.content.decode().count(">v1<") == 20


def test_trace_page_shows_totals_and_a_positioned_timeline(
    merchant_client: Client, published_room: Any
) -> None:
    record = make_reply(
        published_room,
        1,
        trace=TRACE,
        model_ms=800.0,
        ttft_ms=120.5,
        prompt_tokens=120,
        completion_tokens=30,
        skill="product-qa",
        harness_version=published_room.harness.published_version,
    )
    html = merchant_client.get(
        reverse("console:reply-detail", args=[published_room.pk, record.pk])
    ).content.decode()
    # totals: latency, model time, runtime overhead (trace.overhead_ms), TTFT, tokens
    assert "1235<small> ms" in html and "800<small> ms" in html and "200<small> ms" in html
    assert "120<small> in</small> · 30<small> out</small>" in html
    assert "121<small> ms" in html  # TTFT 120.5 ms (floatformat rounds half up)
    # one row per step, bars placed by started/duration relative to the 1000 ms total
    assert html.count('class="tl-step"') == 5
    assert "left:0.00%;width:40.00%" in html  # turn-1
    assert "left:40.50%;width:9.50%" in html  # the tool call: 405 ms + 95 ms
    assert "left:50.00%;width:0.40%" in html  # a 0 ms retry still shows a sliver
    assert "left:60.00%;width:40.00%" in html  # turn-2
    assert "kind-tool_call" in html and "kind-hook" in html and "kind-retry" in html
    # expandable detail: pretty JSON of arguments and result, hooks evaluated, feedback
    assert (
        json.dumps({"sku": "SW-1001", "price": "89.00", "stock": 12}, indent=2).replace(
            '"', "&quot;"
        )
        in html
    )
    assert "no-write-tools" in html and "Hooks evaluated" in html
    assert "Quote the price from get_product." in html
    assert "Tool call: get_product" in html
    assert "500 ms" in html and "1000 ms" in html  # axis ticks


def test_a_fallback_trace_shows_its_reason(merchant_client: Client, room: Any) -> None:
    trace = {
        "agent": "none",
        "total_ms": 0.0,
        "overhead_ms": 0.0,
        "steps": [
            {
                "kind": "fallback",
                "name": "not_served: no published harness",
                "started_ms": 0.0,
                "duration_ms": 0.0,
                "detail": {"reply": "Thanks, one moment!"},
            }
        ],
    }
    record = make_reply(
        room,
        1,
        trace=trace,
        fallback=True,
        fallback_reason="not_served: no published harness",
        reply="Thanks, one moment!",
    )
    html = merchant_client.get(
        reverse("console:reply-detail", args=[room.pk, record.pk])
    ).content.decode()
    assert "not_served: no published harness" in html
    assert "Fallback reply" in html and "left:0.00%;width:0.40%" in html


def test_other_merchant_gets_404_on_replies_and_traces(
    other_merchant_client: Client, merchant_client: Client, room: Any, other_room: Any
) -> None:
    record = make_reply(room, 1)
    assert (
        other_merchant_client.get(reverse("console:reply-list", args=[room.pk])).status_code == 404
    )
    assert (
        other_merchant_client.get(
            reverse("console:reply-detail", args=[room.pk, record.pk])
        ).status_code
        == 404
    )
    # nor through their own room's URL
    assert (
        other_merchant_client.get(
            reverse("console:reply-detail", args=[other_room.pk, record.pk])
        ).status_code
        == 404
    )
    assert (
        merchant_client.get(reverse("console:reply-detail", args=[room.pk, record.pk])).status_code
        == 200
    )


# --- try it ------------------------------------------------------------------------------


def test_try_it_runs_the_live_path_and_opens_the_trace(
    merchant_client: Client,
    published_room: Any,
    scripted_server: Any,
    scripted_endpoint: Any,
    merchant: Any,
) -> None:
    scripted_server.enqueue(say("Hello from the scripted host!"))
    published_room.reply_endpoint = scripted_endpoint  # a merchant sees only the room's own
    published_room.save()
    harness = published_room.harness
    page = merchant_client.get(reverse("console:harness-detail", args=[harness.pk]))
    html = page.content.decode()
    assert 'id="try-it"' in html and "v1 (published)" in html and "scripted · student" in html
    assert 'data-running-label="Running…"' in html
    response = merchant_client.post(
        reverse("console:harness-try", args=[harness.pk]),
        {
            "version": "1",
            "endpoint": str(scripted_endpoint.pk),
            "arm": "harness",
            "comment": "Hi there!",
            "product_sku": "NOPE-1",
        },
    )
    record = LiveReply.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse(
        "console:reply-detail", args=[published_room.pk, record.pk]
    )
    assert record.source == "console" and record.request_id.startswith("console-")
    assert record.uv_id == f"console-{merchant.pk}"
    assert record.reply == "Hello from the scripted host!" and not record.fallback
    assert record.endpoint == scripted_endpoint and record.harness_version.number == 1
    assert record.context["product_sku"] == "NOPE-1"  # unknown SKU passed on as-is
    trace_page = merchant_client.get(response["Location"]).content.decode()
    assert "Hello from the scripted host!" in trace_page and "kind-model_call" in trace_page


def test_try_it_can_run_a_draft_on_the_react_agent(
    merchant_client: Client,
    published_room: Any,
    scripted_server: Any,
    scripted_endpoint: Any,
    operator: Any,
    demo_harness: Any,
) -> None:
    harness = published_room.harness
    published_room.reply_endpoint = scripted_endpoint
    published_room.save()
    services.harness_version_create(
        harness=harness, content=demo_harness, base_version=1, author=operator, message="draft"
    )
    scripted_server.enqueue(say("Final Answer: Hello!"))
    response = merchant_client.post(
        reverse("console:harness-try", args=[harness.pk]),
        {
            "version": "2",
            "endpoint": str(scripted_endpoint.pk),
            "arm": "react",
            "comment": "hello",
            "product_sku": "",
        },
    )
    assert response.status_code == 302
    record = LiveReply.objects.get()
    assert (record.arm, record.harness_version.number) == ("react", 2)


@pytest.mark.parametrize(
    ("patch", "field", "message"),
    [
        ({"comment": "   "}, "comment", "This field is required"),
        (
            {"comment": "x" * 41},
            "comment",
            "the comment is 41 characters; this room allows at most 40",
        ),
        ({"version": "7"}, "version", "Select a valid choice"),
        ({"endpoint": "999999"}, "endpoint", "Select a valid choice"),
        ({"arm": "gpt"}, "arm", "Select a valid choice"),
        ({"product_sku": "bad sku!"}, "product_sku", "letters, digits"),
    ],
)
def test_try_it_bad_input_is_a_field_error_and_runs_nothing(
    merchant_client: Client,
    published_room: Any,
    scripted_server: Any,
    scripted_endpoint: Any,
    patch: dict[str, str],
    field: str,
    message: str,
) -> None:
    published_room.max_comment_chars = 40
    published_room.reply_endpoint = scripted_endpoint
    published_room.save()
    data = {
        "version": "1",
        "endpoint": str(scripted_endpoint.pk),
        "arm": "harness",
        "comment": "hello",
        "product_sku": "",
    } | patch
    response = merchant_client.post(
        reverse("console:harness-try", args=[published_room.harness.pk]), data
    )
    assert response.status_code == 400
    html = response.content.decode()
    block = html.split(f'data-field="{field}"')[1].split('data-field="')[0]
    assert message in block
    assert LiveReply.objects.count() == 0 and scripted_server.requests == []


def test_try_it_defaults_to_the_published_version_and_the_rooms_endpoint(
    merchant_client: Client,
    published_room: Any,
    scripted_endpoint: Any,
) -> None:
    from training_app.models import ModelEndpoint

    ModelEndpoint.objects.create(name="aaa-first", base_url="http://x:1/v1")
    published_room.reply_endpoint = scripted_endpoint
    published_room.save()
    html = merchant_client.get(
        reverse("console:harness-detail", args=[published_room.harness.pk])
    ).content.decode()
    assert re.search(r'<option value="1" selected>v1 \(published\)</option>', html)
    assert re.search(rf'<option value="{scripted_endpoint.pk}" selected>scripted', html)


def test_try_it_without_endpoints_says_so(merchant_client: Client, published_room: Any) -> None:
    html = merchant_client.get(
        reverse("console:harness-detail", args=[published_room.harness.pk])
    ).content.decode()
    assert "No active model endpoint" in html and "Ask an operator" in html


def test_other_merchant_cannot_try_on_my_harness(
    other_merchant_client: Client,
    published_room: Any,
    scripted_endpoint: Any,
    scripted_server: Any,
) -> None:
    response = other_merchant_client.post(
        reverse("console:harness-try", args=[published_room.harness.pk]),
        {"version": "1", "endpoint": str(scripted_endpoint.pk), "arm": "harness", "comment": "hi"},
    )
    assert response.status_code == 404
    assert LiveReply.objects.count() == 0 and scripted_server.requests == []


def test_a_pending_reply_without_a_trace_renders(merchant_client: Client, room: Any) -> None:
    record = make_reply(room, 1, status="pending", reply="", latency_ms=None, trace={})
    response = merchant_client.get(reverse("console:reply-detail", args=[room.pk, record.pk]))
    html = response.content.decode()
    assert response.status_code == 200
    assert "no recorded steps yet (still running)" in html
    assert "<small> ms</small>" not in html.split("Runtime overhead")[1].split("</div>")[0]
