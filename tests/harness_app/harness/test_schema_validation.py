"""Tool schemas' regexes run in RE2: at save (every regex keyword at any depth must compile,
errors name the field) and in the argument validator (no backtracking: issue 9 froze a worker
with ``^(a+)+$``)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from harness_app.harness.errors import FieldError
from harness_app.harness.model import Harness, Tool, ToolExecutor
from harness_app.harness.schema_validation import re2_validator, regex_keyword_errors
from harness_app.harness.validation import validate_harness
from harness_app.hsa.harness_check import harness_problems

EVIL = r"^(a+)+$"
# 25 a's cost Python's re about 2 s on this machine (doubling per character); RE2 is linear.
EVIL_INPUT = "a" * 25 + "!"


def messages(schema: dict[str, Any], instance: object) -> list[str]:
    return [e.message for e in re2_validator(schema).iter_errors(instance)]


@pytest.mark.parametrize(
    ("schema", "instance"),
    [
        (
            {"type": "object", "properties": {"sku": {"type": "string", "pattern": EVIL}}},
            {"sku": EVIL_INPUT},
        ),
        ({"type": "object", "patternProperties": {EVIL: {"type": "integer"}}}, {EVIL_INPUT: 1}),
        ({"type": "object", "propertyNames": {"pattern": EVIL}}, {EVIL_INPUT: 1}),
        (
            {"type": "object", "patternProperties": {EVIL: {}}, "additionalProperties": False},
            {EVIL_INPUT: 1},
        ),
        (
            {
                "type": "object",
                "properties": {
                    "tags": {
                        "type": "array",
                        "items": {"anyOf": [{"type": "string", "pattern": EVIL}]},
                    }
                },
            },
            {"tags": [EVIL_INPUT]},
        ),
    ],
    ids=["pattern", "patternProperties", "propertyNames", "additionalProperties", "nested"],
)
def test_catastrophic_patterns_run_in_linear_time(schema: dict[str, Any], instance: object) -> None:
    started = time.perf_counter()
    errors = messages(schema, instance)
    assert time.perf_counter() - started < 0.2
    # The input does not match ^(a+)+$: an error, except where no match means "not applied".
    assert len(errors) == (0 if "patternProperties" in schema and len(schema) == 2 else 1)


def test_re2_keywords_keep_json_schema_semantics() -> None:
    schema = {
        "type": "object",
        "properties": {"sku": {"type": "string", "pattern": "^SKU-[0-9]+$"}},
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": False,
    }
    assert messages(schema, {"sku": "SKU-12", "x-rank": 3}) == []
    assert messages(schema, {"sku": "sku-12"}) == ["'sku-12' does not match '^SKU-[0-9]+$'"]
    assert messages(schema, {"x-rank": "high"}) == ["'high' is not of type 'integer'"]
    assert messages(schema, {"color": "red"}) == [
        "'color' does not match any of the regexes: '^x-'"
    ]
    assert messages({"type": "string", "pattern": "b"}, "abc") == []  # search, not match
    closed = {"type": "object", "properties": {"a": {}}, "additionalProperties": False}
    assert messages(closed, {"a": 1, "b": 2}) == [
        "Additional properties are not allowed ('b' was unexpected)"
    ]


def test_a_pattern_re2_cannot_compile_fails_closed_at_run_time() -> None:
    # A stored schema from before the save-time check: the arguments are refused.
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "(?=x)"}}}
    [message] = messages(schema, {"a": "x"})
    assert message.startswith("pattern '(?=x)' is not supported (RE2: ")


def tool(schema: dict[str, Any]) -> Harness:
    executor = ToolExecutor(kind="catalog", operation="get_product")
    return Harness(tools=(Tool("get_product", "Look up a product.", schema, executor),))


def test_patterns_re2_cannot_compile_are_save_errors_naming_the_field() -> None:
    schema = {
        "type": "object",
        "properties": {
            "sku": {"type": "string", "pattern": "^(?!TEST)[A-Z]+$"},
            "sizes": {"type": "array", "items": {"type": "string", "pattern": r"(a)\1"}},
        },
        "patternProperties": {"(?<=x)y": {}},
        "propertyNames": {"pattern": "(?=k)"},
    }
    harness = tool(schema)
    errors = validate_harness(harness)
    paths = [e.path for e in errors]
    assert paths == [
        "tools[0].input_schema.patternProperties.(?<=x)y",
        "tools[0].input_schema.properties.sizes.items.pattern",
        "tools[0].input_schema.properties.sku.pattern",
        "tools[0].input_schema.propertyNames.pattern",
    ]
    assert "rejected by RE2" in errors[2].message and "look-around" in errors[2].message
    # HSA's cached checks agree with validate_harness (same paths)
    assert [e.path for e in harness_problems(harness)] == paths


def test_the_issues_pattern_itself_is_allowed_because_re2_runs_it_safely() -> None:
    assert (
        validate_harness(
            tool({"type": "object", "properties": {"sku": {"type": "string", "pattern": EVIL}}})
        )
        == []
    )


def test_unevaluated_properties_may_not_rely_on_python_regexes() -> None:
    schema = {"type": "object", "patternProperties": {"^a": {}}, "unevaluatedProperties": False}
    assert regex_keyword_errors(schema, "s") == [
        FieldError(
            "s.unevaluatedProperties",
            "unevaluatedProperties cannot be combined with patternProperties or $ref in a tool "
            "schema (jsonschema would run those regexes outside RE2); list the properties "
            "instead",
        )
    ]
    assert messages(schema, {"b": 1}) == [regex_keyword_errors(schema, "s")[0].message]
    plain = {"type": "object", "properties": {"a": {}}, "unevaluatedProperties": False}
    assert regex_keyword_errors(plain, "s") == []
    assert messages(plain, {"a": 1}) == []
    assert len(messages(plain, {"b": 1})) == 1


def test_strings_with_a_lone_surrogate_are_validated_not_crashed_on() -> None:
    schema = {"type": "object", "properties": {"sku": {"type": "string", "pattern": "^SKU"}}}
    assert messages(schema, {"sku": "SKU-\ud800"}) == []
    assert len(messages(schema, {"sku": "\ud800"})) == 1
