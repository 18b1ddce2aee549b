"""HSA-RL reward components on hand-made traces (built with the runtime's own ReplyTrace, so
the shape is the one a real rollout produces)."""

from __future__ import annotations

from typing import Any

import pytest

from inference.trace import ReplyTrace
from training_app.pipeline.rewards import (
    COMPONENTS,
    LengthBand,
    accuracy,
    effectiveness,
    length_penalty,
    reasoning_text,
    reward_functions,
    skill_selection,
    tool_rationality,
)

PRODUCT = {"sku": "SW-1001", "title": "Merino Wool Crew Sweater", "price": "89.00"}
GOLD: dict[str, Any] = {
    "skill": "product-qa",
    "tool_calls": [{"name": "get_product", "arguments": {"sku": "SW-1001"}, "result": PRODUCT}],
    "final_answer": "The Merino Wool Crew Sweater is 100% merino wool, and it is $89.00.",
    "comment": "price please",
    "product_sku": "SW-1001",
    "quoted_prices": [89.0],
    "catalog_prices": [89.0],
}
NO_TOOLS_GOLD: dict[str, Any] = {
    "skill": None,
    "tool_calls": [],
    "final_answer": "Thanks for joining!",
    "quoted_prices": [],
    "catalog_prices": [],
}


def trace(
    *,
    skills: tuple[tuple[str, bool], ...] = (("product-qa", True),),
    calls: tuple[tuple[str, dict[str, Any], bool], ...] = (
        ("get_product", {"sku": "SW-1001"}, True),
    ),
    reply: str = "It is $89.00 and made of merino wool.",
    fallback: str = "",
    unreadable: int = 0,
    retries: int = 0,
) -> dict[str, Any]:
    t = ReplyTrace(agent="harness")
    for name, ok in skills:
        t.add("skill_load", name, 0.0, ok=ok)
        if ok:
            t.skill = name
    for name, arguments, ok in calls:
        result = PRODUCT if ok else {"error": "invalid arguments"}
        t.add("tool_call", name, 0.0, ok=ok, arguments=arguments, result=result, error="")
    for _ in range(unreadable):
        t.add("error", "unreadable_output", 0.0, problem="no json")
    for _ in range(retries):
        t.add("hook", "pre_reply", 0.0, action="retry_with_feedback", hook="no-absolute-claims")
        t.add("retry", "no-absolute-claims", 0.0, attempt=1, feedback="no")
    if fallback:
        t.add("fallback", fallback, 0.0, reply="fallback")
        return t.finish(
            "Thanks! Our team will get back to you.", fallback_reason=fallback
        ).to_dict()
    return t.finish(reply).to_dict()


# --- accuracy --------------------------------------------------------------------------------


def test_accuracy_full_marks_for_the_gold_behaviour() -> None:
    assert accuracy(trace(), GOLD) == 1.0


def test_accuracy_partial_and_zero() -> None:
    # Right lookup, price left out: calls 1, gold price 0 -> 0.5.
    assert accuracy(trace(reply="It is made of merino wool."), GOLD) == pytest.approx(0.5)
    # Right lookup, a made-up price: calls 1, gold price 0, stated prices known 0 -> 1/3.
    assert accuracy(trace(reply="Only $79.00 today!"), GOLD) == pytest.approx(1 / 3)
    # No lookup, right price from memory: calls 0, price 1, stated price known (gold catalog) 1.
    assert accuracy(trace(calls=()), GOLD) == pytest.approx(2 / 3)
    # Wrong arguments count as not looked up.
    assert accuracy(trace(calls=(("get_product", {"sku": "JN-3001"}, True),)), GOLD) == (
        pytest.approx(2 / 3)
    )
    assert accuracy(trace(fallback="max_steps"), GOLD) == 0.0


def test_accuracy_without_facts_to_check() -> None:
    assert accuracy(trace(skills=(), calls=(), reply="Welcome!"), NO_TOOLS_GOLD) == 1.0
    assert accuracy(trace(skills=(), calls=(), reply="  "), NO_TOOLS_GOLD) == 0.0


# --- effectiveness ---------------------------------------------------------------------------


