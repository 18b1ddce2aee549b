"""HarnessAgent loop, deterministic: skills on demand, schema-checked tools, hooks with
retries and fallbacks, deadlines. The model is scripted; the harness is the real demo one."""

from __future__ import annotations

import dataclasses

import pytest

from harness_app.harness.model import Hook
from inference.agents.harness_agent import HarnessAgent
from inference.agents.model_port import ModelCallFailed
from inference.agents.session import AgentConfig, LiveContext, catalog_prices, quoted_prices
from inference.tools.runner import ToolRunner
from tests.inference.agents.catalog_double import DictCatalog
from tests.inference.agents.scripted_model import ScriptedModel, call, raw_call, say

CTX = LiveContext(
    room_name="Autumn Wardrobe Live",
    product_sku="SW-1001",
    product_title="Merino Wool Crew Sweater",
    product_price="89.00",
)


def make_agent(harness, *script, **config):  # type: ignore[no-untyped-def]
    catalog = DictCatalog()
    model = ScriptedModel(*script)
    agent = HarnessAgent(
        model=model,
        harness=harness,
        tools=ToolRunner(harness.tools, catalog, lambda ref: None),
        config=AgentConfig(**config),
    )
    return agent, model, catalog


def kinds(trace):  # type: ignore[no-untyped-def]
    return [(s.kind, s.name) for s in trace.steps]


def test_happy_path_loads_skill_then_tool_then_replies(demo_harness):
    agent, model, catalog = make_agent(
        demo_harness,
        call("load_skill", name="product-qa"),
        call("get_product", sku="SW-1001"),
        say("The Merino Wool Crew Sweater is $89.00, 100% merino."),
    )
    trace = agent.reply("how much is the sweater?", CTX, deadline_s=5)
    assert trace.reply == "The Merino Wool Crew Sweater is $89.00, 100% merino."
    assert not trace.fallback_used
    assert trace.skill == "product-qa"
    assert catalog.calls == [("get_product", {"sku": "SW-1001"})]
    assert kinds(trace) == [
        ("model_call", "step 1"),
        ("skill_load", "product-qa"),
        ("model_call", "step 2"),
        ("tool_call", "get_product"),
        ("model_call", "step 3"),
        ("hook", "pre_reply"),
    ]
    assert trace.model_calls == 3 and trace.prompt_tokens == 30 and trace.completion_tokens == 15
    # the skill body reached the model only after it was selected
    first_system = model.requests[0]["messages"][0]["content"]
    assert (
        "product-qa" in first_system
        and "Work out which product the viewer means" not in first_system
    )
    assert "Work out which product the viewer means" in model.requests[1]["messages"][-1]["content"]


def test_schema_violating_arguments_become_an_error_observation(demo_harness):
    agent, model, catalog = make_agent(
        demo_harness,
        call("check_stock", sku="SW-1001", size="XXXL"),
        call("check_stock", sku="SW-1001", size="M"),
        say("Size M has 28 left."),
    )
    trace = agent.reply("is XXXL in stock?", CTX, deadline_s=5)
    assert catalog.calls == [("check_stock", {"sku": "SW-1001", "size": "M"})]
    observation = model.requests[1]["messages"][-1]
    assert observation["role"] == "tool" and "invalid arguments" in observation["content"]
    assert "size" in observation["content"] and "XXXL" in observation["content"]
    assert trace.reply == "Size M has 28 left."


def test_malformed_argument_json_is_reported_to_the_model(demo_harness):
    agent, model, catalog = make_agent(
        demo_harness,
        raw_call("get_product", '{"sku": "SW-1001"'),
        say("Checking."),
    )
    trace = agent.reply("price?", CTX, deadline_s=5)
    assert catalog.calls == []
    assert "not valid JSON" in model.requests[1]["messages"][-1]["content"]
    assert trace.reply == "Checking."


def test_wrong_price_triggers_retry_with_feedback_then_passes(demo_harness):
    agent, model, _ = make_agent(
        demo_harness,
        call("get_product", sku="SW-1001"),
        say("Only $79.00 today!"),
        say("It is $89.00."),
    )
    trace = agent.reply("price?", CTX, deadline_s=5)
    assert trace.reply == "It is $89.00." and not trace.fallback_used
    retries = [s for s in trace.steps if s.kind == "retry"]
    assert [(s.name, s.detail["attempt"]) for s in retries] == [("quoted-price-matches-catalog", 1)]
    assert "does not appear in any tool result" in model.requests[2]["messages"][-1]["content"]


def test_exhausted_retries_fall_back_to_the_hooks_reply(demo_harness):
    agent, _, _ = make_agent(
        demo_harness,
        call("get_product", sku="SW-1001"),
        say("Only $79.00!"),
        say("Now $78.00!"),
        say("Just $77.00!"),
    )
    trace = agent.reply("price?", CTX, deadline_s=5)
    hook = demo_harness.hook("quoted-price-matches-catalog")
    assert trace.fallback_used and trace.fallback_reason == "hook:quoted-price-matches-catalog"
    assert trace.reply == hook.fallback_reply
    assert len([s for s in trace.steps if s.kind == "retry"]) == hook.max_retries


