"""Harness <-> plain data (JSON-compatible dicts and one YAML document).

``harness_to_dict`` is the canonical form: every field is written (defaults included) in the
dataclass order, floats stay floats, so equal harnesses give equal documents and equal
``component_hashes``. ``harness_from_dict`` is strict about shapes (types, unknown keys) and
fills defaults; it does *not* apply business rules — that is ``validation.py``'s job, so an
invalid-but-well-shaped harness can still be loaded, shown and fixed in the editor.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from typing import Any, cast

from harness_app.harness.errors import FieldError, HarnessValidationError, join_path
from harness_app.harness.model import (
    ConditionKind,
    ExecutorKind,
    FailMode,
    Harness,
    Hook,
    HookAction,
    HookEvent,
    Prompt,
    PromptSection,
    Skill,
    Tool,
    ToolExecutor,
)
from harness_app.harness.typed_reader import TypedReader, json_type_name
from harness_app.harness.yaml_codec import dump_yaml, load_yaml

HARNESS_KEYS = ("skills", "tools", "prompt", "hooks")
SKILL_KEYS = ("name", "description", "body", "allowed_tools")
TOOL_KEYS = ("name", "description", "input_schema", "executor", "read_only", "destructive")
EXECUTOR_KEYS = ("kind", "operation", "url", "timeout_s", "secret_ref")
SECTION_KEYS = ("id", "title", "template")
HOOK_KEYS = (
    "name",
    "event",
    "condition",
    "condition_kind",
    "matcher",
    "action",
    "feedback",
    "fallback_reply",
    "max_retries",
    "timeout_ms",
    "fail_mode",
)


def canonical_json(value: object) -> str:
    """Deterministic JSON text (sorted keys, no whitespace): the input to every hash."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


# --------------------------------------------------------------------------- to plain data


def skill_to_dict(skill: Skill) -> dict[str, Any]:
    return {
        "name": skill.name,
        "description": skill.description,
        "body": skill.body,
        "allowed_tools": list(skill.allowed_tools),
    }


def executor_to_dict(executor: ToolExecutor) -> dict[str, Any]:
    return {
        "kind": executor.kind,
        "operation": executor.operation,
        "url": executor.url,
        "timeout_s": float(executor.timeout_s),
        "secret_ref": executor.secret_ref,
    }


def tool_to_dict(tool: Tool) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": tool.description,
        "input_schema": copy.deepcopy(tool.input_schema),
        "executor": executor_to_dict(tool.executor),
        "read_only": tool.read_only,
        "destructive": tool.destructive,
    }


def section_to_dict(section: PromptSection) -> dict[str, Any]:
    return {"id": section.id, "title": section.title, "template": section.template}


def prompt_to_dict(prompt: Prompt) -> dict[str, Any]:
    return {"sections": [section_to_dict(s) for s in prompt.sections]}


def hook_to_dict(hook: Hook) -> dict[str, Any]:
    return {
        "name": hook.name,
        "event": hook.event,
        "condition": hook.condition,
        "condition_kind": hook.condition_kind,
        "matcher": hook.matcher,
        "action": hook.action,
        "feedback": hook.feedback,
        "fallback_reply": hook.fallback_reply,
        "max_retries": hook.max_retries,
        "timeout_ms": hook.timeout_ms,
        "fail_mode": hook.fail_mode,
    }


def harness_to_dict(harness: Harness) -> dict[str, Any]:
    """The canonical JSON-compatible form of a harness (all fields, stable order)."""
    return {
        "skills": [skill_to_dict(s) for s in harness.skills],
        "tools": [tool_to_dict(t) for t in harness.tools],
        "prompt": prompt_to_dict(harness.prompt),
        "hooks": [hook_to_dict(k) for k in harness.hooks],
    }


def component_hashes(harness: Harness) -> dict[str, str]:
    """sha256 of each component's canonical JSON, keyed skills/tools/prompt/hooks.

    Lets the registry and training runs tell which parts of two versions differ without
    diffing them, and lets a trace record exactly which harness state produced it.
    """
    document = harness_to_dict(harness)
    return {
        key: hashlib.sha256(canonical_json(document[key]).encode("utf-8")).hexdigest()
        for key in HARNESS_KEYS
    }


# ------------------------------------------------------------------------- from plain data


def read_skill(reader: TypedReader, value: object, path: str) -> Skill | None:
    data = reader.mapping(value, path, required=("name", "description"), optional=SKILL_KEYS[2:])
    if data is None:
        return None
    return Skill(
        name=reader.text(data, "name", path),
        description=reader.text(data, "description", path),
        body=reader.text(data, "body", path, ""),
        allowed_tools=reader.strings(data, "allowed_tools", path),
    )


def read_executor(reader: TypedReader, value: object, path: str) -> ToolExecutor:
    default = ToolExecutor()
    data = reader.mapping(value, path, optional=EXECUTOR_KEYS)
    if data is None:
        return default
    return ToolExecutor(
        kind=cast(ExecutorKind, reader.text(data, "kind", path, default.kind)),
        operation=reader.text(data, "operation", path, default.operation),
        url=reader.text(data, "url", path, default.url),
        timeout_s=reader.number(data, "timeout_s", path, default.timeout_s),
        secret_ref=reader.text(data, "secret_ref", path, default.secret_ref),
    )


