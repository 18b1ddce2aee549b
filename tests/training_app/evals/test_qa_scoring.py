"""QA rule checks, gold facts and scores on hand-made traces (built with the runtime's own
ReplyTrace, so the shape is the one a real run produces)."""

from __future__ import annotations

from typing import Any

import pytest

from inference.trace import ReplyTrace
from training_app.evals.qa_scoring import (
    CHECKS,
    all_required_passed,
    fact_stated,
    gold_facts,
    item_scores,
    rule_checks,
)
from training_app.pipeline import rewards

PRODUCT = {
    "sku": "SW-1001",
    "title": "Merino Wool Crew Sweater",
    "price": "89.00",
    "material": "100% merino wool",
    "sizes": ["S", "M", "L"],
}
STOCK = {"sku": "SW-1001", "size": "M", "units": 12}
GOLD: dict[str, Any] = {
    "skill": "product-qa",
    "tool_calls": [
        {"name": "get_product", "arguments": {"sku": "SW-1001"}, "result": PRODUCT},
        {"name": "check_stock", "arguments": {"sku": "SW-1001", "size": "M"}, "result": STOCK},
    ],
    "final_answer": "The Merino Wool Crew Sweater is $89.00, 100% merino wool; 12 left in M.",
    "comment": "price and is M in stock?",
    "product_sku": "SW-1001",
    "quoted_prices": [89.0],
    "catalog_prices": [89.0],
}
NO_TOOLS_GOLD: dict[str, Any] = {
    "skill": None,
    "tool_calls": [],
    "final_answer": "No lunch talk on air!",
    "quoted_prices": [],
    "catalog_prices": [],
}
GOOD_REPLY = "It's $89 - the Merino Wool Crew Sweater, 100% merino wool. 12 left in M!"


def trace(
    *,
    skills: tuple[tuple[str, bool], ...] = (("product-qa", True),),
    calls: tuple[tuple[str, dict[str, Any], bool], ...] = (
        ("get_product", {"sku": "SW-1001"}, True),
        ("check_stock", {"sku": "SW-1001", "size": "M"}, True),
    ),
    reply: str = GOOD_REPLY,
    fallback: str = "",
    unreadable: int = 0,
    retries: int = 0,
) -> dict[str, Any]:
    t = ReplyTrace(agent="harness")
    for name, ok in skills:
        t.add("skill_load", name, 0.0, ok=ok)
    for name, arguments, ok in calls:
        result = (PRODUCT if name == "get_product" else STOCK) if ok else {"error": "bad sku"}
        t.add(
            "tool_call",
            name,
            0.0,
            ok=ok,
            arguments=arguments,
            result=result,
            error="" if ok else "tool_error",
        )
    for _ in range(unreadable):
        t.add("error", "unreadable_output", 0.0, problem="no JSON block")
    for attempt in range(retries):
        t.add("retry", "quoted-price-matches-catalog", 0.0, attempt=attempt + 1, feedback="x")
    if fallback:
        t.add("fallback", fallback, 0.0, reply="Please check the product card.")
        return t.finish("Please check the product card.", fallback_reason=fallback).to_dict()
    return t.finish(reply).to_dict()


def by_name(checks: Any) -> dict[str, Any]:
    return {c.name: c for c in checks}


def test_gold_facts_are_the_answer_values_that_come_from_tools() -> None:
    # numbers and short texts of the answer that a tool returned, in order of mention
    assert gold_facts(GOLD) == (
        "Merino Wool Crew Sweater",
        "89.00",
        "100",
        "100% merino wool",
        "12",
        "M",
    )
    # a number in an identifier (SW-1001) and an answer with no tools give none
    assert gold_facts(NO_TOOLS_GOLD) == ()
    shipping = {
        "tool_calls": [
            {
                "name": "get_shipping",
                "arguments": {},
                "result": {"carrier": "SF Express", "delivery_days": "2-4", "region": "Hubei"},
            }
        ],
        "final_answer": "To Hubei in 2-4 days via SF Express (SKU SW-1001).",
    }
    # "2-4" is covered by its numbers; 1001 is glued to the SKU, not a number of the answer
    assert gold_facts(shipping) == ("Hubei", "2", "4", "SF Express")


@pytest.mark.parametrize(
    ("fact", "reply", "stated"),
    [
        ("89.00", "only $89 today", True),
        ("89.00", "only $89.5 today", False),
        ("12", "we have 120 left", False),
        ("SF Express", "ships with sf   express", True),
        ("M", "size M is fine", True),
        ("M", "I'm sure", False),  # short codes match in case, as whole words
        ("Merino Wool", "merino wool-blend", True),
        ("Merino Wool", "merino woolen", False),
    ],
)
def test_fact_stated(fact: str, reply: str, stated: bool) -> None:
    assert fact_stated(fact, reply) is stated


