"""ReActAgent: the control arm's text protocol, tool use, bounds and fallbacks."""

from __future__ import annotations

from inference.agents.model_port import ModelCallFailed
from inference.agents.react_agent import ReActAgent, parse_react
from inference.agents.session import AgentConfig, LiveContext
from inference.tools.runner import ToolRunner
from tests.inference.agents.catalog_double import DictCatalog
from tests.inference.agents.scripted_model import ScriptedModel, say

CTX = LiveContext(room_name="Autumn Wardrobe Live", product_sku="SW-1001", product_title="Sweater")


def make_agent(harness, *script, **config):  # type: ignore[no-untyped-def]
    catalog = DictCatalog()
    model = ScriptedModel(*script)
    agent = ReActAgent(
        model=model,
        system_prompt="You are a live host. Use ReAct.",
        tools=harness.tools,
        runner=ToolRunner(harness.tools, catalog, lambda ref: None),
        config=AgentConfig(**config),
    )
    return agent, model, catalog


def test_parse_react_action_and_final():
    step = parse_react('Thought: look it up\nAction: get_product\nAction Input: {"sku": "SW-1001"}')
    assert (step.kind, step.tool, step.arguments) == ("action", "get_product", {"sku": "SW-1001"})
    assert parse_react("Thought: done\nFinal Answer: It is $89.00.").text == "It is $89.00."
    hallucinated = parse_react(
        'Action: get_product\nAction Input: {"sku": "A"}\nObservation: x\nFinal Answer: y'
    )
    assert hallucinated.kind == "action"
    assert parse_react("Action: get_product\nAction Input: sku=A").kind == "invalid"
    assert parse_react("I think so").kind == "invalid"


def test_react_loop_uses_tools_without_skills_or_hooks(demo_harness):
    agent, model, catalog = make_agent(
        demo_harness,
        say('Thought: need the price\nAction: get_product\nAction Input: {"sku": "SW-1001"}'),
        say("Thought: got it\nFinal Answer: The best sweater, only $79.00!"),
    )
    trace = agent.reply("price?", CTX, deadline_s=5)
    # no hooks in the control arm: the absolute claim and wrong price go out as written
    assert trace.reply == "The best sweater, only $79.00!"
    assert catalog.calls == [("get_product", {"sku": "SW-1001"})]
    assert model.requests[0]["tools"] is None
    system = model.requests[0]["messages"][0]["content"]
    assert "get_product" in system and "load_skill" not in system and "product-qa" not in system
    assert model.requests[1]["messages"][-1]["content"].startswith("Observation: {")


def test_invalid_turns_get_a_correcting_observation_and_steps_are_bounded(demo_harness):
    agent, model, _ = make_agent(
        demo_harness, say("hmm"), say("hmm"), max_steps=2, fallback_reply="One moment!"
    )
    trace = agent.reply("hi", CTX, deadline_s=5)
    assert "Final Answer" in model.requests[1]["messages"][-1]["content"]
    assert (trace.reply, trace.fallback_reason) == ("One moment!", "max_steps")


def test_schema_invalid_action_is_an_error_observation(demo_harness):
    agent, model, catalog = make_agent(
        demo_harness,
        say('Action: check_stock\nAction Input: {"sku": "SW-1001", "size": "huge"}'),
        say("Final Answer: Let me check."),
    )
    agent.reply("stock?", CTX, deadline_s=5)
    assert catalog.calls == []
    assert "invalid arguments" in model.requests[1]["messages"][-1]["content"]


def test_model_timeout_falls_back(demo_harness):
    agent, _, _ = make_agent(
        demo_harness, ModelCallFailed("timeout", "slow"), fallback_reply="Soon!"
    )
    trace = agent.reply("hi", CTX, deadline_s=5)
    assert (trace.reply, trace.fallback_reason, trace.fallback_used) == (
        "Soon!",
        "model_timeout",
        True,
    )
