"""Errors of the raw YAML editor mapped to the line and column of the typed text."""

from __future__ import annotations

import pytest

from harness_app.harness.errors import FieldError, HarnessValidationError
from harness_app.harness.serialization import harness_from_yaml
from harness_app.harness.validation import validate_harness
from harness_app.harness.yaml_locations import LocatedError, error_lines, locate_errors

BLOCK = """\
skills:
  - name: product-qa
    description: Use when a viewer asks about a product.
    allowed_tools:
      - get_product
      - check_stock
      - no_such_tool
  - name: Bad Name
    description: Use when nothing else fits.
tools:
  - name: get_product
    description: Read one product.
    input_schema:
      type: object
      properties:
        a.b:
          type: string
        a:
          type: nope
prompt:
  sections: []
hooks: []
"""


def where(text: str, path: str) -> tuple[int | None, int | None]:
    (located,) = locate_errors(text, [FieldError(path, "m")])
    return located.line, located.column


def all_errors(text: str) -> list[FieldError]:
    """What the editor gets for ``text``: shape errors, else rule errors."""
    try:
        return validate_harness(harness_from_yaml(text))
    except HarnessValidationError as exc:
        return exc.errors


def test_an_item_of_a_nested_block_list_points_at_the_item() -> None:
    assert where(BLOCK, "skills[0].allowed_tools[2]") == (7, 9)
    assert where(BLOCK, "skills[0].allowed_tools[0]") == (5, 9)


def test_a_mapping_entry_points_at_its_key() -> None:
    assert where(BLOCK, "skills[1].name") == (8, 5)
    assert where(BLOCK, "tools[0].input_schema") == (13, 5)


def test_a_key_with_a_dot_is_matched_before_a_shorter_key() -> None:
    assert where(BLOCK, "tools[0].input_schema.properties.a.b.type") == (17, 11)
    assert where(BLOCK, "tools[0].input_schema.properties.a.type") == (19, 11)


def test_a_missing_key_points_at_the_mapping_it_is_missing_from() -> None:
    # skills[1] has no body (a default was filled in) and the tool has no executor.
    assert where(BLOCK, "skills[1].body") == (8, 5)
    assert where(BLOCK, "tools[0].executor.url") == (11, 5)


def test_an_index_past_the_end_points_at_the_list() -> None:
    assert where(BLOCK, "skills[7].name") == (2, 3)


def test_rule_errors_of_a_real_document_each_get_their_line() -> None:
    # given the document above: an unknown tool, a bad skill name, a bad schema type
    located = locate_errors(BLOCK, all_errors(BLOCK))
    # then every error has a line, and the lines are those of the offending nodes
    by_path = {e.path: (e.line, e.column) for e in located}
    assert by_path["skills[0].allowed_tools[2]"] == (7, 9)
    assert by_path["skills[1].name"] == (8, 5)
    assert any(p.startswith("tools[0].input_schema") and lc[0] == 19 for p, lc in by_path.items())
    assert all(e.line is not None for e in located)
    assert 7 in error_lines(located) and 8 in error_lines(located)


def test_flow_style_lists_and_mappings() -> None:
    text = (
        "skills: [{name: qa, description: Use when asked, allowed_tools: [get_product, nope]}]\n"
        "tools: []\n"
    )
    assert where(text, "skills[0].allowed_tools[1]") == (1, 79)
    assert where(text, "skills[0].description") == (1, 21)
    located = locate_errors(text, all_errors(text))
    assert [(e.path, e.line, e.column) for e in located] == [
        ("skills[0].allowed_tools[0]", 1, 66),  # no tools at all: both are unknown
        ("skills[0].allowed_tools[1]", 1, 79),
    ]


def test_shape_errors_point_at_their_node() -> None:
    text = "skills:\n  - name: qa\n    description: 5\n    colour: red\n"
    located = locate_errors(text, all_errors(text))
    lines = {e.line for e in located}
    assert lines == {3, 4}, located


@pytest.mark.parametrize(
    ("text", "line", "column", "says"),
    [
        ("skills:\n  - name: a\n    name: b\n", 3, 5, "duplicate key 'name'"),
        ("tools: []\nskills: [\n", 3, 1, "expected"),
        ("skills:\n  - &a {name: x}\n  - *a\n", 3, 5, "aliases"),
        ("skills:\n  - name: a\n   description: b\n", 3, 4, "expected <block end>"),
    ],
)
def test_syntax_errors_use_the_parser_mark(text: str, line: int, column: int, says: str) -> None:
    (located,) = locate_errors(text, all_errors(text))
    assert (located.line, located.column) == (line, column)
    assert says in located.message
    assert not located.message.startswith("line ")  # the position is not said twice
    assert located.describe().startswith(f"line {line}, column {column}: ")


def test_document_level_errors() -> None:
    (located,) = locate_errors("- a\n- b\n", all_errors("- a\n- b\n"))
    assert (located.line, located.column) == (1, 1)
    (empty,) = locate_errors("", all_errors(""))
    assert empty.line is None and "empty" in empty.message


def test_describe_names_line_column_path_and_message() -> None:
    error = LocatedError("skills[0].name", "must be lowercase", 2, 5)
    assert error.describe() == "line 2, column 5: skills[0].name: must be lowercase"
    assert LocatedError("", "whole", None, None).describe() == "whole"