def test_a_correct_answer_passes_every_check_and_scores_one() -> None:
    t = trace()
    checks = rule_checks(t, GOLD, gold_facts(GOLD))
    assert [c.name for c in checks] == [c for c in CHECKS if c != "judge"]
    assert all(c.passed for c in checks), [c for c in checks if not c.passed]
    assert all_required_passed(checks)
    scores = item_scores(t, GOLD)
    assert scores.to_dict() == {
        "accuracy": 1.0,
        "effectiveness": 1.0,
        "tool_rationality": 1.0,
        "skill_selection": 1.0,
    }


def test_scores_are_the_reward_functions() -> None:
    t = trace(calls=(("get_product", {"sku": "SW-1001"}, True),), reply="It is $95.00.")
    scores = item_scores(t, GOLD)
    assert scores.accuracy == rewards.accuracy(t, GOLD) == pytest.approx((0.5 + 0 + 0) / 3)
    assert scores.effectiveness == rewards.effectiveness(t, GOLD)
    assert scores.tool_rationality == rewards.tool_rationality(t, GOLD) == 1.0
    assert scores.skill_selection == rewards.skill_selection(t, GOLD)


def test_each_failure_names_its_check_and_reason() -> None:
    # a wrong skill, a missing call, an invented price, a missing fact
    t = trace(
        skills=(("promo-push", True),),
        calls=(("get_product", {"sku": "SW-1001"}, True),),
        reply="The sweater is $79.00.",
    )
    checks = by_name(rule_checks(t, GOLD, gold_facts(GOLD)))
    assert not checks["skill"].passed and checks["skill"].required
    assert checks["skill"].reason == "product-qa was not loaded (loaded: promo-push)"
    assert not checks["gold_tool_calls"].passed
    assert (
        checks["gold_tool_calls"].reason == 'missing: check_stock {"size": "M", "sku": "SW-1001"}'
    )
    assert not checks["gold_prices_quoted"].passed
    assert checks["gold_prices_quoted"].reason == "not stated: 89.00"
    assert not checks["prices_grounded"].passed
    assert checks["prices_grounded"].reason == "no tool returned 79.00"
    assert not checks["facts_stated"].passed
    assert checks["facts_stated"].reason.startswith("not stated: Merino Wool Crew Sweater, 89.00")
    assert not all_required_passed(checks.values())


def test_informational_checks_do_not_fail_the_item() -> None:
    t = trace(
        skills=(("promo-push", True), ("product-qa", True)),
        calls=(
            ("get_product", {"sku": "SW-1001"}, True),
            ("get_product", {"sku": "NOPE"}, False),
            ("get_product", {"sku": "SW-1001"}, True),
            ("check_stock", {"sku": "SW-1001", "size": "M"}, True),
        ),
        unreadable=1,
        retries=1,
    )
    checks = by_name(rule_checks(t, GOLD, gold_facts(GOLD)))
    assert checks["skill"].passed and checks["skill"].reason == "loaded after promo-push"
    assert not checks["extra_tool_calls"].passed and not checks["extra_tool_calls"].required
    assert "failed: tool_error" in checks["extra_tool_calls"].reason
    assert "not needed" in checks["extra_tool_calls"].reason
    assert not checks["readable"].passed and "no JSON block" in checks["readable"].reason
    assert not checks["hooks_allowed"].passed
    assert checks["hooks_allowed"].reason == "retry by quoted-price-matches-catalog"
    assert all_required_passed(checks.values())


def test_a_fallback_fails_answered_and_every_fact() -> None:
    checks = by_name(
        rule_checks(trace(fallback="hook:quoted-price-matches-catalog"), GOLD, ("12",))
    )
    assert not checks["answered"].passed
    assert checks["answered"].reason == "fallback: hook:quoted-price-matches-catalog"
    assert not checks["facts_stated"].passed
    # the harness's fallback text states no price, so nothing ungrounded is held against it
    assert checks["prices_grounded"].passed


def test_reply_length_and_empty_reply() -> None:
    checks = by_name(rule_checks(trace(reply="x" * 401), GOLD, ()))
    assert not checks["reply_length"].passed
    assert checks["reply_length"].reason == "401 characters (allowed 1-400)"
    checks = by_name(rule_checks(trace(reply=""), GOLD, ()))
    assert not checks["answered"].passed and checks["answered"].reason == "the reply is empty"


def test_no_tool_gold_needs_no_skill_call_or_fact() -> None:
    t = trace(skills=(), calls=(), reply="Let's stay on the sweater!")
    checks = by_name(rule_checks(t, NO_TOOLS_GOLD, gold_facts(NO_TOOLS_GOLD)))
    assert all_required_passed(checks.values())
    assert not checks["skill"].required and not checks["gold_tool_calls"].required
    assert not checks["facts_stated"].required
    # loading a skill anyway is noted, not failed
    t = trace(calls=(), reply="Let's stay on the sweater!")
    checks = by_name(rule_checks(t, NO_TOOLS_GOLD, ()))
    assert not checks["skill"].passed and not checks["skill"].required
    assert all_required_passed(checks.values())
