"""A text action format for models that have no server-side tool-call parser.

Small models (the embedded SmolLM2-135M worker, any checkpoint served without
``--tool-call-parser``) cannot return OpenAI ``tool_calls``. They can still drive the same
agent loop if they write their decision as text that we parse strictly. Every answer is
exactly one fenced JSON block::

    ```json
    {"action": "call_tool", "tool": "check_stock", "arguments": {"sku": "A-1"}}
    ```

or::

    ```json
    {"action": "reply", "text": "Yes, size M is in stock."}
    ```

Text outside the block is tolerated (small models like to say "Sure!") but ignored, and kept
on the result for traces. Everything else is strict, because a lenient parser would turn a
malformed answer into a wrong tool call on air: every failure is a specific
``TextActionError`` whose message is written to be fed back to the model as retry feedback.

Pure Python, no Django; ``render_text_action_instructions`` writes the matching system-prompt
section so that the parser and the instructions can never drift apart.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

CALL_TOOL = "call_tool"
REPLY = "reply"
ACTIONS = (CALL_TOOL, REPLY)

# The keys each action must have, exactly: extra keys are errors so that a typo such as
# "args" is reported instead of silently calling the tool with no arguments.
_REQUIRED_KEYS: dict[str, frozenset[str]] = {
    CALL_TOOL: frozenset({"action", "tool", "arguments"}),
    REPLY: frozenset({"action", "text"}),
}

# A ```json fence (any case, optional spaces) up to the next closing fence.
_JSON_BLOCK = re.compile(r"```[ \t]*json[ \t]*\r?\n?(?P<body>.*?)```", re.IGNORECASE | re.DOTALL)
_JSON_OPENER = re.compile(r"```[ \t]*json", re.IGNORECASE)
_ANY_FENCE = re.compile(r"```")


# --- results ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallToolAction:
    """The model asks to run ``tool`` with ``arguments`` (already a JSON object)."""

    tool: str
    arguments: dict[str, Any]
    surrounding_text: str = ""
    kind: Literal["call_tool"] = field(default="call_tool", init=False)


@dataclass(frozen=True)
class ReplyAction:
    """The model's final answer to the viewer."""

    text: str
    surrounding_text: str = ""
    kind: Literal["reply"] = field(default="reply", init=False)


TextAction = CallToolAction | ReplyAction


# --- errors ----------------------------------------------------------------------------------


class TextActionError(ValueError):
    """The answer does not follow the text action format. ``code`` is stable for metrics;
    the message says what was wrong and what is allowed."""

    code = "text_action_error"


class NoJsonBlock(TextActionError):
    code = "no_json_block"


class MultipleJsonBlocks(TextActionError):
    code = "multiple_json_blocks"

    def __init__(self, count: int) -> None:
        self.count = count
        super().__init__(
            f"found {count} ```json blocks; write exactly one block per answer "
            "(one tool call, or one reply)"
        )


class InvalidJson(TextActionError):
    code = "invalid_json"


class WrongKeys(TextActionError):
    code = "wrong_keys"


class InvalidFieldValue(TextActionError):
    code = "invalid_field_value"


class UnknownAction(TextActionError):
    code = "unknown_action"


class UnknownTool(TextActionError):
    code = "unknown_tool"


# --- parsing ---------------------------------------------------------------------------------


def parse_text_action(text: str, *, allowed_tools: Collection[str] | None = None) -> TextAction:
    """Parse one model answer into a ``CallToolAction`` or ``ReplyAction``.

    ``allowed_tools``, when given, also rejects tool names that are not offered (the agent
    may prefer to check names itself, to count unknown-tool calls separately).
    Raises a ``TextActionError`` subclass naming the exact problem.
    """
    blocks = list(_JSON_BLOCK.finditer(text))
    if not blocks:
        raise NoJsonBlock(_explain_missing_block(text))
    if len(blocks) > 1:
        raise MultipleJsonBlocks(len(blocks))
    block = blocks[0]
    surrounding = (text[: block.start()] + text[block.end() :]).strip()
    # A stray ```json opener after the one closed block means the model started a second one.
    if _JSON_OPENER.search(text, block.end()):
        raise MultipleJsonBlocks(2)

    payload = _load_object(block.group("body"))
    action = payload.get("action")
    if not isinstance(action, str):
        raise InvalidFieldValue(
            f'"action" must be a string, one of {_quoted(ACTIONS)}; got {_describe(action)}'
        )
    if action not in _REQUIRED_KEYS:
        raise UnknownAction(f'unknown action "{action}"; allowed actions are {_quoted(ACTIONS)}')
    _check_keys(action, payload)

    if action == CALL_TOOL:
        tool = payload["tool"]
        arguments = payload["arguments"]
        if not isinstance(tool, str) or not tool.strip():
            raise InvalidFieldValue(f'"tool" must be a non-empty string; got {_describe(tool)}')
        if not isinstance(arguments, dict):
            raise InvalidFieldValue(
                f'"arguments" must be a JSON object ({{}} when the tool takes none); '
                f"got {_describe(arguments)}"
            )
        if allowed_tools is not None and tool not in allowed_tools:
            raise UnknownTool(
                f'unknown tool "{tool}"; available tools are {_quoted(sorted(allowed_tools))}'
            )
        return CallToolAction(tool=tool, arguments=arguments, surrounding_text=surrounding)

    reply_text = payload["text"]
    if not isinstance(reply_text, str):
        raise InvalidFieldValue(f'"text" must be a string; got {_describe(reply_text)}')
    return ReplyAction(text=reply_text, surrounding_text=surrounding)


