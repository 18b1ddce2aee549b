from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_app.harness.errors import FieldError, HarnessValidationError
from harness_app.harness.model import Harness, Skill
from harness_app.harness.skill_md import parse_skill_md, render_skill_md
from tests.harness_app.harness.strategies import harnesses

SKILL = Skill(
    name="product-qa",
    description="Answer product questions. Use when a viewer asks about a product.",
    body="# Product Q&A\n\n1. Call get_product.\n2. Answer briefly.\n",
    allowed_tools=("get_product", "check_stock"),
)


def parse_errors(text: str) -> list[FieldError]:
    with pytest.raises(HarnessValidationError) as caught:
        parse_skill_md(text)
    return caught.value.errors


def test_render_writes_frontmatter_then_body() -> None:
    assert render_skill_md(SKILL) == (
        "---\n"
        "name: product-qa\n"
        "description: Answer product questions. Use when a viewer asks about a product.\n"
        "allowed-tools:\n"
        "  - get_product\n"
        "  - check_stock\n"
        "---\n"
        "# Product Q&A\n\n1. Call get_product.\n2. Answer briefly.\n"
    )


def test_no_allowed_tools_key_when_there_are_none() -> None:
    text = render_skill_md(Skill("qa", "Use when asked.", body="Body"))

    assert text == "---\nname: qa\ndescription: Use when asked.\n---\nBody"


@settings(max_examples=50, deadline=None)
@given(harnesses())
def test_round_trip_preserves_every_generated_skill(harness: Harness) -> None:
    for skill in harness.skills:
        assert parse_skill_md(render_skill_md(skill)) == skill


@settings(max_examples=50, deadline=None)
@given(st.text(st.characters(codec="utf-8")))
def test_body_is_preserved_byte_for_byte(body: str) -> None:
    skill = Skill("qa", "Use when: 'quoted' # not a comment\n---", body=body)

    assert parse_skill_md(render_skill_md(skill)).body == body


def test_body_with_frontmatter_like_lines_is_preserved() -> None:
    body = "\n---\nname: not-frontmatter\n---\n  indented\r\ntrailing   "
    skill = Skill("qa", "Use when asked.", body=body)

    assert parse_skill_md(render_skill_md(skill)) == skill


def test_parse_accepts_space_separated_allowed_tools() -> None:
    text = (
        "---\nname: qa\ndescription: Use when asked.\nallowed-tools: get_product check_stock\n---\n"
    )

    assert parse_skill_md(text).allowed_tools == ("get_product", "check_stock")


def test_parse_accepts_crlf_delimiters() -> None:
    text = "---\r\nname: qa\r\ndescription: Use when asked.\r\n---\r\nBody\r\n"

    assert parse_skill_md(text) == Skill("qa", "Use when asked.", body="Body\r\n")


def test_missing_frontmatter() -> None:
    assert parse_errors("# Just markdown\n")[0].message.startswith(
        "SKILL.md must start with a '---' line"
    )


def test_unclosed_frontmatter() -> None:
    assert parse_errors("---\nname: qa\n") == [
        FieldError("frontmatter", "the frontmatter is not closed: add a '---' line after it")
    ]


def test_yaml_error_line_numbers_match_the_file() -> None:
    (error,) = parse_errors("---\nname: qa\ndescription: [oops\n---\nbody")

    assert error.path == "frontmatter"
    assert error.message.startswith("line 4,")


def test_frontmatter_field_errors() -> None:
    errors = parse_errors("---\nname: 12\nlicense: MIT\nallowed-tools: {a: b}\n---\n")

    assert {e.path: e.message for e in errors} == {
        "frontmatter.license": "unknown key 'license'; allowed keys: name, description, "
        "allowed-tools",
        "frontmatter.description": "is required",
        "frontmatter.allowed-tools": "must be a list of tool names, got object",
        "frontmatter.name": "must be a string, got integer",
    }


def test_frontmatter_must_be_a_mapping() -> None:
    assert parse_errors("---\n- a\n---\n") == [
        FieldError("frontmatter", "must be an object (mapping), got array")
    ]
