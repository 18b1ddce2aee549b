"""The trace keeps what was sent to the model (issue #15.3): each model call records the
messages that are new since the call before it and, when they changed, the tool specs, so
the whole request of every call can be rebuilt from the trace alone, without storing the
growing conversation once per call."""

from __future__ import annotations

import json
from typing import Any

from inference.agents.model_port import ModelCallFailed
from inference.agents.session import SENT_MESSAGE_CHARS, LiveContext
from tests.inference.agents import test_harness_agent, test_react_agent
from tests.inference.agents.scripted_model import call, say

CTX = LiveContext(room_name="Autumn Wardrobe Live", product_sku="SW-1001")


def model_calls(trace: Any) -> list[dict[str, Any]]:
    """Each model call's detail with its recorded request (which points at its step)."""
    stored = trace.to_dict()
    steps = stored["steps"]
    calls = [i for i, s in enumerate(steps) if s["kind"] == "model_call"]
    assert [r["step"] for r in stored["requests"]] == calls
    return [steps[r["step"]]["detail"] | r for r in stored["requests"]]


def rebuilt_requests(trace: Any) -> list[list[dict[str, Any]]]:
    """Each call's messages, from the trace: the earlier calls' new messages + its own."""
    so_far: list[dict[str, Any]] = []
    requests = []
    for detail in model_calls(trace):
        assert detail["sent_from"] == len(so_far)
        so_far = so_far + detail["messages"]
        requests.append(so_far)
    return requests


def test_every_request_of_the_harness_agent_can_be_rebuilt(demo_harness: Any) -> None:
    agent, model, _ = test_harness_agent.make_agent(
        demo_harness,
        call("load_skill", name="product-qa"),
        call("get_product", sku="SW-1001"),
        say("The Merino Wool Crew Sweater is $89.00, 100% merino."),
    )
    trace = agent.reply("how much is the sweater?", CTX, deadline_s=5)

    assert rebuilt_requests(trace) == [r["messages"] for r in model.requests]
    calls = model_calls(trace)
    # the system prompt and the viewer's comment come with the first call
    assert [m["role"] for m in calls[0]["messages"]] == ["system", "user"]
    assert calls[0]["messages"][1]["content"] == "how much is the sweater?"
    # later calls add only the assistant's tool call and the tool's answer
    assert [m["role"] for m in calls[1]["messages"]] == ["assistant", "tool"]
    # the tool specs are stored once: they did not change between calls
    assert calls[0]["tools"] == model.requests[0]["tools"] and calls[0]["tools"]
    assert all("tools" not in c for c in calls[1:])
    json.dumps(trace.to_dict())  # stored as JSON


def test_a_failed_call_records_what_it_sent(demo_harness: Any) -> None:
    agent, model, _ = test_harness_agent.make_agent(
        demo_harness, ModelCallFailed("unavailable", "connection refused")
    )
    trace = agent.reply("hi", CTX, deadline_s=5)
    (detail,) = model_calls(trace)
    assert detail["ok"] is False
    assert detail["messages"] == model.requests[0]["messages"]


def test_react_requests_rebuild_and_carry_no_tool_specs(demo_harness: Any) -> None:
    agent, model, _ = test_react_agent.make_agent(
        demo_harness,
        say('Thought: look it up\nAction: get_product\nAction Input: {"sku": "SW-1001"}'),
        say("Final Answer: It is $89.00."),
    )
    trace = agent.reply("price?", CTX, deadline_s=5)
    assert rebuilt_requests(trace) == [r["messages"] for r in model.requests]
    assert all("tools" not in c for c in model_calls(trace))


def test_a_huge_message_is_cut_in_the_trace_not_in_the_request(demo_harness: Any) -> None:
    comment = "x" * (SENT_MESSAGE_CHARS + 500)
    agent, model, _ = test_harness_agent.make_agent(demo_harness, say("Hello!"))
    trace = agent.reply(comment, CTX, deadline_s=5)
    stored = model_calls(trace)[0]["messages"][1]
    assert len(stored["content"]) == SENT_MESSAGE_CHARS and stored["truncated"] == len(comment)
    assert model.requests[0]["messages"][1]["content"] == comment
