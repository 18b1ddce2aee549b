"""The demo harness shipped in harness_app/demo_data must always be valid and realistic."""

from __future__ import annotations

from harness_app.harness.conditions import compile_condition
from harness_app.harness.model import Harness
from harness_app.harness.serialization import harness_from_yaml, harness_to_yaml
from harness_app.harness.validation import harness_warnings, validate_harness
from tests.harness_app.harness.conftest import DEMO_HARNESS_PATH


def test_demo_harness_validates_without_errors_or_warnings(live_harness: Harness) -> None:
    assert validate_harness(live_harness) == []
    assert harness_warnings(live_harness) == []


def test_demo_file_is_in_canonical_yaml_form(live_harness: Harness) -> None:
    assert harness_to_yaml(live_harness) == DEMO_HARNESS_PATH.read_text("utf-8")
    assert harness_from_yaml(harness_to_yaml(live_harness)) == live_harness


def test_demo_components(live_harness: Harness) -> None:
    assert [s.name for s in live_harness.skills] == [
        "product-qa",
        "promo-push",
        "size-advice",
        "after-sales",
    ]
    assert [t.name for t in live_harness.tools] == [
        "get_product",
        "check_stock",
        "list_coupons",
        "get_shipping",
    ]
    assert [s.id for s in live_harness.prompt.sections] == ["persona", "rules", "compliance"]
    assert [k.name for k in live_harness.hooks] == [
        "no-absolute-claims",
        "quoted-price-matches-catalog",
    ]
    assert all(
        t.executor.kind == "catalog" and t.executor.operation == t.name for t in live_harness.tools
    )


def test_no_absolute_claims_hook_flags_claims_but_not_materials(live_harness: Harness) -> None:
    hook = live_harness.hook("no-absolute-claims")
    assert hook is not None
    condition = compile_condition(hook.condition_kind, hook.condition, hook.event)

    def fires(reply: str) -> bool:
        return condition.evaluate(
            {
                "reply": reply,
                "comment": "",
                "quoted_prices": [],
                "catalog_prices": [],
                "tool_names": [],
            }
        )

    assert fires("This is the BEST shirt in the room!")
    assert fires("Guaranteed to fit everyone.")
    assert fires("It is 100% effective against wrinkles.")
    assert not fires("It is 100% linen and 129.00 CNY.")
    assert not fires("A bestseller-style cut? No, a classic cut.")


def test_price_hook_retries_twice_then_falls_back(live_harness: Harness) -> None:
    hook = live_harness.hook("quoted-price-matches-catalog")
    assert hook is not None
    condition = compile_condition(hook.condition_kind, hook.condition, hook.event)
    activation = {
        "reply": "Only 99 today!",
        "comment": "price?",
        "quoted_prices": [99.0],
        "catalog_prices": [129.0],
        "tool_names": ["get_product"],
    }

    assert condition.evaluate(activation) is True
    assert (hook.action, hook.max_retries) == ("retry_with_feedback", 2)
    assert hook.fallback_reply.strip()
