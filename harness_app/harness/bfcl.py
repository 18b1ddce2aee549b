"""Importing Berkeley Function Calling Leaderboard (BFCL) functions as harness tools.

BFCL schemas are "JSON Schema as Python programmers write it": ``"type": "dict"`` for
objects, ``"float"`` for numbers, ``"tuple"`` for arrays, ``"any"`` for anything. A tool's
``input_schema`` must be valid Draft 2020-12, so ``normalise_bfcl_schema`` maps those types,
drops keywords that are not standard (or have a value of the wrong shape) and keeps the
standard ones. BFCL functions have no executor; they get a webhook placeholder on the reserved
``.invalid`` domain, so they validate but can never reach a real host.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from harness_app.harness.model import Harness, Tool, ToolExecutor
from harness_app.harness.validation import validate_harness

BFCL_WEBHOOK_BASE = "https://example.invalid/bfcl/"
BFCL_SECRET_REF = "BFCL_WEBHOOK_SECRET"

# BFCL / Python type names -> JSON Schema types (None: no type constraint).
TYPE_ALIASES: dict[str, str | None] = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "any": None,
    "list": "array",
    "str": "string",
    "int": "integer",
    "bool": "boolean",
}
JSON_SCHEMA_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
# Keywords kept as they are (after a shape check); anything else is dropped.
_KEPT_SCALAR_KEYWORDS: dict[str, type | tuple[type, ...]] = {
    "description": str,
    "title": str,
    "pattern": str,
    "format": str,
    "minimum": (int, float),
    "maximum": (int, float),
    "exclusiveMinimum": (int, float),
    "exclusiveMaximum": (int, float),
    "minLength": int,
    "maxLength": int,
    "minItems": int,
    "maxItems": int,
    "uniqueItems": bool,
}


@dataclass
class BfclImportReport:
    """Outcome of importing a BFCL file: (case id, tool) pairs, (case id, reason) failures,
    and (case id, note) for every normalisation that changed more than a type name."""

    imported: list[tuple[str, Tool]] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)


def normalise_bfcl_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A Draft 2020-12 version of a BFCL parameter schema (the input is not modified)."""
    return _normalise(schema, "", [])