def test_effectiveness_rule_checks() -> None:
    assert effectiveness(trace()) == 1.0
    assert effectiveness(trace(unreadable=1)) == pytest.approx(0.75)
    assert effectiveness(trace(retries=1)) == pytest.approx(0.75)
    assert effectiveness(trace(reply="x" * 401)) == pytest.approx(0.75)
    # A fallback fails "the model answered"; the fallback text itself is short.
    assert effectiveness(trace(fallback="hook:no-absolute-claims", retries=1)) == pytest.approx(0.5)


# --- tool rationality ------------------------------------------------------------------------


def test_tool_rationality() -> None:
    assert tool_rationality(trace(), GOLD) == 1.0
    extra = ("list_coupons", {}, True)
    assert tool_rationality(
        trace(calls=(("get_product", {"sku": "SW-1001"}, True), extra)), GOLD
    ) == pytest.approx(0.5)
    repeat = ("get_product", {"sku": "SW-1001"}, True)
    assert tool_rationality(trace(calls=(repeat, repeat)), GOLD) == pytest.approx(0.5)
    invalid = ("get_product", {"sku": "SW-1001"}, False)
    assert tool_rationality(trace(calls=(invalid, repeat)), GOLD) == pytest.approx(0.5)
    assert tool_rationality(trace(calls=()), GOLD) == 0.0
    assert tool_rationality(trace(calls=()), NO_TOOLS_GOLD) == 1.0
    assert tool_rationality(trace(calls=(extra,)), NO_TOOLS_GOLD) == 0.0


# --- skill selection -------------------------------------------------------------------------


def test_skill_selection() -> None:
    assert skill_selection(trace(), GOLD) == 1.0
    assert skill_selection(trace(skills=(("promo-push", True), ("product-qa", True))), GOLD) == 0.5
    assert skill_selection(trace(skills=(("promo-push", True),)), GOLD) == 0.0
    # A failed load of an unknown name does not count as a choice.
    assert skill_selection(trace(skills=(("nope", False), ("product-qa", True))), GOLD) == 1.0
    assert skill_selection(trace(skills=()), GOLD) == 0.0
    assert skill_selection(trace(skills=()), NO_TOOLS_GOLD) == 1.0
    assert skill_selection(trace(), NO_TOOLS_GOLD) == 0.0


# --- length penalty --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        ([100], 0.0),
        ([150], 0.0),
        ([200], 0.0),
        ([50], -0.5),
        ([0], -1.0),
        ([300], -0.5),
        ([600], -1.0),  # floored
        ([150, 50], -0.25),  # averaged over turns
        ([], 0.0),
    ],
)
def test_length_penalty_band(tokens: list[int], expected: float) -> None:
    assert length_penalty(tokens, LengthBand(100, 200)) == pytest.approx(expected)


def test_length_band_validation_and_reasoning_text() -> None:
    with pytest.raises(ValueError, match="low <= high"):
        LengthBand(200, 100)
    assert reasoning_text('I should look it up.\n```json\n{"action": "reply"}\n```') == (
        "I should look it up."
    )
    assert reasoning_text("plain answer") == "plain answer"


# --- TRL wrappers ----------------------------------------------------------------------------


def test_reward_functions_read_rollout_columns() -> None:
    funcs = reward_functions(COMPONENTS, LengthBand(1, 2))
    assert [f.__name__ for f in funcs] == list(COMPONENTS)
    columns = {
        "prompts": ["p", "p"],
        "completions": ["c", "c"],
        "trace": [trace(), trace(calls=())],
        "gold": [GOLD, GOLD],
        "reasoning_tokens": [[1], [4]],
    }
    scores = {f.__name__: f(**columns) for f in funcs}
    assert scores["accuracy"] == [1.0, pytest.approx(2 / 3)]
    assert scores["tool_rationality"] == [1.0, 0.0]
    assert scores["length_penalty"] == [0.0, -1.0]
    # Length penalty off: left out.
    assert [f.__name__ for f in reward_functions(COMPONENTS, None)] == list(COMPONENTS[:-1])
    with pytest.raises(ValueError, match="unknown reward component"):
        reward_functions(["speed"], None)
