"""Tools in the OpenAI chat-completions ``tools`` format, optionally with HAT extensions.

``{"type": "function", "function": {"name", "description", "parameters"}}`` is what vLLM's
OpenAI-compatible server and most tool-calling datasets use, so it is the exchange format for
tool registries. What that format cannot hold (how the tool runs, its read-only/destructive
annotations) travels in a top-level ``"x-hat"`` key when ``include_extensions`` is set, which
keeps the archive export lossless while staying readable by other OpenAI-format tools.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from harness_app.harness.errors import HarnessValidationError, join_path
from harness_app.harness.model import CATALOG_OPERATIONS, Tool, ToolExecutor
from harness_app.harness.serialization import executor_to_dict, read_executor
from harness_app.harness.typed_reader import TypedReader, json_type_name

EXTENSION_KEY = "x-hat"
_FUNCTION_KEYS = ("name", "description", "parameters", "strict")
_EXTENSION_KEYS = ("executor", "read_only", "destructive")


def to_openai_tools(
    tools: Iterable[Tool], include_extensions: bool = False
) -> list[dict[str, Any]]:
    """OpenAI ``tools`` entries, in order; with ``include_extensions`` each entry also
    carries ``"x-hat": {"executor", "read_only", "destructive"}``."""
    entries: list[dict[str, Any]] = []
    for tool in tools:
        entry: dict[str, Any] = {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": copy.deepcopy(tool.input_schema),
            },
        }
        if include_extensions:
            entry[EXTENSION_KEY] = {
                "executor": executor_to_dict(tool.executor),
                "read_only": tool.read_only,
                "destructive": tool.destructive,
            }
        entries.append(entry)
    return entries


def from_openai_tools(data: object) -> tuple[Tool, ...]:
    """Tools from a list of OpenAI entries, wrapped (``{"type": "function", "function":
    {...}}``) or bare (``{"name", "description", "parameters"}``).

    Without an ``x-hat`` extension a tool gets the default annotations and, when its name is
    a built-in catalog operation, that catalog executor; otherwise its executor is left for
    the operator to set (validation says so). Raises ``HarnessValidationError`` with paths
    like ``tools[3].function.parameters``.
    """
    reader = TypedReader()
    if not isinstance(data, list):
        reader.error("tools", f"must be a list of tool definitions, got {json_type_name(data)}")
        raise HarnessValidationError(reader.errors)
    tools: list[Tool] = []
    for index, item in enumerate(data):
        tool = _read_entry(reader, item, join_path("tools", index))
        if tool is not None:
            tools.append(tool)
    if reader.errors:
        raise HarnessValidationError(reader.errors)
    return tuple(tools)


def _read_entry(reader: TypedReader, item: object, path: str) -> Tool | None:
    if isinstance(item, dict) and ("function" in item or "type" in item):
        entry = reader.mapping(item, path, required=("type", "function"), optional=(EXTENSION_KEY,))
        if entry is None:
            return None
        if entry.get("type") != "function":
            reader.error(
                join_path(path, "type"),
                f'type {entry.get("type")!r} is not supported; only "function"',
            )
        function_path = join_path(path, "function")
        function = entry.get("function")
    else:
        entry = reader.mapping(item, path, optional=(*_FUNCTION_KEYS, EXTENSION_KEY))
        if entry is None:
            return None
        function_path = path
        function = {k: v for k, v in entry.items() if k != EXTENSION_KEY}
    fields = reader.mapping(
        function, function_path, required=("name",), optional=_FUNCTION_KEYS[1:]
    )
    if fields is None:
        return None
    if "strict" in fields and not isinstance(fields["strict"], bool):
        reader.error(join_path(function_path, "strict"), "must be true or false")
    name = reader.text(fields, "name", function_path)
    default = Tool(name="", description="")
    parameters = reader.json_object(fields, "parameters", function_path, default.input_schema)
    executor = (
        ToolExecutor(kind="catalog", operation=name)
        if name in CATALOG_OPERATIONS
        else ToolExecutor()
    )
    read_only, destructive = default.read_only, default.destructive
    if EXTENSION_KEY in entry:
        extension_path = join_path(path, EXTENSION_KEY)
        extension = reader.mapping(entry[EXTENSION_KEY], extension_path, optional=_EXTENSION_KEYS)
        if extension is not None:
            if "executor" in extension:
                executor = read_executor(
                    reader, extension["executor"], join_path(extension_path, "executor")
                )
            read_only = reader.boolean(extension, "read_only", extension_path, read_only)
            destructive = reader.boolean(extension, "destructive", extension_path, destructive)
    return Tool(
        name=name,
        description=reader.text(fields, "description", function_path, ""),
        input_schema=parameters,
        executor=executor,
        read_only=read_only,
        destructive=destructive,
    )
