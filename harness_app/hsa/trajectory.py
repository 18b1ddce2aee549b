"""The gold trajectory: what the correct agent does for one viewer message.

HSA changes the surface of a harness (names, wording, layout), never the task, so the gold
answer of a training example must change with it: the skill to load, the tool calls and their
argument names are rewritten through a ``RenameMapping``; the final answer is kept verbatim
(it is what viewers hear, and it never names skills or tools).

The optional context fields (``comment``, ``product_sku``, prices, tool ``result``s) are the
values hooks see at run time; they let HSA check that a hook decides the same way on the gold
trajectory before and after an edit (see ``hook_decisions``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness_app.harness.serialization import canonical_json


class TrajectoryFormatError(ValueError):
    """A trajectory document has the wrong shape; the message names the field."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call of the gold trajectory. ``result`` is what the tool returned (optional;
    post_tool_use hooks and the catalog-price check read it)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] | None = None


@dataclass(frozen=True)
class GoldTrajectory:
    """Skill choice, tool calls with arguments and the final answer of one example."""

    skill: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    final_answer: str = ""
    comment: str = ""
    product_sku: str = ""
    quoted_prices: tuple[float, ...] = ()
    catalog_prices: tuple[float, ...] = ()


def trajectory_to_dict(trajectory: GoldTrajectory) -> dict[str, Any]:
    """Plain JSON data; every field written so equal trajectories give equal documents."""
    return {
        "skill": trajectory.skill,
        "tool_calls": [
            {"name": call.name, "arguments": dict(call.arguments), "result": call.result}
            for call in trajectory.tool_calls
        ],
        "final_answer": trajectory.final_answer,
        "comment": trajectory.comment,
        "product_sku": trajectory.product_sku,
        "quoted_prices": list(trajectory.quoted_prices),
        "catalog_prices": list(trajectory.catalog_prices),
    }


def _text(data: Mapping[str, Any], key: str, path: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise TrajectoryFormatError(f"{path}{key} must be a string")
    return value


def _prices(data: Mapping[str, Any], key: str) -> tuple[float, ...]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(
        isinstance(item, int | float) and not isinstance(item, bool) for item in value
    ):
        raise TrajectoryFormatError(f"{key} must be a list of numbers")
    return tuple(float(item) for item in value)


def _call_from_dict(value: object, index: int) -> ToolCall:
    path = f"tool_calls[{index}]."
    if not isinstance(value, Mapping):
        raise TrajectoryFormatError(f"tool_calls[{index}] must be an object")
    unknown = sorted(set(value) - {"name", "arguments", "result"})
    if unknown:
        raise TrajectoryFormatError(f"{path} has unknown keys: {', '.join(unknown)}")
    arguments = value.get("arguments", {})
    if not isinstance(arguments, Mapping):
        raise TrajectoryFormatError(f"{path}arguments must be an object")
    result = value.get("result")
    if result is not None and not isinstance(result, Mapping):
        raise TrajectoryFormatError(f"{path}result must be an object or null")
    return ToolCall(
        name=_text(value, "name", path),
        arguments=dict(arguments),
        result=None if result is None else dict(result),
    )


def trajectory_from_dict(data: Mapping[str, Any]) -> GoldTrajectory:
    """Read a trajectory document; raises ``TrajectoryFormatError`` naming the bad field."""
    if not isinstance(data, Mapping):
        raise TrajectoryFormatError("a trajectory must be an object")
    known = {
        "skill",
        "tool_calls",
        "final_answer",
        "comment",
        "product_sku",
        "quoted_prices",
        "catalog_prices",
    }
    unknown = sorted(set(data) - known)
    if unknown:
        raise TrajectoryFormatError(f"unknown keys: {', '.join(unknown)}")
    skill = data.get("skill")
    if skill is not None and not isinstance(skill, str):
        raise TrajectoryFormatError("skill must be a string or null")
    calls = data.get("tool_calls", [])
    if not isinstance(calls, list):
        raise TrajectoryFormatError("tool_calls must be a list")
    return GoldTrajectory(
        skill=skill,
        tool_calls=tuple(_call_from_dict(call, index) for index, call in enumerate(calls)),
        final_answer=_text(data, "final_answer", "", ""),
        comment=_text(data, "comment", "", ""),
        product_sku=_text(data, "product_sku", "", ""),
        quoted_prices=_prices(data, "quoted_prices"),
        catalog_prices=_prices(data, "catalog_prices"),
    )


def trajectory_to_json(trajectory: GoldTrajectory) -> str:
    """Canonical JSON text (sorted keys): equal trajectories give identical text."""
    return canonical_json(trajectory_to_dict(trajectory))


def trajectory_from_json(text: str) -> GoldTrajectory:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TrajectoryFormatError(f"invalid JSON: {exc}") from exc
    return trajectory_from_dict(data)