def test_absolute_claim_is_rewritten(demo_harness):
    agent, _, _ = make_agent(
        demo_harness,
        say("This is the best sweater ever."),
        say("This sweater is soft merino wool."),
    )
    trace = agent.reply("is it good?", CTX, deadline_s=5)
    assert trace.reply == "This sweater is soft merino wool."
    assert [s.name for s in trace.steps if s.kind == "retry"] == ["no-absolute-claims"]


def test_model_outage_gives_the_configured_fallback(demo_harness):
    agent, _, _ = make_agent(
        demo_harness,
        ModelCallFailed("unavailable", "connection refused"),
        fallback_reply="One moment please!",
    )
    trace = agent.reply("hi", CTX, deadline_s=5)
    assert trace.reply == "One moment please!"
    assert trace.fallback_reason == "model_unavailable"


def test_deadline_bounds_the_model_call_and_falls_back(demo_harness):
    agent, model, _ = make_agent(demo_harness, ("sleep", 5.0))
    trace = agent.reply("hi", CTX, deadline_s=0.3)
    assert trace.fallback_reason == "model_timeout"
    assert model.requests[0]["timeout_s"] <= 0.3
    assert trace.total_ms < 1000


def test_steps_are_bounded(demo_harness):
    loop = [call("get_product", sku="SW-1001")] * 3
    harness = dataclasses.replace(demo_harness, hooks=())
    agent, _, _ = make_agent(harness, *loop, max_steps=3)
    trace = agent.reply("price?", CTX, deadline_s=5)
    assert trace.fallback_reason == "max_steps"


def test_unknown_skill_is_an_error_observation(demo_harness):
    agent, model, _ = make_agent(demo_harness, call("load_skill", name="no-such"), say("Hi!"))
    trace = agent.reply("hi", CTX, deadline_s=5)
    assert "unknown skill" in model.requests[1]["messages"][-1]["content"]
    assert trace.skill is None


def test_pre_tool_use_block_hook_keeps_the_tool_from_running(demo_harness):
    block = Hook(
        name="no-shipping-quotes",
        event="pre_tool_use",
        matcher="get_ship*",
        condition="true",
        action="block",
        feedback="Shipping is handled by after-sales.",
    )
    harness = dataclasses.replace(demo_harness, hooks=(block,))
    agent, model, catalog = make_agent(
        harness,
        call("get_shipping", sku="SW-1001", region="Zhejiang"),
        say("Please ask customer service."),
    )
    trace = agent.reply("how long to ship?", CTX, deadline_s=5)
    assert catalog.calls == []
    assert "blocked by no-shipping-quotes" in model.requests[1]["messages"][-1]["content"]
    assert trace.reply == "Please ask customer service."


def test_on_comment_fallback_hook_answers_without_the_model(demo_harness):
    gate = Hook(
        name="no-phone-numbers",
        event="on_comment",
        condition=r"\d{11}",
        condition_kind="regex",
        action="fallback_reply",
        fallback_reply="Please use the private chat for personal details.",
    )
    harness = dataclasses.replace(demo_harness, hooks=(gate,))
    agent, model, _ = make_agent(harness)
    trace = agent.reply("call me at 13800138000", CTX, deadline_s=5)
    assert model.requests == []
    assert trace.reply == "Please use the private chat for personal details."
    assert trace.fallback_reason == "hook:no-phone-numbers"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It is $89.00.", [89.0]),
        ("Only 89 USD", [89.0]),
        ("¥ 199", [199.0]),
        ("Size M fits 160-170 cm", []),
        ("20 off orders over 199", []),
    ],
)
def test_quoted_prices(text, expected):  # type: ignore[no-untyped-def]
    assert quoted_prices(text) == expected


def test_catalog_prices_reads_nested_money_fields():
    result = {"price": "89.00", "coupons": [{"amount": "20.00", "threshold": 199}], "stock": 5}
    assert sorted(catalog_prices(result)) == [20.0, 89.0, 199.0]


def test_text_mode_reads_action_blocks_and_plain_prose(demo_harness):
    block = (
        '```json\n{"action": "call_tool", "tool": "get_product", '
        '"arguments": {"sku": "SW-1001"}}\n```'
    )
    agent, model, catalog = make_agent(
        demo_harness, say(block), say("It is $89.00."), tool_mode="text"
    )
    trace = agent.reply("price?", CTX, deadline_s=5)
    assert catalog.calls == [("get_product", {"sku": "SW-1001"})]
    assert trace.reply == "It is $89.00." and not trace.fallback_used
    assert model.requests[0]["tools"] is None
    assert '"action"' in model.requests[0]["messages"][0]["content"]  # the format is explained
    assert model.requests[1]["messages"][-1]["content"].startswith("Observation from get_product")


def test_text_mode_malformed_block_is_traced_and_corrected(demo_harness):
    agent, model, _ = make_agent(
        demo_harness,
        say('```json\n{"action": "call_tool", "tool": }\n```'),
        say("Hello!"),
        tool_mode="text",
    )
    trace = agent.reply("hi", CTX, deadline_s=5)
    errors = [s for s in trace.steps if s.kind == "error"]
    assert [s.name for s in errors] == ["unreadable_output"]
    assert "could not be read" in model.requests[1]["messages"][-1]["content"]
    assert trace.reply == "Hello!"
