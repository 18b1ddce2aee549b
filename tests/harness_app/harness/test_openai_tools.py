from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from harness_app.harness.errors import FieldError, HarnessValidationError
from harness_app.harness.model import Harness, Tool, ToolExecutor
from harness_app.harness.openai_tools import from_openai_tools, to_openai_tools
from tests.harness_app.harness.strategies import harnesses

SCHEMA = {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]}
WEBHOOK_TOOL = Tool(
    "reserve_item",
    "Reserve an item.",
    input_schema=SCHEMA,
    executor=ToolExecutor(
        kind="webhook", url="https://shop.example/reserve", timeout_s=2.5, secret_ref="SHOP_SECRET"
    ),
    read_only=False,
    destructive=True,
)


def import_errors(data: object) -> list[FieldError]:
    with pytest.raises(HarnessValidationError) as caught:
        from_openai_tools(data)
    return caught.value.errors


def test_plain_export_is_the_chat_completions_format() -> None:
    assert to_openai_tools([WEBHOOK_TOOL]) == [
        {
            "type": "function",
            "function": {
                "name": "reserve_item",
                "description": "Reserve an item.",
                "parameters": SCHEMA,
            },
        }
    ]


def test_export_with_extensions_carries_executor_and_annotations() -> None:
    (entry,) = to_openai_tools([WEBHOOK_TOOL], include_extensions=True)

    assert entry["x-hat"] == {
        "executor": {
            "kind": "webhook",
            "operation": "",
            "url": "https://shop.example/reserve",
            "timeout_s": 2.5,
            "secret_ref": "SHOP_SECRET",
        },
        "read_only": False,
        "destructive": True,
    }


def test_export_does_not_share_the_schema() -> None:
    (entry,) = to_openai_tools([WEBHOOK_TOOL])

    entry["function"]["parameters"]["properties"]["sku"]["type"] = "integer"

    assert WEBHOOK_TOOL.input_schema["properties"]["sku"]["type"] == "string"


@settings(max_examples=50, deadline=None)
@given(harnesses())
def test_round_trip_with_extensions_is_lossless(harness: Harness) -> None:
    exported = json.loads(json.dumps(to_openai_tools(harness.tools, include_extensions=True)))

    assert from_openai_tools(exported) == harness.tools


def test_bare_function_dicts_are_accepted() -> None:
    (tool,) = from_openai_tools(
        [{"name": "get_product", "description": "Look up.", "parameters": SCHEMA}]
    )

    assert tool == Tool(
        "get_product",
        "Look up.",
        input_schema=SCHEMA,
        executor=ToolExecutor(kind="catalog", operation="get_product"),
    )


def test_unknown_tool_without_extension_gets_the_default_executor() -> None:
    (tool,) = from_openai_tools([{"type": "function", "function": {"name": "weather"}}])

    assert tool.executor == ToolExecutor()
    assert tool.input_schema == {"type": "object", "properties": {}}
    assert tool.description == ""


def test_strict_flag_is_accepted() -> None:
    (tool,) = from_openai_tools(
        [
            {
                "type": "function",
                "function": {
                    "name": "get_product",
                    "description": "d",
                    "parameters": SCHEMA,
                    "strict": True,
                },
            }
        ]
    )

    assert tool.name == "get_product"


def test_errors_have_paths_into_the_document() -> None:
    errors = import_errors(
        [
            {"type": "function", "function": {"name": "a", "description": "d"}},
            {"type": "function", "function": {"name": "b", "description": "d"}},
            {"type": "function", "function": {"name": "c", "description": "d"}},
            {"type": "function", "function": {"name": "d", "parameters": "object"}},
            {"type": "retrieval", "function": {"name": "e"}},
            {"name": 5, "description": "bare"},
            {
                "type": "function",
                "function": {"name": "f"},
                "x-hat": {"read_only": "no", "colour": 1},
            },
        ]
    )

    assert {e.path: e.message for e in errors} == {
        "tools[3].function.parameters": "must be an object (mapping), got string",
        "tools[4].type": "type 'retrieval' is not supported; only \"function\"",
        "tools[5].name": "must be a string, got integer",
        "tools[6].x-hat.colour": "unknown key 'colour'; allowed keys: executor, read_only, "
        "destructive",
        "tools[6].x-hat.read_only": "must be true or false, got string",
    }


def test_wrapped_entry_needs_a_function() -> None:
    assert import_errors([{"type": "function"}]) == [
        FieldError("tools[0].function", "is required"),
        FieldError("tools[0].function", "must be an object (mapping), got null"),
    ]


def test_document_must_be_a_list() -> None:
    assert import_errors({"tools": []}) == [
        FieldError("tools", "must be a list of tool definitions, got object")
    ]
