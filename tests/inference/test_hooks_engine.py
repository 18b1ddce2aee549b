"""HooksEngine: matchers, first firing hook decides, fail-open/closed on errors and budget."""

from __future__ import annotations

import dataclasses
import time

import pytest

from harness_app.harness.model import Hook
from inference.hooks_engine import HooksEngine


def hook(**kw):  # type: ignore[no-untyped-def]
    base = {
        "name": "h",
        "event": "pre_tool_use",
        "condition": "true",
        "action": "block",
        "feedback": "no",
    }
    return Hook(**(base | kw))


def test_matcher_limits_tool_hooks_to_matching_tools():
    engine = HooksEngine((hook(matcher="get_ship*"),))
    assert (
        engine.run("pre_tool_use", {"tool_name": "get_product", "args": {}}, "get_product").action
        == "allow"
    )
    assert (
        engine.run("pre_tool_use", {"tool_name": "get_shipping", "args": {}}, "get_shipping").action
        == "block"
    )


def test_first_firing_hook_decides_in_order():
    engine = HooksEngine(
        (
            hook(name="quiet", condition="false", action="block"),
            hook(
                name="first",
                condition="tool_name == 'get_product'",
                action="retry_with_feedback",
                feedback="retry",
            ),
            hook(name="second", condition="true", action="block"),
        )
    )
    decision = engine.run("pre_tool_use", {"tool_name": "get_product", "args": {}}, "get_product")
    assert (decision.action, decision.hook, decision.feedback) == (
        "retry_with_feedback",
        "first",
        "retry",
    )
    assert [e["hook"] for e in decision.evaluated] == ["quiet", "first"]


@pytest.mark.parametrize(("fail_mode", "expected"), [("open", "allow"), ("closed", "block")])
def test_runtime_condition_error_follows_fail_mode(fail_mode, expected):  # type: ignore[no-untyped-def]
    # a missing map key is a data-dependent error: it compiles, then fails at run time
    engine = HooksEngine((hook(condition="args['size'] == 'XL'", fail_mode=fail_mode),))
    decision = engine.run(
        "pre_tool_use", {"tool_name": "check_stock", "args": {"sku": "A"}}, "check_stock"
    )
    assert decision.action == expected
    assert "condition error" in decision.evaluated[0]["error"]


def test_regex_deny_list_on_reply():
    engine = HooksEngine(
        (
            Hook(
                name="claims",
                event="pre_reply",
                condition=r"(?i)\bbest\b",
                condition_kind="regex",
                action="retry_with_feedback",
                feedback="no absolute claims",
                max_retries=1,
            ),
        )
    )
    base = {"comment": "", "quoted_prices": [], "catalog_prices": [], "tool_names": []}
    assert (
        engine.run("pre_reply", base | {"reply": "The BEST coat"}).action == "retry_with_feedback"
    )
    assert engine.run("pre_reply", base | {"reply": "A warm coat"}).action == "allow"


def test_price_hook_compares_quoted_and_catalog_prices(demo_harness):
    engine = HooksEngine(demo_harness.hooks)
    base = {"comment": "", "tool_names": ["get_product"], "reply": "It is $89.00"}
    ok = engine.run("pre_reply", base | {"quoted_prices": [89.0], "catalog_prices": [89.0]})
    bad = engine.run("pre_reply", base | {"quoted_prices": [79.0], "catalog_prices": [89.0]})
    assert ok.action == "allow"
    assert (bad.action, bad.hook) == ("retry_with_feedback", "quoted-price-matches-catalog")


# --- time is enforced during evaluation (issue 9) ---------------------------------------------

SLOW = "quoted_prices.all(x, catalog_prices.exists(y, x == y + 0.5))"  # cheap by the estimate
PRICES = [float(i) for i in range(3000)]


def slow_reply_hooks(fail_mode: str) -> tuple[Hook, ...]:
    return tuple(
        Hook(
            name=f"slow-{i}",
            event="pre_reply",
            condition=SLOW,
            action="fallback_reply",
            fallback_reply="One moment!",
            fail_mode=fail_mode,  # type: ignore[arg-type]
            timeout_ms=1000,
        )
        for i in range(3)
    )


def reply_activation() -> dict[str, object]:
    return {
        "reply": "It is $1.00",
        "comment": "",
        "quoted_prices": PRICES,
        "catalog_prices": PRICES,
        "tool_names": [],
    }


@pytest.mark.parametrize(
    ("fail_mode", "expected"), [("open", "allow"), ("closed", "fallback_reply")]
)
def test_conditions_are_stopped_at_the_replys_deadline_and_decided_by_fail_mode(
    fail_mode: str, expected: str
) -> None:
    # Three hooks that would each run for seconds, timeout_ms 1000, 0.05 s left of the reply:
    # the issue measured 12.8 s against a 3 s deadline. Now each is stopped at its limit.
    # (0.05 s, well under the 20,000-step budget's 0.1-0.2 s, so the time limit is what stops
    # it on a fast machine too.)
    engine = HooksEngine(slow_reply_hooks(fail_mode))
    started = time.perf_counter()
    decision = engine.run("pre_reply", reply_activation(), deadline=started + 0.05)
    elapsed = time.perf_counter() - started
    assert decision.action == expected
    assert elapsed < 0.15
    errors = [e["error"] for e in decision.evaluated]
    assert "condition stopped after its time limit" in str(errors[0])
    if fail_mode == "open":  # every hook was tried; once the deadline passed, none evaluated
        assert len(errors) == 3
        assert errors[-1] == "not evaluated: the reply's deadline passed"


def test_timeout_ms_stops_a_condition_without_any_deadline() -> None:
    hooks = (dataclasses.replace(slow_reply_hooks("closed")[0], timeout_ms=50),)
    started = time.perf_counter()
    decision = HooksEngine(hooks).run("pre_reply", reply_activation())
    assert time.perf_counter() - started < 0.15
    assert decision.action == "fallback_reply"
    assert "timeout_ms 50" in str(decision.evaluated[0]["error"])
