"""The text action format: what parses, every specific way it fails, and the instructions."""

from __future__ import annotations

import re
from typing import Any

import pytest

from inference.clients.text_actions import (
    CallToolAction,
    InvalidFieldValue,
    InvalidJson,
    MultipleJsonBlocks,
    NoJsonBlock,
    ReplyAction,
    TextActionError,
    UnknownAction,
    UnknownTool,
    WrongKeys,
    parse_text_action,
    render_text_action,
    render_text_action_instructions,
)

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "check_stock",
            "description": "Stock count for a SKU,\n  live from the warehouse.",
            "parameters": {
                "type": "object",
                "properties": {"sku": {"type": "string"}},
                "required": ["sku"],
            },
        },
    },
    {"name": "list_coupons", "description": "", "parameters": None},
]


def test_call_tool_block_parses() -> None:
    text = (
        '```json\n{"action": "call_tool", "tool": "check_stock", "arguments": {"sku": "A-1"}}\n```'
    )
    action = parse_text_action(text)
    assert action == CallToolAction(tool="check_stock", arguments={"sku": "A-1"})
    assert action.kind == "call_tool"


def test_reply_block_parses_and_keeps_surrounding_text() -> None:
    text = 'Sure!\n```JSON\n{"action": "reply", "text": "Yes, 3 left."}\n```\nHope it helps.'
    action = parse_text_action(text)
    assert isinstance(action, ReplyAction)
    assert action.kind == "reply"
    assert action.text == "Yes, 3 left."
    assert action.surrounding_text == "Sure!\n\nHope it helps."


def test_block_on_one_line_parses() -> None:
    action = parse_text_action('```json {"action": "reply", "text": "ok"}```')
    assert action == ReplyAction(text="ok")


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("Yes, 3 left.", NoJsonBlock, "no ```json block found"),
        ('```json\n{"action": "reply", "text": "x"}', NoJsonBlock, "not closed"),
        ('```\n{"action": "reply", "text": "x"}\n```', NoJsonBlock, "without the json tag"),
        (
            '```json\n{"action": "reply", "text": "a"}\n```\n```json\n{"action": "reply", '
            '"text": "b"}\n```',
            MultipleJsonBlocks,
            "found 2 ```json blocks",
        ),
        (
            '```json\n{"action": "reply", "text": "a"}\n```\n```json\n{"act',
            MultipleJsonBlocks,
            "exactly one",
        ),
        ('```json\n{"action": "reply", "text": "a",}\n```', InvalidJson, "line 1 column"),
        (
            '```json\n{"action": "reply", "text": "a", "text": "b"}\n```',
            InvalidJson,
            'repeats the key "text"',
        ),
        ('```json\n["reply", "a"]\n```', WrongKeys, "one JSON object; got an array"),
        (
            '```json\n{"action": "reply", "reply": "a"}\n```',
            WrongKeys,
            'missing: "text"; unexpected: "reply"',
        ),
        (
            '```json\n{"action": "call_tool", "tool": "check_stock", "args": {}}\n```',
            WrongKeys,
            'missing: "arguments"; unexpected: "args"',
        ),
        (
            '```json\n{"action": "call_tool", "tool": "x", "arguments": {}, "text": "hi"}\n```',
            WrongKeys,
            'unexpected: "text"',
        ),
        (
            '```json\n{"action": "answer", "text": "a"}\n```',
            UnknownAction,
            'unknown action "answer"; allowed actions are "call_tool", "reply"',
        ),
        (
            '```json\n{"tool": "x", "arguments": {}}\n```',
            InvalidFieldValue,
            '"action" must be a string',
        ),
        (
            '```json\n{"action": "call_tool", "tool": "x", "arguments": "sku=A-1"}\n```',
            InvalidFieldValue,
            '"arguments" must be a JSON object',
        ),
        (
            '```json\n{"action": "call_tool", "tool": "", "arguments": {}}\n```',
            InvalidFieldValue,
            '"tool" must be a non-empty string',
        ),
        (
            '```json\n{"action": "reply", "text": null}\n```',
            InvalidFieldValue,
            '"text" must be a string; got null',
        ),
    ],
)
def test_malformed_answers_raise_specific_errors(
    text: str, error: type[TextActionError], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)) as caught:
        parse_text_action(text)
    assert isinstance(caught.value, TextActionError)
    assert caught.value.code != TextActionError.code  # every subclass has its own code


def test_unknown_tool_is_rejected_only_when_tools_are_given() -> None:
    text = '```json\n{"action": "call_tool", "tool": "refund", "arguments": {}}\n```'
    assert parse_text_action(text) == CallToolAction(tool="refund", arguments={})
    with pytest.raises(
        UnknownTool,
        match='unknown tool "refund"; available tools are "check_stock", "list_coupons"',
    ):
        parse_text_action(text, allowed_tools={"list_coupons", "check_stock"})


@pytest.mark.parametrize(
    "action",
    [
        CallToolAction(tool="check_stock", arguments={"sku": "A-1", "qty": 2}),
        CallToolAction(tool="list_coupons", arguments={}),
        ReplyAction(text='有货 还剩 3 件 "M" 码'),
        ReplyAction(text=""),
    ],
)
def test_render_then_parse_round_trips(action: CallToolAction | ReplyAction) -> None:
    assert parse_text_action(render_text_action(action)) == action


def test_a_fence_inside_the_reply_text_is_reported_not_guessed() -> None:
    # ``` inside a JSON string closes the block early; guessing where the block "really"
    # ends could broadcast half a reply, so it is an error like any other.
    with pytest.raises(InvalidJson):
        parse_text_action(render_text_action(ReplyAction(text="use ``` fences")))


def test_instructions_explain_the_format_and_list_every_tool() -> None:
    text = render_text_action_instructions(TOOLS)
    assert "exactly one fenced JSON block" in text
    assert '{"action": "call_tool", "tool": "<tool name>", "arguments": {<arguments>}}' in text
    assert '{"action": "reply", "text": "<your reply>"}' in text
    assert "- check_stock: Stock count for a SKU, live from the warehouse." in text
    assert (
        '  parameters: {"properties": {"sku": {"type": "string"}}, "required": ["sku"], '
        '"type": "object"}'
    ) in text
    assert "- list_coupons\n" in text + "\n"
    assert '  parameters: {"properties": {}, "type": "object"}' in text
    # the call_tool example is shown only when there is something to call
    assert "No tools are available" not in text


def test_instructions_without_tools_only_allow_replies() -> None:
    text = render_text_action_instructions([])
    assert "call_tool" not in text
    assert "No tools are available: always reply." in text


def test_instructions_reject_a_tool_without_a_name() -> None:
    with pytest.raises(ValueError, match="needs a string 'name'"):
        render_text_action_instructions([{"type": "function", "function": {"description": "x"}}])
