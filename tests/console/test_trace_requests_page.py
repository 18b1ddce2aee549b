"""The reply page shows what was sent to the model (issue #15.3): for each model call its new
messages (system prompt, the viewer's comment, tool calls and tool results, hook feedback)
and the tool specs, collapsed in <details>, rebuilt from the trace's ``requests``."""

from __future__ import annotations

import html as html_lib
import re
from typing import Any

from django.test import Client
from django.urls import reverse

from console.templatetags.trace_requests import sent_to_model
from inference.agents.session import LiveContext
from tests.console.test_replies import TRACE, make_reply
from tests.inference.agents import test_harness_agent
from tests.inference.agents.scripted_model import call, say

CTX = LiveContext(room_name="Autumn Wardrobe Live", product_sku="SW-1001")


def agent_trace(demo_harness: Any) -> tuple[dict[str, Any], Any]:
    agent, model, _ = test_harness_agent.make_agent(
        demo_harness,
        call("load_skill", name="product-qa"),
        call("get_product", sku="SW-1001"),
        say("The Merino Wool Crew Sweater is $89.00, 100% merino."),
    )
    trace = agent.reply("how much is the sweater?", CTX, deadline_s=5)
    return trace.to_dict(), model


def test_the_page_lists_every_call_s_messages_collapsed(
    merchant_client: Client, room: Any, demo_harness: Any
) -> None:
    # given a reply whose trace a real agent loop wrote (three model calls)
    trace, model = agent_trace(demo_harness)
    reply = make_reply(room, 1, trace=trace)

    # when
    response = merchant_client.get(reverse("console:reply-detail", args=[room.pk, reply.pk]))
    page = response.content.decode()

    # then one collapsed <details> per call, each naming its timeline step
    section = page[page.index('id="sent-to-model"') :]
    calls = re.findall(r'<details class="sent-call" id="sent-(\d+)">', section)
    assert calls == ["1", "2", "3"]
    assert "<details open" not in section
    steps = [i + 1 for i, s in enumerate(trace["steps"]) if s["kind"] == "model_call"]
    assert re.findall(r'href="#step-(\d+)">timeline step', section) == [str(n) for n in steps]
    # the first call carries the system prompt (the whole of it) and the comment
    system_prompt = model.requests[0]["messages"][0]["content"]
    assert html_lib.escape(system_prompt) in section
    assert "how much is the sweater?" in section
    # tool specs once, by name, with their JSON schema
    tool_names = [t["function"]["name"] for t in model.requests[0]["tools"]]
    assert section.count("Tool specs (") == 1
    assert f"Tool specs ({len(tool_names)})" in section
    assert all(f"<h4>{name}</h4>" in section for name in tool_names)
    # later calls: what was already sent, and the new assistant tool call + tool answer
    assert "2 earlier messages + 2 new" in section and "4 earlier messages + 2 new" in section
    assert "<h4>Tool call: get_product</h4>" in section
    assert section.count('badge badge-scope">tool</span>') == 2


def test_sent_to_model_rebuilds_each_request(demo_harness: Any) -> None:
    trace, model = agent_trace(demo_harness)
    calls = sent_to_model(trace)
    so_far: list[tuple[str, str]] = []
    for sent, request in zip(calls, model.requests, strict=True):
        assert sent.earlier == len(so_far)
        so_far += [(m.role, m.content) for m in sent.messages]
        expected = [(m["role"], m["content"] or "") for m in request["messages"]]
        assert so_far == expected
    assert [m.index for c in calls for m in c.messages] == list(range(1, len(so_far) + 1))


def test_an_older_trace_without_requests_says_so(merchant_client: Client, room: Any) -> None:
    reply = make_reply(room, 2, trace=TRACE)
    page = merchant_client.get(
        reverse("console:reply-detail", args=[room.pk, reply.pk])
    ).content.decode()
    assert "stored before the console recorded what was sent to the model" in page
    assert sent_to_model(TRACE) == [] and sent_to_model(None) == []
