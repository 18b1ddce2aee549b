"""Mappings compose like the transforms they record and invert exactly."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_app.hsa.mapping import IDENTITY, RenameMapping
from harness_app.hsa.trajectory import (
    GoldTrajectory,
    ToolCall,
    TrajectoryFormatError,
    trajectory_from_dict,
    trajectory_from_json,
    trajectory_to_dict,
    trajectory_to_json,
)

GOLD = GoldTrajectory(
    skill="product-qa",
    tool_calls=(
        ToolCall("get_product", {"sku": "SKU-1", "size": "M"}),
        ToolCall("check_stock", {"sku": "SKU-1"}),
    ),
    final_answer="In stock.",
)


def test_apply_and_inverse() -> None:
    mapping = RenameMapping(
        skill_renames={"product-qa": "item-faq"},
        tool_renames={"get_product": "fetchItem"},
        param_renames={"get_product": {"sku": "item_code"}, "check_stock": {"sku": "code"}},
    )
    new = mapping.apply(GOLD)
    assert new.skill == "item-faq"
    assert new.tool_calls[0] == ToolCall("fetchItem", {"item_code": "SKU-1", "size": "M"})
    assert new.tool_calls[1] == ToolCall("check_stock", {"code": "SKU-1"})
    assert new.final_answer == GOLD.final_answer
    assert mapping.inverse().apply(new) == GOLD
    assert RenameMapping.from_dict(mapping.to_dict()) == mapping


def test_compose_follows_names_through_both_steps() -> None:
    first = RenameMapping(
        tool_renames={"get_product": "fetch_item"}, param_renames={"get_product": {"sku": "code"}}
    )
    second = RenameMapping(
        tool_renames={"fetch_item": "fetchItem", "check_stock": "query_stock"},
        param_renames={"fetchItem": {}, "fetch_item": {"code": "item_code", "size": "fit"}},
    )
    composed = first.compose(second)
    assert composed.tool_renames == {"get_product": "fetchItem", "check_stock": "query_stock"}
    assert composed.param_renames == {"get_product": {"sku": "item_code", "size": "fit"}}
    assert composed.apply(GOLD) == second.apply(first.apply(GOLD))
    assert composed.inverse().apply(composed.apply(GOLD)) == GOLD


def test_identity() -> None:
    assert IDENTITY.is_identity and IDENTITY.apply(GOLD) is GOLD
    assert IDENTITY.compose(IDENTITY) is IDENTITY


names = st.sampled_from(["a", "b", "c", "d", "e"])


@st.composite
def injective(draw: st.DrawFn, pool: list[str], fresh: str) -> dict[str, str]:
    """Renames of some names in ``pool`` to distinct new names (prefixed ``fresh``, so never
    an existing name, as ``naming.choose_renames`` guarantees)."""
    olds = draw(st.lists(st.sampled_from(pool), unique=True))
    news = draw(
        st.lists(
            st.text("xyz", min_size=1, max_size=3),
            min_size=len(olds),
            max_size=len(olds),
            unique=True,
        )
    )
    return {old: fresh + new for old, new in zip(olds, news, strict=True)}


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_compose_equals_sequential_application(data: st.DataObject) -> None:
    tools = ["t1", "t2"]
    first = RenameMapping(
        skill_renames=data.draw(injective(["s1", "s2"], "A")),
        tool_renames=data.draw(injective(tools, "A")),
        param_renames={t: data.draw(injective(["p", "q", "r"], "A")) for t in tools},
    )
    mid_tools = [first.tool(t) for t in tools]
    second = RenameMapping(
        skill_renames=data.draw(injective([first.skill(s) for s in ("s1", "s2")], "B")),
        tool_renames=data.draw(injective(mid_tools, "B")),
        param_renames={
            t: data.draw(injective([first.param(o, p) for p in ("p", "q", "r")], "B"))
            for o, t in zip(tools, mid_tools, strict=True)
        },
    )
    gold = GoldTrajectory(
        data.draw(st.sampled_from(["s1", "s2"])),
        tuple(
            ToolCall(t, {p: 1 for p in data.draw(st.lists(st.sampled_from("pqr"), unique=True))})
            for t in data.draw(st.lists(st.sampled_from(tools), max_size=3))
        ),
    )
    composed = first.compose(second)
    assert composed.apply(gold) == second.apply(first.apply(gold))
    assert composed.inverse().apply(composed.apply(gold)) == gold


def test_trajectory_json_round_trip() -> None:
    text = trajectory_to_json(GOLD)
    assert trajectory_from_json(text) == GOLD
    assert trajectory_from_dict(trajectory_to_dict(GOLD)) == GOLD


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"skill": 3}, "skill must be a string or null"),
        (
            {"skill": None, "tool_calls": [{"name": "x", "arguments": []}]},
            "arguments must be an object",
        ),
        ({"skill": None, "extra": 1}, "unknown keys: extra"),
        ({"skill": None, "quoted_prices": ["1"]}, "quoted_prices must be a list of numbers"),
    ],
)
def test_bad_trajectory_documents_name_the_field(document: dict[str, object], message: str) -> None:
    with pytest.raises(TrajectoryFormatError, match=message):
        trajectory_from_dict(document)
