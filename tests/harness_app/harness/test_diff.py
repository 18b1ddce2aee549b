from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import given, settings

from harness_app.harness.diff import Change, line_diff, semantic_diff
from harness_app.harness.model import (
    Harness,
    Hook,
    Prompt,
    PromptSection,
    Skill,
    Tool,
    ToolExecutor,
)
from tests.harness_app.harness.strategies import harnesses

PRICE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sku": {"type": "string", "description": "SKU"},
        "currency": {"type": "string", "enum": ["CNY", "USD"]},
    },
    "required": ["sku"],
}
BASE = Harness(
    skills=(Skill("product-qa", "Use when asked.", body="v1", allowed_tools=("get_price",)),),
    tools=(
        Tool(
            "get_price",
            "Price of a SKU.",
            input_schema=PRICE_SCHEMA,
            executor=ToolExecutor(operation="get_product"),
        ),
    ),
    prompt=Prompt(
        sections=(
            PromptSection("persona", "Persona", "Hi {room_name}"),
            PromptSection("rules", "Rules", "Be brief."),
        )
    ),
    hooks=(
        Hook(
            "no-absolute-claims",
            "pre_reply",
            r"(?i)\bbest\b",
            condition_kind="regex",
            feedback="No absolute claims.",
        ),
    ),
)


def describe(old: Harness, new: Harness) -> list[str]:
    return [change.describe() for change in semantic_diff(old, new)]


def with_tool(**changes: Any) -> Harness:
    return dataclasses.replace(BASE, tools=(dataclasses.replace(BASE.tools[0], **changes),))


def with_schema(**changes: Any) -> Harness:
    return with_tool(input_schema={**PRICE_SCHEMA, **changes})


def with_property(name: str, schema: dict[str, Any]) -> Harness:
    return with_schema(properties={**PRICE_SCHEMA["properties"], name: schema})


@settings(max_examples=50, deadline=None)
@given(harnesses())
def test_identical_harnesses_have_no_changes(harness: Harness) -> None:
    assert semantic_diff(harness, harness) == []


def test_skill_added_and_removed() -> None:
    promo = Skill("promo-push", "Use for deals.")
    added = dataclasses.replace(BASE, skills=(*BASE.skills, promo))

    assert describe(BASE, added) == ["skill promo-push added"]
    assert describe(added, BASE) == ["skill promo-push removed"]
    assert semantic_diff(BASE, added) == [Change("skill", "promo-push", "added")]


def test_skill_body_and_allowed_tools() -> None:
    skill = dataclasses.replace(
        BASE.skills[0], body="v2", allowed_tools=("get_price", "check_stock")
    )

    assert describe(BASE, dataclasses.replace(BASE, skills=(skill,))) == [
        "skill product-qa: body changed; allowed tools +check_stock"
    ]


def test_skill_description_and_removed_tool() -> None:
    skill = dataclasses.replace(BASE.skills[0], description="Use for products.", allowed_tools=())

    assert describe(BASE, dataclasses.replace(BASE, skills=(skill,))) == [
        "skill product-qa: description changed; allowed tools -get_price"
    ]


def test_parameter_now_required() -> None:
    assert describe(BASE, with_schema(required=["sku", "currency"])) == [
        "tool get_price: parameter currency now required"
    ]
    assert describe(with_schema(required=["sku", "currency"]), BASE) == [
        "tool get_price: parameter currency no longer required"
    ]


def test_parameter_added_and_removed() -> None:
    properties = {"sku": PRICE_SCHEMA["properties"]["sku"]}
    without_currency = with_schema(properties=properties)

    assert describe(without_currency, BASE) == ["tool get_price: parameter currency added (string)"]
    assert describe(BASE, without_currency) == ["tool get_price: parameter currency removed"]


def test_required_parameter_added_says_so() -> None:
    new = with_schema(
        properties={**PRICE_SCHEMA["properties"], "qty": {"type": "integer"}},
        required=["sku", "qty"],
    )

    assert describe(BASE, new) == ["tool get_price: parameter qty added (integer, required)"]