def _normalise(schema: Mapping[str, Any], path: str, notes: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in schema.items():
        where = f"{path}.{key}" if path else key
        if key == "type":
            mapped = _normalise_type(value)
            if mapped is not None:
                result["type"] = mapped
            elif value == "any":
                notes.append(f"type 'any' at {where}: type constraint removed")
            else:
                notes.append(f"dropped unknown type {value!r} at {where}")
        elif key == "properties" and isinstance(value, Mapping):
            result["properties"] = {
                str(name): _normalise(child, f"{where}.{name}", notes)
                if isinstance(child, Mapping)
                else {}
                for name, child in value.items()
            }
        elif key == "items" and isinstance(value, Mapping):
            result["items"] = _normalise(value, where, notes)
        elif key == "items" and isinstance(value, list):
            # Draft 4-7 tuple form; Draft 2020-12 spells it prefixItems.
            result["prefixItems"] = [
                _normalise(item, f"{where}[{i}]", notes) if isinstance(item, Mapping) else {}
                for i, item in enumerate(value)
            ]
            notes.append(f"items list at {where} became prefixItems")
        elif key == "required":
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                result["required"] = list(dict.fromkeys(value))
            else:
                notes.append(f"dropped non-list required at {where}")
        elif key == "enum":
            if isinstance(value, list):
                result["enum"] = json.loads(json.dumps(value))
            else:
                notes.append(f"dropped non-list enum at {where}")
        elif key == "default":
            result["default"] = json.loads(json.dumps(value, default=str))
        elif key in _KEPT_SCALAR_KEYWORDS:
            expected = _KEPT_SCALAR_KEYWORDS[key]
            well_typed = (
                isinstance(value, bool)
                if expected is bool
                else isinstance(value, expected) and not isinstance(value, bool)
            )
            if well_typed:
                result[key] = value
            else:
                notes.append(f"dropped {key} with a value of the wrong type at {where}")
        else:
            notes.append(f"dropped non-standard keyword {key!r} at {where}")
    enum = result.get("enum")
    if (
        result.get("type") == "array"
        and isinstance(enum, list)
        and not any(isinstance(value, list) for value in enum)
    ):
        # An enum of scalars on an array can never match; BFCL means "each item is one of".
        items = result.setdefault("items", {})
        if isinstance(items, dict) and "enum" not in items:
            items["enum"] = result.pop("enum")
            notes.append(f"enum on array moved to items at {path or 'parameters'}")
    return result


def _normalise_type(value: object) -> str | list[str] | None:
    if isinstance(value, str):
        mapped = TYPE_ALIASES.get(value, value)
        return mapped if mapped in JSON_SCHEMA_TYPES else None
    if isinstance(value, list):
        mapped_types = [_normalise_type(v) for v in value]
        if any(t is None for t in mapped_types):
            return None  # a union containing "any" is unconstrained
        return list(dict.fromkeys(t for t in mapped_types if isinstance(t, str)))
    return None


def tool_from_bfcl(function: Mapping[str, Any]) -> Tool:
    """A harness tool for one BFCL function definition (webhook placeholder executor)."""
    return _tool_from_bfcl(function, [])


def _tool_from_bfcl(function: Mapping[str, Any], notes: list[str]) -> Tool:
    name = str(function.get("name", ""))
    description = str(function.get("description", "")).strip()
    if not description:
        description = f"BFCL function {name}."
        notes.append("empty description replaced by a placeholder")
    raw_parameters = function.get("parameters")
    parameters = (
        _normalise(raw_parameters, "parameters", notes)
        if isinstance(raw_parameters, Mapping)
        else {}
    )
    if parameters.get("type") != "object":
        notes.append(f"top-level type {parameters.get('type')!r} set to 'object'")
        parameters["type"] = "object"
    parameters.setdefault("properties", {})
    return Tool(
        name=name,
        description=description,
        input_schema=parameters,
        executor=ToolExecutor(
            kind="webhook",
            url=BFCL_WEBHOOK_BASE + quote(name, safe=""),
            secret_ref=BFCL_SECRET_REF,
        ),
        # Nothing says a BFCL function is free of side effects, so it is not marked read-only.
        read_only=False,
        destructive=False,
    )


def import_bfcl_file(path: str | Path) -> BfclImportReport:
    """Import every function of a BFCL ``*.jsonl`` file; each tool must validate alone in a
    harness, otherwise the case is listed in ``failures`` with the reasons."""
    report = BfclImportReport()
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    for line_number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        case_id = f"line {line_number}"
        try:
            case = json.loads(line)
        except json.JSONDecodeError as exc:
            report.failures.append((case_id, f"invalid JSON: {exc}"))
            continue
        if not isinstance(case, dict):
            report.failures.append((case_id, "a case must be a JSON object"))
            continue
        case_id = str(case.get("id", case_id))
        functions = case.get("function")
        if not isinstance(functions, list) or not functions:
            report.failures.append((case_id, "'function' must be a non-empty list"))
            continue
        for function in functions:
            if not isinstance(function, dict):
                report.failures.append((case_id, "each function must be a JSON object"))
                continue
            notes: list[str] = []
            tool = _tool_from_bfcl(function, notes)
            errors = validate_harness(Harness(tools=(tool,)))
            if errors:
                report.failures.append((case_id, "; ".join(str(e) for e in errors)))
                continue
            report.imported.append((case_id, tool))
            report.notes.extend((case_id, note) for note in notes)
    return report


# JSON Schema types -> the BFCL spelling its checker reads (``ast_checker.PYTHON_TYPE_MAPPING``).
_BFCL_TYPES: dict[str, str] = {"object": "dict", "number": "float"}


def bfcl_schema_from_json_schema(schema: Mapping[str, Any], *, top: bool = False) -> dict[str, Any]:
    """A Draft 2020-12 parameter schema written back in BFCL's dialect, accepting the same
    arguments once re-imported with ``normalise_bfcl_schema``: ``dict``/``float`` type names,
    a one-type list as the type itself, no type as ``any``, ``const`` as a one-value
    ``enum``, ``prefixItems`` as an ``items`` list, and an explicit ``additionalProperties:
    true`` (the default) dropped. The top level always has ``properties`` and ``required``,
    which BFCL's checker reads unconditionally."""
    result: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type":
            kinds = value if isinstance(value, list) else [value]
            names = [_BFCL_TYPES.get(str(kind), str(kind)) for kind in kinds]
            result["type"] = names[0] if len(names) == 1 else names
        elif key == "properties" and isinstance(value, Mapping):
            result["properties"] = {
                str(name): bfcl_schema_from_json_schema(sub) if isinstance(sub, Mapping) else sub
                for name, sub in value.items()
            }
        elif key == "items" and isinstance(value, Mapping):
            result["items"] = bfcl_schema_from_json_schema(value)
        elif key == "prefixItems" and isinstance(value, list):
            result["items"] = [
                bfcl_schema_from_json_schema(sub) if isinstance(sub, Mapping) else sub
                for sub in value
            ]
        elif key == "const":
            result["enum"] = [value]
        elif key == "additionalProperties" and value is True:
            continue
        else:
            result[key] = value
    if "type" not in result:
        result["type"] = "dict" if top else "any"
    if top:
        result.setdefault("properties", {})
        result.setdefault("required", [])
    return result


def bfcl_function_from_tool(tool: Tool) -> dict[str, Any]:
    """A harness tool as a BFCL function definition (``name``, ``description``,
    ``parameters`` in BFCL's schema dialect)."""
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": bfcl_schema_from_json_schema(tool.input_schema, top=True),
    }