def read_tool(reader: TypedReader, value: object, path: str) -> Tool | None:
    data = reader.mapping(value, path, required=("name", "description"), optional=TOOL_KEYS[2:])
    if data is None:
        return None
    default = Tool(name="", description="")
    executor = (
        read_executor(reader, data["executor"], join_path(path, "executor"))
        if "executor" in data
        else ToolExecutor()
    )
    return Tool(
        name=reader.text(data, "name", path),
        description=reader.text(data, "description", path),
        input_schema=reader.json_object(data, "input_schema", path, default.input_schema),
        executor=executor,
        read_only=reader.boolean(data, "read_only", path, default.read_only),
        destructive=reader.boolean(data, "destructive", path, default.destructive),
    )


def read_section(reader: TypedReader, value: object, path: str) -> PromptSection | None:
    data = reader.mapping(value, path, required=SECTION_KEYS)
    if data is None:
        return None
    return PromptSection(
        id=reader.text(data, "id", path),
        title=reader.text(data, "title", path),
        template=reader.text(data, "template", path),
    )


def read_prompt(reader: TypedReader, value: object, path: str) -> Prompt:
    data = reader.mapping(value, path, optional=("sections",))
    if data is None:
        return Prompt()
    sections_path = join_path(path, "sections")
    sections = [
        read_section(reader, item, join_path(sections_path, index))
        for index, item in enumerate(reader.array(data, "sections", path))
    ]
    return Prompt(sections=tuple(s for s in sections if s is not None))


def read_hook(reader: TypedReader, value: object, path: str) -> Hook | None:
    data = reader.mapping(
        value, path, required=("name", "event", "condition"), optional=HOOK_KEYS[3:]
    )
    if data is None:
        return None
    default = Hook(name="", event="pre_reply", condition="")
    return Hook(
        name=reader.text(data, "name", path),
        event=cast(HookEvent, reader.text(data, "event", path)),
        condition=reader.text(data, "condition", path),
        condition_kind=cast(
            ConditionKind, reader.text(data, "condition_kind", path, default.condition_kind)
        ),
        matcher=reader.text(data, "matcher", path, default.matcher),
        action=cast(HookAction, reader.text(data, "action", path, default.action)),
        feedback=reader.text(data, "feedback", path, default.feedback),
        fallback_reply=reader.text(data, "fallback_reply", path, default.fallback_reply),
        max_retries=reader.integer(data, "max_retries", path, default.max_retries),
        timeout_ms=reader.integer(data, "timeout_ms", path, default.timeout_ms),
        fail_mode=cast(FailMode, reader.text(data, "fail_mode", path, default.fail_mode)),
    )


def read_harness(reader: TypedReader, value: object, path: str = "") -> Harness:
    """Read a harness document, recording shape errors in ``reader`` (never raises)."""
    data = reader.mapping(value, path, optional=HARNESS_KEYS)
    if data is None:
        return Harness()
    skills = [
        read_skill(reader, item, join_path(path, "skills", index))
        for index, item in enumerate(reader.array(data, "skills", path))
    ]
    tools = [
        read_tool(reader, item, join_path(path, "tools", index))
        for index, item in enumerate(reader.array(data, "tools", path))
    ]
    prompt = (
        read_prompt(reader, data["prompt"], join_path(path, "prompt"))
        if "prompt" in data
        else Prompt()
    )
    hooks = [
        read_hook(reader, item, join_path(path, "hooks", index))
        for index, item in enumerate(reader.array(data, "hooks", path))
    ]
    return Harness(
        skills=tuple(s for s in skills if s is not None),
        tools=tuple(t for t in tools if t is not None),
        prompt=prompt,
        hooks=tuple(k for k in hooks if k is not None),
    )


def harness_from_dict(data: Mapping[str, Any]) -> Harness:
    """Build a harness from plain data; raises ``HarnessValidationError`` listing every
    wrong shape, wrong type or unknown key with its path. Missing optional fields get the
    dataclass defaults."""
    reader = TypedReader()
    harness = read_harness(reader, data)
    if reader.errors:
        raise HarnessValidationError(reader.errors)
    return harness


# ------------------------------------------------------------------------------------ YAML


def harness_to_yaml(harness: Harness) -> str:
    """One YAML document with the same content as ``harness_to_dict`` (raw edit mode)."""
    return dump_yaml(harness_to_dict(harness))


def harness_from_yaml(text: str) -> Harness:
    """Parse the raw-edit YAML; syntax errors carry line numbers (path ``yaml``), shape
    errors carry field paths."""
    data = load_yaml(text, path="yaml")
    if data is None:
        raise HarnessValidationError(
            [
                FieldError(
                    "yaml",
                    "the document is empty; expected a mapping with keys "
                    + ", ".join(HARNESS_KEYS),
                )
            ]
        )
    if not isinstance(data, Mapping):
        raise HarnessValidationError(
            [
                FieldError(
                    "yaml",
                    "the document must be a mapping with keys "
                    f"{', '.join(HARNESS_KEYS)}; got {json_type_name(data)}",
                )
            ]
        )
    return harness_from_dict(data)
