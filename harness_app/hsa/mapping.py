"""Renames made by a transform, so the gold trajectory can follow the harness.

A ``RenameMapping`` records old -> new names for skills, tools and (top-level) tool
parameters. Parameter renames are keyed by the tool's name *before* the mapping, so one
mapping is self-contained. Mappings compose (a chain of transforms is one mapping from the
original harness to the final one) and invert (the augmented gold trajectory maps back to the
original exactly); renames are injective by construction, which is what makes ``inverse`` exact.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness_app.hsa.trajectory import GoldTrajectory, ToolCall


def _compose_names(first: Mapping[str, str], then: Mapping[str, str]) -> dict[str, str]:
    inverse_first = {new: old for old, new in first.items()}
    result = {old: then.get(mid, mid) for old, mid in first.items()}
    for mid, new in then.items():
        if mid not in inverse_first:
            result[mid] = new
    return {old: new for old, new in result.items() if old != new}


@dataclass(frozen=True)
class RenameMapping:
    """old -> new names; an empty mapping is the identity."""

    skill_renames: dict[str, str] = field(default_factory=dict)
    tool_renames: dict[str, str] = field(default_factory=dict)
    param_renames: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def is_identity(self) -> bool:
        return not (
            self.skill_renames
            or self.tool_renames
            or any(renames for renames in self.param_renames.values())
        )

    def skill(self, name: str) -> str:
        return self.skill_renames.get(name, name)

    def tool(self, name: str) -> str:
        return self.tool_renames.get(name, name)

    def param(self, tool: str, name: str) -> str:
        """New name of parameter ``name`` of the tool called ``tool`` before the mapping."""
        renames = self.param_renames.get(tool)
        return renames.get(name, name) if renames else name

    def apply_arguments(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        renames = self.param_renames.get(tool)
        if not renames:
            return dict(arguments)
        return {renames.get(key, key): value for key, value in arguments.items()}

    def apply(self, trajectory: GoldTrajectory) -> GoldTrajectory:
        """The trajectory with every skill, tool and parameter name rewritten."""
        if self.is_identity:
            return trajectory
        calls = tuple(
            ToolCall(
                name=self.tool(call.name),
                arguments=self.apply_arguments(call.name, call.arguments),
                result=call.result,
            )
            for call in trajectory.tool_calls
        )
        return GoldTrajectory(
            skill=None if trajectory.skill is None else self.skill(trajectory.skill),
            tool_calls=calls,
            final_answer=trajectory.final_answer,
            comment=trajectory.comment,
            product_sku=trajectory.product_sku,
            quoted_prices=trajectory.quoted_prices,
            catalog_prices=trajectory.catalog_prices,
        )

    def inverse(self) -> RenameMapping:
        """new -> old: ``m.inverse().apply(m.apply(t)) == t`` for any trajectory ``t``."""
        return RenameMapping(
            skill_renames={new: old for old, new in self.skill_renames.items()},
            tool_renames={new: old for old, new in self.tool_renames.items()},
            param_renames={
                self.tool(tool): {new: old for old, new in renames.items()}
                for tool, renames in self.param_renames.items()
                if renames
            },
        )

    def compose(self, then: RenameMapping) -> RenameMapping:
        """This mapping followed by ``then`` (``then`` uses the names this one produces)."""
        if then.is_identity:
            return self
        if self.is_identity:
            return then
        inverse_tools = {new: old for old, new in self.tool_renames.items()}
        originals = list(self.param_renames)
        originals += [
            inverse_tools.get(mid, mid)
            for mid in then.param_renames
            if inverse_tools.get(mid, mid) not in self.param_renames
        ]
        params: dict[str, dict[str, str]] = {}
        for original in originals:
            composed = _compose_names(
                self.param_renames.get(original, {}),
                then.param_renames.get(self.tool(original), {}),
            )
            if composed:
                params[original] = composed
        return RenameMapping(
            skill_renames=_compose_names(self.skill_renames, then.skill_renames),
            tool_renames=_compose_names(self.tool_renames, then.tool_renames),
            param_renames=params,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "skill_renames": dict(self.skill_renames),
            "tool_renames": dict(self.tool_renames),
            "param_renames": {tool: dict(r) for tool, r in self.param_renames.items() if r},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RenameMapping:
        """Read ``to_dict`` output; raises ``ValueError`` for a wrong shape."""

        def names(value: object, label: str) -> dict[str, str]:
            if not isinstance(value, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()
            ):
                raise ValueError(f"{label} must map names to names")
            return dict(value)

        params = data.get("param_renames", {})
        if not isinstance(params, Mapping):
            raise ValueError("param_renames must map tool names to renames")
        return cls(
            skill_renames=names(data.get("skill_renames", {}), "skill_renames"),
            tool_renames=names(data.get("tool_renames", {}), "tool_renames"),
            param_renames={
                str(tool): names(renames, f"param_renames.{tool}")
                for tool, renames in params.items()
            },
        )


IDENTITY = RenameMapping()
