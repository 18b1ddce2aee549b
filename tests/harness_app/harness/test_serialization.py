from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

import pytest
from hypothesis import given, settings

from harness_app.harness.errors import FieldError, HarnessValidationError
from harness_app.harness.model import Harness, Skill, Tool, ToolExecutor
from harness_app.harness.serialization import (
    canonical_json,
    component_hashes,
    harness_from_dict,
    harness_from_yaml,
    harness_to_dict,
    harness_to_yaml,
)
from tests.harness_app.harness.strategies import harnesses

PROPERTY = settings(max_examples=50, deadline=None)


def _errors(data: object) -> list[FieldError]:
    with pytest.raises(HarnessValidationError) as caught:
        harness_from_dict(data)  # type: ignore[arg-type]
    return caught.value.errors


@PROPERTY
@given(harnesses())
def test_dict_round_trip_is_lossless(harness: Harness) -> None:
    document = harness_to_dict(harness)

    assert harness_from_dict(json.loads(json.dumps(document))) == harness
    assert harness_to_dict(harness_from_dict(document)) == document


@PROPERTY
@given(harnesses())
def test_yaml_round_trip_is_lossless(harness: Harness) -> None:
    text = harness_to_yaml(harness)

    assert harness_from_yaml(text) == harness
    assert harness_to_yaml(harness_from_yaml(text)) == text


def test_to_dict_writes_every_field_in_a_fixed_order(live_harness: Harness) -> None:
    document = harness_to_dict(live_harness)

    assert list(document) == ["skills", "tools", "prompt", "hooks"]
    assert list(document["tools"][0]) == [
        "name",
        "description",
        "input_schema",
        "executor",
        "read_only",
        "destructive",
    ]
    assert document["tools"][0]["executor"] == {
        "kind": "catalog",
        "operation": "get_product",
        "url": "",
        "timeout_s": 5.0,
        "secret_ref": "",
    }
    assert document["hooks"][1]["max_retries"] == 2


def test_from_dict_fills_defaults() -> None:
    harness = harness_from_dict(
        {
            "skills": [{"name": "product-qa", "description": "Use when asked."}],
            "tools": [{"name": "get_product", "description": "Look up a product."}],
            "hooks": [{"name": "h", "event": "pre_reply", "condition": "size(reply) > 5"}],
        }
    )

    assert harness.skills[0] == Skill("product-qa", "Use when asked.", body="", allowed_tools=())
    assert harness.tools[0].input_schema == {"type": "object", "properties": {}}
    assert harness.tools[0].executor == ToolExecutor()
    hook = harness.hooks[0]
    assert (
        hook.condition_kind,
        hook.matcher,
        hook.action,
        hook.max_retries,
        hook.timeout_ms,
        hook.fail_mode,
    ) == ("cel", "*", "retry_with_feedback", 1, 50, "open")
    assert harness.prompt.sections == ()


def test_from_dict_stores_integer_timeouts_as_floats_so_hashes_are_stable() -> None:
    def with_timeout(timeout: object) -> Harness:
        return harness_from_dict(
            {
                "tools": [
                    {
                        "name": "t",
                        "description": "d",
                        "executor": {
                            "kind": "webhook",
                            "url": "https://x.example",
                            "timeout_s": timeout,
                            "secret_ref": "S",
                        },
                    }
                ]
            }
        )

    as_int, as_float = with_timeout(5), with_timeout(5.0)

    assert isinstance(as_int.tools[0].executor.timeout_s, float)
    assert component_hashes(as_int) == component_hashes(as_float)


def test_from_dict_reports_unknown_keys_with_their_path() -> None:
    errors = _errors({"skills": [{"name": "a", "description": "b", "colour": "red"}]})

    assert errors == [
        FieldError(
            "skills[0].colour",
            "unknown key 'colour'; allowed keys: name, description, body, allowed_tools",
        )
    ]


def test_from_dict_reports_missing_required_fields() -> None:
    errors = _errors({"tools": [{"description": "no name"}], "hooks": [{"name": "x"}]})

    assert [e.path for e in errors] == ["tools[0].name", "hooks[0].event", "hooks[0].condition"]
    assert all(e.message == "is required" for e in errors)


def test_from_dict_reports_every_wrong_type_in_one_pass() -> None:
    errors = _errors(
        {
            "skills": [{"name": 7, "description": "d", "allowed_tools": ["ok", 3]}],
            "tools": [
                {
                    "name": "t",
                    "description": "d",
                    "read_only": "yes",
                    "executor": {"timeout_s": "5"},
                }
            ],
            "prompt": {"sections": "persona"},
            "hooks": [
                {
                    "name": "h",
                    "event": "pre_reply",
                    "condition": "true",
                    "max_retries": 1.5,
                    "timeout_ms": True,
                }
            ],
        }
    )

    assert {e.path: e.message for e in errors} == {
        "skills[0].name": "must be a string, got integer",
        "skills[0].allowed_tools[1]": "must be a string, got integer",
        "tools[0].read_only": "must be true or false, got string",
        "tools[0].executor.timeout_s": "must be a number, got string",
        "prompt.sections": "must be an array (list), got string",
        "hooks[0].max_retries": "must be an integer, got number",
        "hooks[0].timeout_ms": "must be an integer, got boolean",
    }