def test_parameter_type_enum_description_default() -> None:
    assert describe(BASE, with_property("sku", {"type": "integer", "description": "SKU"})) == [
        "tool get_price: parameter sku type string -> integer"
    ]
    assert describe(
        BASE, with_property("currency", {"type": "string", "enum": ["CNY", "EUR"]})
    ) == ["tool get_price: parameter currency enum +EUR -USD"]
    assert describe(BASE, with_property("sku", {"type": "string", "description": "The SKU"})) == [
        "tool get_price: parameter sku description changed"
    ]
    assert describe(BASE, with_property("currency", {"type": "string"})) == [
        "tool get_price: parameter currency enum removed"
    ]
    assert describe(
        BASE, with_property("sku", {"type": "string", "description": "SKU", "default": "A-1"})
    ) == ["tool get_price: parameter sku default none -> A-1"]


def test_other_parameter_and_schema_changes() -> None:
    assert describe(
        BASE, with_property("sku", {"type": "string", "description": "SKU", "minLength": 3})
    ) == ["tool get_price: parameter sku schema changed"]
    assert describe(BASE, with_schema(additionalProperties=False)) == [
        "tool get_price: input schema changed"
    ]


def test_tool_description_executor_and_annotations() -> None:
    new = with_tool(
        description="Current price.",
        executor=ToolExecutor(
            kind="webhook", url="https://x.example/p", timeout_s=3.0, secret_ref="PRICE_SECRET"
        ),
        read_only=False,
        destructive=True,
    )

    assert describe(BASE, new) == [
        "tool get_price: description changed; executor kind catalog -> webhook; "
        "executor operation get_product -> ''; executor url '' -> https://x.example/p; "
        "executor timeout_s 5 -> 3; executor secret_ref '' -> PRICE_SECRET; "
        "read_only true -> false; destructive false -> true"
    ]


def test_prompt_section_changes() -> None:
    persona, rules = BASE.prompt.sections
    edited = dataclasses.replace(
        BASE,
        prompt=Prompt(sections=(persona, dataclasses.replace(rules, template="Be very brief."))),
    )
    retitled = dataclasses.replace(
        BASE, prompt=Prompt(sections=(dataclasses.replace(persona, title="Host persona"), rules))
    )
    added = dataclasses.replace(
        BASE,
        prompt=Prompt(
            sections=(persona, rules, PromptSection("compliance", "Compliance", "No claims."))
        ),
    )

    assert describe(BASE, edited) == ["prompt section rules: template changed"]
    assert describe(BASE, retitled) == [
        "prompt section persona: retitled 'Persona' -> 'Host persona'"
    ]
    assert describe(BASE, added) == ["prompt section compliance added"]
    assert describe(added, BASE) == ["prompt section compliance removed"]


def test_prompt_sections_reordered() -> None:
    persona, rules = BASE.prompt.sections
    swapped = dataclasses.replace(BASE, prompt=Prompt(sections=(rules, persona)))

    assert describe(BASE, swapped) == [
        "prompt: sections reordered (persona, rules -> rules, persona)"
    ]
    assert semantic_diff(BASE, swapped)[0].kind == "reordered"


def test_hook_feedback_changed() -> None:
    hook = dataclasses.replace(BASE.hooks[0], feedback="Rewrite without superlatives.")

    assert describe(BASE, dataclasses.replace(BASE, hooks=(hook,))) == [
        "hook no-absolute-claims: feedback changed"
    ]


def test_hook_every_field() -> None:
    hook = Hook(
        "no-absolute-claims",
        "on_comment",
        "true",
        condition_kind="cel",
        matcher="get_*",
        action="fallback_reply",
        feedback="x",
        fallback_reply="Sorry!",
        max_retries=3,
        timeout_ms=20,
        fail_mode="closed",
    )

    assert describe(BASE, dataclasses.replace(BASE, hooks=(hook,))) == [
        "hook no-absolute-claims: event pre_reply -> on_comment; condition_kind regex -> cel; "
        "condition changed; matcher * -> get_*; action retry_with_feedback -> fallback_reply; "
        "feedback changed; fallback_reply changed; max_retries 1 -> 3; timeout_ms 50 -> 20; "
        "fail_mode open -> closed"
    ]


def test_hooks_skills_and_tools_reordered() -> None:
    second = Hook("short", "pre_reply", "size(reply) > 200", feedback="Shorter.")
    old = dataclasses.replace(BASE, hooks=(*BASE.hooks, second))
    new = dataclasses.replace(BASE, hooks=(second, *BASE.hooks))

    assert describe(old, new) == [
        "hooks: reordered (no-absolute-claims, short -> short, no-absolute-claims)"
    ]


def test_rename_reads_as_removed_plus_added() -> None:
    renamed = dataclasses.replace(BASE, skills=(dataclasses.replace(BASE.skills[0], name="qa"),))

    assert describe(BASE, renamed) == ["skill product-qa removed", "skill qa added"]


