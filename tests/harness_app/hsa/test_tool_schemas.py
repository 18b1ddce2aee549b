"""Tool schemas: renames reach every reference, schema edits never change what is accepted."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from harness_app.harness.model import Harness, Hook, Tool
from harness_app.harness.validation import validate_harness
from harness_app.hsa.augment import augment
from harness_app.hsa.policy import AugmentationPolicy
from harness_app.hsa.trajectory import GoldTrajectory, ToolCall
from harness_app.hsa.transforms import transform_named
from harness_app.hsa.transforms.tool_schemas import RESTYLE_OPERATIONS, restyle_schema
from tests.harness_app.harness.strategies import input_schemas


def only(name: str) -> AugmentationPolicy:
    return AugmentationPolicy(name=name, weights=(), k=0, always=(name,))


def test_tool_rename_reaches_allowed_tools_bodies_feedback_and_gold(
    demo: Harness, product_gold: GoldTrajectory
) -> None:
    example = augment(demo, product_gold, only("tool_schemas.rename_tools"), seed=4)
    renames = example.mapping.tool_renames
    assert set(renames) == {t.name for t in demo.tools}
    new_get = renames["get_product"]
    assert [c.name for c in example.trajectory.tool_calls] == [new_get, renames["check_stock"]]
    product_qa = example.harness.skill("product-qa")
    assert product_qa is not None
    assert product_qa.allowed_tools == (new_get, renames["check_stock"])
    assert f"Call {new_get} for that SKU" in product_qa.body
    assert "get_product" not in product_qa.body
    price_hook = example.harness.hook("quoted-price-matches-catalog")
    assert price_hook is not None and new_get in price_hook.feedback
    # catalog executors keep the operation they run
    assert example.harness.tool(new_get).executor.operation == "get_product"  # type: ignore[union-attr]


def test_param_rename_updates_required_and_gold_arguments(
    demo: Harness, shipping_gold: GoldTrajectory
) -> None:
    for seed in range(40):
        example = augment(demo, shipping_gold, only("tool_schemas.rename_params"), seed)
        renames = example.mapping.param_renames.get("get_shipping")
        if not renames:
            continue
        tool = example.harness.tool("get_shipping")
        assert tool is not None
        assert tool.input_schema["required"] == [renames.get(p, p) for p in ("sku", "region")]
        assert set(example.trajectory.tool_calls[0].arguments) == set(tool.input_schema["required"])
        return
    pytest.fail("no seed renamed get_shipping's parameters")


def test_hook_references_follow_or_pin_tool_names(demo: Harness) -> None:
    hooks = (
        Hook("exact", "post_tool_use", 'error != ""', matcher="get_shipping", action="block"),
        Hook("glob", "pre_tool_use", "size(args) > 3", matcher="get_*", action="block"),
        Hook(
            "named", "pre_tool_use", 'tool_name == "check_stock" && !has(args.size)', action="allow"
        ),
        Hook("prefix", "pre_reply", 'tool_names.exists(t, t.startsWith("list_"))', action="allow"),
    )
    harness = Harness(demo.skills, demo.tools, demo.prompt, hooks)
    assert validate_harness(harness) == []
    gold = GoldTrajectory(
        "after-sales", (ToolCall("get_shipping", {"sku": "S-1", "region": "Beijing"}),)
    )
    for seed in range(30):
        example = augment(harness, gold, only("tool_schemas.rename_tools"), seed)
        renames = example.mapping.tool_renames
        new = {h.name: h for h in example.harness.hooks}
        assert new["exact"].matcher == renames.get("get_shipping", "get_shipping")
        assert new["glob"].matcher == "get_*"
        for old, renamed in renames.items():  # the glob selects the same tools
            assert old.startswith("get_") == renamed.startswith("get_")
        assert new["named"].condition == (
            f'tool_name == "{renames.get("check_stock", "check_stock")}" && !has(args.size)'
        )
        assert "list_coupons" not in renames  # pinned by startsWith("list_")


def test_params_a_hook_reads_are_never_renamed(demo: Harness, product_gold: GoldTrajectory) -> None:
    hook = Hook(
        "size-given", "pre_tool_use", "has(args.size)", matcher="check_stock", action="allow"
    )
    harness = Harness(demo.skills, demo.tools, demo.prompt, (hook,))
    for seed in range(30):
        example = augment(harness, product_gold, only("tool_schemas.rename_params"), seed)
        assert "size" not in example.mapping.param_renames.get("check_stock", {})


def test_reorder_params_is_a_permutation(demo: Harness, product_gold: GoldTrajectory) -> None:
    result = transform_named("tool_schemas.reorder_params").apply(
        demo, product_gold, random.Random(1)
    )
    reordered = 0
    for old, new in zip(demo.tools, result.harness.tools, strict=True):
        for key in old.input_schema:
            if key == "required":
                assert sorted(new.input_schema[key]) == sorted(old.input_schema[key])
            else:  # dict equality ignores key order
                assert new.input_schema[key] == old.input_schema[key]
        reordered += list(new.input_schema["properties"]) != list(old.input_schema["properties"])
    assert reordered


@pytest.mark.parametrize(
    "name", ["tool_schemas.optional_params", "tool_schemas.unseen_optional_params"]
)
def test_optional_params_have_defaults_and_are_not_required(
    demo: Harness, product_gold: GoldTrajectory, name: str
) -> None:
    result = transform_named(name).apply(demo, product_gold, random.Random(5))
    added = 0
    for old, new in zip(demo.tools, result.harness.tools, strict=True):
        extra = set(new.input_schema["properties"]) - set(old.input_schema["properties"])
        for param in extra:
            added += 1
            assert "default" in new.input_schema["properties"][param]
            assert param not in new.input_schema.get("required", [])
    assert added >= 1


@pytest.mark.parametrize(
    "name", ["tool_schemas.distractor_tools", "tool_schemas.unseen_distractor_tools"]
)
def test_distractor_tools_are_valid_unreachable_and_unused(
    demo: Harness, product_gold: GoldTrajectory, name: str
) -> None:
    result = transform_named(name).apply(demo, product_gold, random.Random(2))
    added = [t for t in result.harness.tools if demo.tool(t.name) is None]
    assert added
    assert all(t.executor.url.startswith("https://example.invalid/") for t in added)
    assert validate_harness(result.harness) == []
    assert not any(t.name in s.allowed_tools for t in added for s in result.harness.skills)


def test_reworded_descriptions_keep_the_original_text(
    demo: Harness, product_gold: GoldTrajectory
) -> None:
    result = transform_named("tool_schemas.reword_descriptions").apply(
        demo, product_gold, random.Random(0)
    )
    changed = 0
    for old, new in zip(demo.tools, result.harness.tools, strict=True):
        if new.description != old.description:
            changed += 1
            tail = old.description[1:]  # the first letter may be lowered in "Use this to ..."
            assert tail in new.description
    assert changed


def test_pinyin_names_rename_tools_and_params_together(
    demo: Harness, shipping_gold: GoldTrajectory
) -> None:
    example = augment(demo, shipping_gold, only("tool_schemas.pinyin_names"), seed=0)
    call = example.trajectory.tool_calls[0]
    assert call.name == "huoqu_wuliu"
    assert example.mapping.inverse().apply(example.trajectory) == shipping_gold


# ---------------------------------------------------------------------- surface style

_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(-5, 5), st.text(max_size=3)),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def _instances(draw: st.DrawFn, schema: dict[str, Any]) -> dict[str, Any]:
    """Objects that use the schema's property names with arbitrary values (so some validate
    and some do not), plus arbitrary extra keys."""
    names = list(schema.get("properties", {}))
    chosen = draw(st.lists(st.sampled_from(names), unique=True)) if names else []
    instance = {name: draw(_json) for name in chosen}
    instance.update(draw(st.dictionaries(st.text(max_size=2), _json, max_size=2)))
    return instance


BFCL_LIKE = {
    "type": "object",
    "properties": {
        "unit": {"type": "string", "enum": ["seconds"], "default": "seconds"},
        "body": {
            "type": "object",
            "properties": {"mode": {"type": "string", "enum": ["COOL", "DRY"]}},
            "required": ["mode"],
        },
        "ids": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["body"],
}


@settings(max_examples=300, deadline=None)
@given(
    schema=st.one_of(input_schemas(), st.just(BFCL_LIKE)),
    operations=st.sets(st.sampled_from(RESTYLE_OPERATIONS), min_size=1),
    seed=st.integers(0, 2**32),
    data=st.data(),
)
def test_surface_style_accepts_exactly_the_same_instances(
    schema: dict[str, Any], operations: set[str], seed: int, data: st.DataObject
) -> None:
    restyled = restyle_schema(schema, random.Random(seed), frozenset(operations), top=True)
    Draft202012Validator.check_schema(restyled)
    assert restyled["type"] == "object"
    before, after = Draft202012Validator(schema), Draft202012Validator(restyled)
    for _ in range(10):
        instance = data.draw(_instances(schema))
        assert before.is_valid(instance) == after.is_valid(instance), instance


def test_surface_style_examples() -> None:
    rng = random.Random(0)
    typed = restyle_schema(BFCL_LIKE, rng, frozenset({"type_list"}), top=True)
    assert typed["type"] == "object"  # the top level stays a plain "object"
    assert typed["properties"]["unit"]["type"] == ["string"]
    explicit = restyle_schema(BFCL_LIKE, rng, frozenset({"explicit_additional"}), top=True)
    assert explicit["additionalProperties"] is True
    assert explicit["properties"]["body"]["additionalProperties"] is True
    const = restyle_schema(BFCL_LIKE, rng, frozenset({"const"}), top=True)
    assert const["properties"]["unit"] == {
        "type": "string",
        "default": "seconds",
        "const": "seconds",
    }
    untouched = {"type": "object", "properties": {"x": {"type": "string"}}}
    assert restyle_schema(untouched, rng, frozenset({"const"}), top=True) is untouched


def test_schemas_that_reference_their_own_structure_are_not_restyled(
    product_gold: GoldTrajectory,
) -> None:
    schema = {
        "type": "object",
        "$defs": {"s": {"type": "string"}},
        "properties": {"a": {"$ref": "#/$defs/s"}},
    }
    tool = Tool("t_x", "A tool.", schema)
    result = transform_named("tool_schemas.surface_style").apply(
        Harness(tools=(tool,)), GoldTrajectory(None), random.Random(0)
    )
    assert result.harness.tools[0].input_schema is schema