def test_from_dict_rejects_a_non_mapping_item() -> None:
    assert _errors({"skills": ["product-qa"]}) == [
        FieldError("skills[0]", "must be an object (mapping), got string")
    ]


def test_from_dict_rejects_non_json_values_inside_schemas() -> None:
    errors = _errors(
        {
            "tools": [
                {
                    "name": "t",
                    "description": "d",
                    "input_schema": {
                        "type": "object",
                        "properties": {"x": {"default": float("nan")}, "y": {"enum": [{1, 2}]}},
                    },
                }
            ]
        }
    )

    assert [e.path for e in errors] == [
        "tools[0].input_schema.properties.x.default",
        "tools[0].input_schema.properties.y.enum[0]",
    ]
    assert "finite number" in errors[0].message
    assert "got set" in errors[1].message


def test_from_dict_does_not_share_mutable_schema_with_its_input() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"sku": {"type": "string"}}}
    harness = harness_from_dict(
        {"tools": [{"name": "t", "description": "d", "input_schema": schema}]}
    )

    schema["properties"]["sku"]["type"] = "integer"

    assert harness.tools[0].input_schema["properties"]["sku"]["type"] == "string"


def test_component_hashes_are_sha256_of_canonical_component_json(live_harness: Harness) -> None:
    hashes = component_hashes(live_harness)
    document = harness_to_dict(live_harness)

    assert set(hashes) == {"skills", "tools", "prompt", "hooks"}
    expected = hashlib.sha256(
        json.dumps(
            document["tools"], sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode()
    ).hexdigest()
    assert hashes["tools"] == expected


def test_component_hashes_change_only_for_the_edited_component(live_harness: Harness) -> None:
    edited = dataclasses.replace(
        live_harness,
        tools=(
            dataclasses.replace(live_harness.tools[0], description="Changed."),
            *live_harness.tools[1:],
        ),
    )

    before, after = component_hashes(live_harness), component_hashes(edited)

    assert [key for key in before if before[key] != after[key]] == ["tools"]


def test_canonical_json_sorts_keys_and_drops_whitespace() -> None:
    assert canonical_json({"b": [1, 2], "a": "é"}) == '{"a":"é","b":[1,2]}'


def test_yaml_writes_multiline_text_as_blocks() -> None:
    harness = Harness(skills=(Skill("qa", "Use when asked.", body="Step 1.\nStep 2.\n"),))

    assert "body: |\n      Step 1.\n      Step 2.\n" in harness_to_yaml(harness)


def test_yaml_syntax_error_reports_line_and_column() -> None:
    with pytest.raises(HarnessValidationError) as caught:
        harness_from_yaml("skills:\n  - name: a\n    description: [unclosed\n")

    (error,) = caught.value.errors
    assert error.path == "yaml"
    assert error.message.startswith("line 4, column 1:")


def test_yaml_rejects_duplicate_keys_instead_of_keeping_the_last() -> None:
    with pytest.raises(HarnessValidationError) as caught:
        harness_from_yaml("skills: []\ntools: []\nskills: []\n")

    (error,) = caught.value.errors
    assert error.message == "line 3, column 1: duplicate key 'skills' (while reading a mapping)"


def test_yaml_rejects_aliases() -> None:
    text = "skills:\n  - &s {name: a, description: Use when x.}\n  - *s\n"

    with pytest.raises(HarnessValidationError) as caught:
        harness_from_yaml(text)

    assert "aliases (*name) are not allowed" in caught.value.errors[0].message
    assert caught.value.errors[0].message.startswith("line 3,")


def test_yaml_refuses_python_object_tags() -> None:
    with pytest.raises(HarnessValidationError) as caught:
        harness_from_yaml("skills: !!python/object/apply:os.system ['echo hi']\n")

    assert "could not determine a constructor" in caught.value.errors[0].message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the document is empty; expected a mapping with keys skills, tools, prompt, hooks"),
        (
            "- a\n- b\n",
            "the document must be a mapping with keys skills, tools, prompt, hooks; got array",
        ),
    ],
)
def test_yaml_document_must_be_a_mapping(text: str, message: str) -> None:
    with pytest.raises(HarnessValidationError) as caught:
        harness_from_yaml(text)

    assert caught.value.errors == [FieldError("yaml", message)]


def test_yaml_shape_errors_carry_field_paths() -> None:
    with pytest.raises(HarnessValidationError) as caught:
        harness_from_yaml("tools:\n  - name: t\n    description: d\n    read_only: maybe\n")

    assert caught.value.errors == [
        FieldError("tools[0].read_only", "must be true or false, got string")
    ]


def test_yaml_rejects_dates_in_schemas() -> None:
    text = (
        "tools:\n  - name: t\n    description: d\n    input_schema:\n      type: object\n"
        "      default: 2024-01-01\n"
    )

    with pytest.raises(HarnessValidationError) as caught:
        harness_from_yaml(text)

    assert caught.value.errors[0].path == "tools[0].input_schema.default"
    assert "got date" in caught.value.errors[0].message


def test_tool_default_schema_round_trips(live_harness: Harness) -> None:
    harness = Harness(tools=(Tool("t", "d"),))

    assert harness_from_yaml(harness_to_yaml(harness)) == harness