def test_demo_harness_diff_against_itself(live_harness: Harness) -> None:
    assert semantic_diff(live_harness, live_harness) == []


# ------------------------------------------------------------------------ text line diffs


def _kinds(lines: Any) -> list[tuple[str, str]]:
    return [(line.kind, line.text) for line in lines]


def test_line_diff_shows_changed_lines_with_context_and_skipped_runs() -> None:
    old = "\n".join(f"line {n}" for n in range(1, 21))
    new = old.replace("line 10", "line ten")
    lines = line_diff(old, new, context=2)
    assert _kinds(lines) == [
        ("skipped", "7"),
        ("same", "line 8"),
        ("same", "line 9"),
        ("removed", "line 10"),
        ("added", "line ten"),
        ("same", "line 11"),
        ("same", "line 12"),
        ("skipped", "8"),
    ]
    removed = next(line for line in lines if line.kind == "removed")
    added = next(line for line in lines if line.kind == "added")
    assert (removed.old_number, removed.new_number) == (10, None)
    assert (added.old_number, added.new_number) == (None, 10)


def test_line_diff_of_added_and_emptied_text() -> None:
    assert _kinds(line_diff("", "a\nb")) == [("added", "a"), ("added", "b")]
    assert _kinds(line_diff("a", "")) == [("removed", "a")]
    assert line_diff("same\n", "same\n") == ()


def test_changes_carry_the_line_diffs_of_bodies_templates_descriptions_and_feedback() -> None:
    old = Harness(
        skills=(Skill("qa", "Use when asked.", body="1. look up\n2. answer"),),
        tools=(Tool("get_price", "Price of a SKU."),),
        prompt=Prompt(sections=(PromptSection("rules", "Rules", "Be brief."),)),
        hooks=(Hook("price", "pre_reply", "true", feedback="Quote the price."),),
    )
    new = Harness(
        skills=(Skill("qa", "Use when asked about a product.", body="1. look up\n2. reply"),),
        tools=(Tool("get_price", "Price of one SKU, with currency."),),
        prompt=Prompt(sections=(PromptSection("rules", "Rules", "Be brief.\nNo emojis."),)),
        hooks=(Hook("price", "pre_reply", "true", feedback="Quote the exact price."),),
    )
    changes = semantic_diff(old, new)
    spelled = {(c.component, d.field): _kinds(d.lines) for c in changes for d in c.text_diffs}
    assert spelled == {
        ("skill", "description"): [
            ("removed", "Use when asked."),
            ("added", "Use when asked about a product."),
        ],
        ("skill", "body"): [
            ("same", "1. look up"),
            ("removed", "2. answer"),
            ("added", "2. reply"),
        ],
        ("tool", "description"): [
            ("removed", "Price of a SKU."),
            ("added", "Price of one SKU, with currency."),
        ],
        ("prompt section", "template"): [("same", "Be brief."), ("added", "No emojis.")],
        ("hook", "feedback"): [
            ("removed", "Quote the price."),
            ("added", "Quote the exact price."),
        ],
    }
    skill_change = next(c for c in changes if c.component == "skill")
    assert skill_change.describe() == "skill qa: description changed; body changed"
    assert skill_change.text_diffs[1].added == 1 and skill_change.text_diffs[1].removed == 1


def test_text_diffs_do_not_change_equality_of_changes() -> None:
    edited = dataclasses.replace(BASE, skills=(dataclasses.replace(BASE.skills[0], body="v2"),))
    (change,) = semantic_diff(BASE, edited)
    assert change == Change("skill", "product-qa", "changed", ("body changed",))
    assert _kinds(change.text_diffs[0].lines) == [("removed", "v1"), ("added", "v2")]


def test_a_huge_text_is_summarised_instead_of_diffed() -> None:
    old_body = "\n".join(f"old {n}" for n in range(3000))
    new_body = "\n".join(f"new {n}" for n in range(2000))
    old = dataclasses.replace(BASE, skills=(dataclasses.replace(BASE.skills[0], body=old_body),))
    new = dataclasses.replace(BASE, skills=(dataclasses.replace(BASE.skills[0], body=new_body),))
    (change,) = semantic_diff(old, new)
    (text,) = change.text_diffs
    assert text.too_large and text.lines == ()
    assert (text.old_line_count, text.new_line_count) == (3000, 2000)
