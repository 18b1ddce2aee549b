from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from harness_app.harness.bfcl import (
    bfcl_function_from_tool,
    bfcl_schema_from_json_schema,
    import_bfcl_file,
    normalise_bfcl_schema,
    tool_from_bfcl,
)
from harness_app.harness.model import Harness, ToolExecutor
from harness_app.harness.validation import validate_harness
from harness_app.hsa.bfcl_data import CATEGORIES, DATA_DIR, load_category


@pytest.fixture(scope="module")
def live_simple_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped live_simple questions as the plain JSONL file BFCL distributes."""
    path = tmp_path_factory.mktemp("bfcl") / "live_simple.jsonl"
    path.write_bytes(gzip.decompress((DATA_DIR / "BFCL_v4_live_simple.json.gz").read_bytes()))
    return path


def test_types_are_mapped_recursively() -> None:
    schema = {
        "type": "dict",
        "properties": {
            "price": {"type": "float", "default": 0.5},
            "point": {"type": "tuple", "items": {"type": "float"}},
            "payload": {"type": "any", "description": "Anything."},
            "nested": {"type": "dict", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        },
        "required": ["price"],
    }

    assert normalise_bfcl_schema(schema) == {
        "type": "object",
        "properties": {
            "price": {"type": "number", "default": 0.5},
            "point": {"type": "array", "items": {"type": "number"}},
            "payload": {"description": "Anything."},
            "nested": {
                "type": "object",
                "properties": {"n": {"type": "integer"}},
                "required": ["n"],
            },
        },
        "required": ["price"],
    }


def test_input_is_not_modified() -> None:
    schema = {"type": "dict", "properties": {"x": {"type": "float"}}}

    normalise_bfcl_schema(schema)

    assert schema == {"type": "dict", "properties": {"x": {"type": "float"}}}


def test_non_standard_keywords_and_bad_shapes_are_dropped() -> None:
    schema = {
        "type": "dict",
        "properties": {
            "a": {"type": "string", "optional": True, "required": True, "enum": "x"},
            "b": {"type": "string", "maxLength": "ten", "format": "date"},
        },
    }

    assert normalise_bfcl_schema(schema) == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string", "format": "date"}},
    }


def test_python_type_names_and_unions() -> None:
    schema = {
        "type": "dict",
        "properties": {"a": {"type": ["str", "int"]}, "b": {"type": ["string", "any"]}},
    }

    assert normalise_bfcl_schema(schema)["properties"] == {
        "a": {"type": ["string", "integer"]},
        "b": {},
    }


def test_enum_on_an_array_of_scalars_moves_to_items() -> None:
    schema = {"type": "array", "items": {"type": "string"}, "enum": ["trust", "value"]}

    assert normalise_bfcl_schema(schema) == {
        "type": "array",
        "items": {"type": "string", "enum": ["trust", "value"]},
    }


def test_tuple_items_list_becomes_prefix_items() -> None:
    schema = {"type": "tuple", "items": [{"type": "float"}, {"type": "float"}]}

    assert normalise_bfcl_schema(schema) == {
        "type": "array",
        "prefixItems": [{"type": "number"}, {"type": "number"}],
    }


def test_tool_from_bfcl_uses_a_webhook_placeholder_that_validates() -> None:
    tool = tool_from_bfcl(
        {
            "name": "get_user_info",
            "description": "Retrieve details for a user.",
            "parameters": {
                "type": "dict",
                "required": ["user_id"],
                "properties": {"user_id": {"type": "integer"}},
            },
        }
    )

    assert tool.executor == ToolExecutor(
        kind="webhook",
        url="https://example.invalid/bfcl/get_user_info",
        secret_ref="BFCL_WEBHOOK_SECRET",
    )
    assert tool.input_schema["type"] == "object"
    assert (tool.read_only, tool.destructive) == (False, False)
    assert validate_harness(Harness(tools=(tool,))) == []


def test_tool_from_bfcl_fills_an_empty_description_and_missing_parameters() -> None:
    tool = tool_from_bfcl({"name": "ping", "description": " "})

    assert tool.description == "BFCL function ping."
    assert tool.input_schema == {"type": "object", "properties": {}}


def test_import_reports_broken_lines(tmp_path: Path) -> None:
    good = {
        "id": "ok-1",
        "function": [
            {"name": "f", "description": "F.", "parameters": {"type": "dict", "properties": {}}}
        ],
    }
    bad_name = {"id": "bad-1", "function": [{"name": "has space", "description": "x"}]}
    path = tmp_path / "cases.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps(good),
                "{not json",
                json.dumps(bad_name),
                json.dumps({"id": "bad-2", "function": []}),
            ]
        ),
        "utf-8",
    )

    report = import_bfcl_file(path)

    assert [case for case, _ in report.imported] == ["ok-1"]
    assert [case for case, _ in report.failures] == ["line 2", "bad-1", "bad-2"]
    assert "tools[0].name: name 'has space' must match" in report.failures[1][1]


def test_every_live_simple_case_imports_and_validates_alone(live_simple_file: Path) -> None:
    lines = live_simple_file.read_text("utf-8").splitlines()
    case_ids = [json.loads(line)["id"] for line in lines if line.strip()]

    report = import_bfcl_file(live_simple_file)

    assert report.failures == []
    assert [case for case, _ in report.imported] == case_ids
    assert len(report.imported) == 258  # the file's last line has no trailing newline
    for _case, tool in report.imported:
        assert validate_harness(Harness(tools=(tool,))) == []


def test_live_simple_special_cases_are_noted(live_simple_file: Path) -> None:
    report = import_bfcl_file(live_simple_file)

    assert sorted(case for case, _ in report.notes) == [
        "live_simple_117-73-0",
        "live_simple_122-78-0",
        "live_simple_71-35-0",
    ]
    metrics = dict(report.imported)["live_simple_71-35-0"].input_schema["properties"]["metrics"]
    assert "enum" not in metrics
    assert metrics["items"]["enum"][:2] == ["favorability", "admired employer"]


def test_every_function_of_every_single_turn_case_imports_together() -> None:
    """One harness per case with all its offered functions; none fails to import."""
    functions = cases = 0
    for category in CATEGORIES:
        for case in load_category(category)[0]:
            tools = tuple(tool_from_bfcl(f) for f in case["function"])
            assert validate_harness(Harness(tools=tools)) == [], case["id"]
            functions += len(tools)
            cases += 1
    assert (cases, functions) == (3475, 8532)


def test_bfcl_dialect_round_trip_keeps_what_is_accepted() -> None:
    for category in CATEGORIES:
        for case in load_category(category)[0]:
            for function in case["function"]:
                tool = tool_from_bfcl(function)
                written = bfcl_function_from_tool(tool)
                assert written["parameters"]["type"] == "dict"
                assert isinstance(written["parameters"]["required"], list)
                assert tool_from_bfcl(written).input_schema == tool.input_schema, function["name"]


def test_bfcl_dialect_of_restyled_schemas() -> None:
    schema = {
        "type": "object",
        "additionalProperties": True,
        "properties": {
            "a": {"type": ["number"], "title": "A"},
            "b": {"const": "x", "type": "string"},
            "c": {"type": "array", "prefixItems": [{"type": "integer"}]},
            "d": {"description": "anything"},
        },
    }
    written = bfcl_schema_from_json_schema(schema, top=True)
    assert written == {
        "type": "dict",
        "properties": {
            "a": {"type": "float", "title": "A"},
            "b": {"enum": ["x"], "type": "string"},
            "c": {"type": "array", "items": [{"type": "integer"}]},
            "d": {"description": "anything", "type": "any"},
        },
        "required": [],
    }
