"""Hypothesis strategies for (valid harness, consistent gold trajectory) pairs.

Harnesses come from ``tests.harness_app.harness.strategies.harnesses`` (hostile text, odd
names, every hook kind). The gold trajectory picks a skill (or none), calls tools that skill
allows with arguments generated to satisfy each tool's schema, and carries the context hooks
read (comment, prices, tool results), so every draw is a pair ``verify_pair`` accepts.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from harness_app.harness.model import Harness, Tool
from harness_app.hsa.trajectory import GoldTrajectory, ToolCall
from tests.harness_app.harness.strategies import any_text, harnesses

_finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


def _value(draw: st.DrawFn, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if "enum" in schema:
        return draw(st.sampled_from(schema["enum"]))
    if kind == "string":
        return draw(any_text)
    if kind == "integer":
        return draw(st.integers(-(10**6), 10**6))
    if kind == "number":
        minimum = schema.get("minimum")
        if minimum is None:
            return draw(_finite)
        return draw(st.floats(min_value=minimum, allow_nan=False, allow_infinity=False))
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "array":
        item_kind = schema.get("items", {}).get("type")
        items = any_text if item_kind == "string" else st.integers(-100, 100)
        return draw(st.lists(items, max_size=3))
    return None


@st.composite
def arguments_for(draw: st.DrawFn, tool: Tool) -> dict[str, Any]:
    schema = tool.input_schema
    required = set(schema.get("required", []))
    arguments: dict[str, Any] = {}
    for name, sub in schema.get("properties", {}).items():
        if name in required or draw(st.booleans()):
            arguments[name] = _value(draw, sub)
    return arguments


@st.composite
def golds_for(draw: st.DrawFn, harness: Harness) -> GoldTrajectory:
    skill = draw(st.one_of(st.none(), st.sampled_from(harness.skills))) if harness.skills else None
    if skill is not None and skill.allowed_tools:
        callable_tools = [t for t in harness.tools if t.name in skill.allowed_tools]
    else:
        callable_tools = list(harness.tools)
    calls = []
    if callable_tools:
        for tool in draw(st.lists(st.sampled_from(callable_tools), max_size=3)):
            result = draw(st.one_of(st.none(), st.just({"price": 129.0, "stock": 3})))
            calls.append(ToolCall(tool.name, draw(arguments_for(tool)), result))
    prices = st.lists(st.floats(0, 10_000, allow_nan=False), max_size=3).map(tuple)
    return GoldTrajectory(
        skill=None if skill is None else skill.name,
        tool_calls=tuple(calls),
        final_answer=draw(any_text),
        comment=draw(any_text),
        product_sku=draw(st.sampled_from(["", "SKU-1001"])),
        quoted_prices=draw(prices),
        catalog_prices=draw(prices),
    )


@st.composite
def harness_and_gold(draw: st.DrawFn) -> tuple[Harness, GoldTrajectory]:
    harness = draw(harnesses())
    return harness, draw(golds_for(harness))


_REALISTIC_TOOLS = [
    "get_product",
    "check_stock",
    "list_coupons",
    "get_shipping",
    "searchProducts",
    "order.status",
    "GetReviews",
    "fetch-invoice",
]
_REALISTIC_SKILLS = ["product-qa", "promo-push", "size-advice", "after-sales", "order-help"]


@st.composite
def rich_harnesses(draw: st.DrawFn) -> Harness:
    """Harnesses where every reference kind occurs: skill bodies and hook feedback that name
    tools and skills, exact and glob matchers, CEL conditions comparing ``tool_name`` with a
    literal or reading ``args``, numeric thresholds, and parameters on every tool."""
    from harness_app.harness.model import Hook, Prompt, PromptSection, Skill
    from tests.harness_app.harness.strategies import (
        executors,
        input_schemas,
        non_blank_text,
        sections,
        tool_names,
    )

    names = draw(
        st.lists(
            st.one_of(st.sampled_from(_REALISTIC_TOOLS), tool_names),
            min_size=1,
            max_size=4,
            unique=True,
        )
    )
    schemas = draw(
        st.lists(
            input_schemas().filter(lambda s: bool(s["properties"])),
            min_size=len(names),
            max_size=len(names),
        )
    )
    tool_list = [
        Tool(name, draw(non_blank_text), schema, draw(executors))
        for name, schema in zip(names, schemas, strict=True)
    ]
    skill_names = draw(
        st.lists(st.sampled_from(_REALISTIC_SKILLS), min_size=1, max_size=3, unique=True)
    )
    skills = []
    for index, name in enumerate(skill_names):
        allowed = tuple(draw(st.lists(st.sampled_from(names), unique=True, max_size=3)))
        other = skill_names[(index + 1) % len(skill_names)]
        mentioned = draw(st.sampled_from(names))
        body = (
            f"# {name.replace('-', ' ').title()}\n\n"
            f"1. Call {mentioned} for the product on screen.\n"
            f"2. {draw(any_text)}\n"
            f"   {draw(any_text)}\n"
            "3. Answer in at most two sentences.\n\n"
            "Constraints:\n"
            f"- Never guess; hand delivery questions to {other}.\n"
            f"- {draw(any_text)}\n"
        )
        skills.append(
            Skill(
                name, f"Use when a viewer asks about {name}. {draw(any_text)}"[:1024], body, allowed
            )
        )
    target = draw(st.sampled_from(names))
    hook_options = [
        Hook(
            "reply-length",
            "pre_reply",
            f"size(reply) > {draw(st.integers(0, 400))}",
            feedback=f"Too long; use {target} data only.",
        ),
        Hook(
            "named-tool",
            "pre_tool_use",
            f'tool_name == "{target}" && size(args) > 5',
            action="block",
            feedback="Too many arguments.",
        ),
        Hook(
            "exact-matcher",
            "post_tool_use",
            'error != ""',
            matcher=target,
            action="block",
            feedback="The tool failed.",
        ),
        Hook(
            "glob-matcher",
            "pre_tool_use",
            "size(args) > 2",
            matcher=draw(st.sampled_from(["get_*", "*stock", "*.*", "?et*"])),
            action="block",
            feedback="Too many arguments.",
        ),
        Hook(
            "price-check",
            "pre_reply",
            "quoted_prices.exists(p, p > 1000.5)",
            feedback="Check the price.",
        ),
    ]
    hook_list = draw(
        st.lists(st.sampled_from(hook_options), max_size=4, unique_by=lambda h: h.name)
    )
    section_list = draw(st.lists(sections, max_size=3, unique_by=lambda s: s.id))
    section_list.append(
        PromptSection("rules-x", "How to answer", f"Prefer {target}.\n{{tools}}\n{{skills}}")
    )
    return Harness(tuple(skills), tuple(tool_list), Prompt(tuple(section_list)), tuple(hook_list))


@st.composite
def rich_harness_and_gold(draw: st.DrawFn) -> tuple[Harness, GoldTrajectory]:
    harness = draw(rich_harnesses())
    return harness, draw(golds_for(harness))