def _explain_missing_block(text: str) -> str:
    if _JSON_OPENER.search(text):
        return "the ```json block is not closed; end it with ``` on its own line"
    if _ANY_FENCE.search(text):
        return "found a ``` block without the json tag; open the block with ```json"
    return 'no ```json block found; answer with one ```json block holding {"action": ...}'


def _load_object(body: str) -> dict[str, Any]:
    try:
        value = json.loads(body, object_pairs_hook=_reject_duplicate_keys)
    except _DuplicateKey as exc:
        raise InvalidJson(f'the JSON object repeats the key "{exc.key}"') from None
    except json.JSONDecodeError as exc:
        raise InvalidJson(
            f"the block is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    if not isinstance(value, dict):
        raise WrongKeys(f"the block must hold one JSON object; got {_describe(value)}")
    return value


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads keeps the last duplicate silently; a model that wrote two "tool" keys has
    # not decided which tool it wants, so that is an error, not a choice for us to make.
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


def _check_keys(action: str, payload: Mapping[str, Any]) -> None:
    expected = _REQUIRED_KEYS[action]
    present = set(payload)
    missing = sorted(expected - present)
    unexpected = sorted(present - expected)
    if missing or unexpected:
        parts = [f'action "{action}" takes exactly the keys {_quoted(sorted(expected))}']
        if missing:
            parts.append(f"missing: {_quoted(missing)}")
        if unexpected:
            parts.append(f"unexpected: {_quoted(unexpected)}")
        raise WrongKeys("; ".join(parts))


def _quoted(names: Iterable[str]) -> str:
    return ", ".join(f'"{n}"' for n in names)


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    kind = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), "a number" if isinstance(value, int | float) else type(value).__name__
    )
    shown = json.dumps(value, ensure_ascii=False, default=str)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"{kind} {shown}"


# --- writing ---------------------------------------------------------------------------------


def render_text_action(action: TextAction) -> str:
    """The canonical text for an action: what a well-behaved model writes. Used to write
    gold trajectories for text-mode training data and by tests to round-trip the parser."""
    if isinstance(action, CallToolAction):
        payload: dict[str, Any] = {
            "action": CALL_TOOL,
            "tool": action.tool,
            "arguments": action.arguments,
        }
    else:
        payload = {"action": REPLY, "text": action.text}
    return "```json\n" + json.dumps(payload, ensure_ascii=False) + "\n```"


def render_text_action_instructions(tools: Iterable[Mapping[str, Any]]) -> str:
    """The system-prompt section that teaches the format and lists the tools.

    ``tools`` are OpenAI tool specs (``{"type": "function", "function": {...}}``) or bare
    ``{"name", "description", "parameters"}`` dicts, so a harness's tool list can be passed
    as it is sent to a server with native tool calling.
    """
    specs = [_function_spec(t) for t in tools]
    lines = [
        "## How to answer",
        "Answer with exactly one fenced JSON block. Write one block per answer, never two.",
        "",
    ]
    if specs:
        lines += [
            "To call a tool:",
            "```json",
            '{"action": "call_tool", "tool": "<tool name>", "arguments": {<arguments>}}',
            "```",
            'The "arguments" object must match the tool\'s parameters; use {} when it takes '
            "none. After a tool call you receive its result, then answer again.",
            "",
        ]
    lines += [
        "To reply to the viewer:",
        "```json",
        '{"action": "reply", "text": "<your reply>"}',
        "```",
        "",
    ]
    if not specs:
        lines.append("No tools are available: always reply.")
        return "\n".join(lines)
    lines.append("## Tools")
    for spec in specs:
        description = " ".join(str(spec.get("description") or "").split())
        lines.append(f"- {spec['name']}: {description}" if description else f"- {spec['name']}")
        parameters = spec.get("parameters") or {"type": "object", "properties": {}}
        lines.append("  parameters: " + json.dumps(parameters, ensure_ascii=False, sort_keys=True))
    return "\n".join(lines)


def _function_spec(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = tool.get("function", tool)
    if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
        raise ValueError(f"a tool spec needs a string 'name'; got {tool!r}")
    return spec
