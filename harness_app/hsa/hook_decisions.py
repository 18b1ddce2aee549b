"""What every hook decides on a gold trajectory, so HSA can prove an edit did not change it.

The gold trajectory is the correct behaviour; its hook activations are the values the
runtime's hooks would see along it (the viewer comment, each tool call before and after it
runs, the final reply). ``decision_profile`` evaluates every hook on every activation of its
event (tool events only for tools its matcher selects) and records whether it fired and which
hook decides each step. HSA requires equal profiles before and after an edit (hook names are
never renamed, so profiles compare by name).

CEL evaluation costs a few hundred microseconds, so outcomes are cached by (condition, event,
the values of the variables the condition actually reads). That key is exact: a CEL
expression can only depend on the variables it names.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from harness_app.harness.conditions import (
    EVENT_VARIABLES,
    TOOL_EVENTS,
    CompiledCondition,
    ConditionError,
    ConditionRuntimeError,
    compile_condition,
    matcher_matches,
    sample_activation,
)
from harness_app.harness.model import Harness, Hook
from harness_app.harness.serialization import canonical_json
from harness_app.hsa.cel_refs import cel_references
from harness_app.hsa.trajectory import GoldTrajectory

Outcome = Literal["fired", "quiet", "error"]


@dataclass(frozen=True)
class Activation:
    """One point of the gold trajectory where hooks of ``event`` run."""

    event: str
    step: int  # call index for tool events, -1 otherwise
    tool_name: str
    values: Mapping[str, Any]


@dataclass(frozen=True)
class DecisionProfile:
    """Per hook: (event, step, fired) for each activation it ran on; per activation: the hook
    that decides it ('' when every hook allowed)."""

    fired: dict[str, tuple[tuple[str, int, bool], ...]]
    deciding: tuple[tuple[str, int, str], ...]


def gold_activations(trajectory: GoldTrajectory) -> Iterator[Activation]:
    yield Activation(
        "on_comment",
        -1,
        "",
        {"comment": trajectory.comment, "uv_id": "", "product_sku": trajectory.product_sku},
    )
    for index, call in enumerate(trajectory.tool_calls):
        args = dict(call.arguments)
        yield Activation("pre_tool_use", index, call.name, {"tool_name": call.name, "args": args})
        yield Activation(
            "post_tool_use",
            index,
            call.name,
            {
                "tool_name": call.name,
                "args": args,
                "result": dict(call.result or {}),
                "error": "",
            },
        )
    yield Activation(
        "pre_reply",
        -1,
        "",
        {
            "reply": trajectory.final_answer,
            "comment": trajectory.comment,
            "quoted_prices": list(trajectory.quoted_prices),
            "catalog_prices": list(trajectory.catalog_prices),
            "tool_names": [call.name for call in trajectory.tool_calls],
        },
    )


@lru_cache(maxsize=8192)
def compiled_condition(kind: str, source: str, event: str) -> CompiledCondition:
    """``compile_condition`` cached: compiling and type-checking CEL costs about a millisecond."""
    return compile_condition(kind, source, event)


@lru_cache(maxsize=4096)
def _read_variables(source: str, event: str) -> tuple[str, ...]:
    references = cel_references(source)
    declared = EVENT_VARIABLES[event]
    if references is None:
        return tuple(declared)
    return tuple(name for name in declared if name in references.identifiers)


@lru_cache(maxsize=8192)
def _cel_outcome(source: str, event: str, projected: str) -> Outcome:
    values = sample_activation(event, populated=False)
    values.update(json.loads(projected))
    try:
        fired = compiled_condition("cel", source, event).evaluate(values)
    except (ConditionRuntimeError, ConditionError):
        return "error"
    return "fired" if fired else "quiet"


def condition_outcome(kind: str, source: str, event: str, values: Mapping[str, Any]) -> Outcome:
    """Whether a condition fires on one activation ("error" when it cannot be evaluated)."""
    if kind == "cel":
        read = _read_variables(source, event)
        try:
            projected = canonical_json({name: values[name] for name in read if name in values})
        except (TypeError, ValueError):
            return "error"
        return _cel_outcome(source, event, projected)
    try:
        return "fired" if compiled_condition(kind, source, event).evaluate(values) else "quiet"
    except (ConditionRuntimeError, ConditionError):
        return "error"


def hook_fires(hook: Hook, activation: Activation) -> bool:
    """The runtime's reading of an outcome: an error counts as fired when fail_mode is closed."""
    outcome = condition_outcome(hook.condition_kind, hook.condition, hook.event, activation.values)
    if outcome == "error":
        return hook.fail_mode == "closed"
    return outcome == "fired"


def hook_applies(hook: Hook, activation: Activation) -> bool:
    if hook.event != activation.event:
        return False
    return activation.event not in TOOL_EVENTS or matcher_matches(
        hook.matcher, activation.tool_name
    )


def decision_profile(harness: Harness, trajectory: GoldTrajectory) -> DecisionProfile:
    if not harness.hooks:
        # (what the loop below gives without hooks: every step decided by none)
        steps = range(len(trajectory.tool_calls))
        return DecisionProfile(
            fired={},
            deciding=(
                ("on_comment", -1, ""),
                *(
                    (event, index, "")
                    for index in steps
                    for event in ("pre_tool_use", "post_tool_use")
                ),
                ("pre_reply", -1, ""),
            ),
        )
    fired: dict[str, list[tuple[str, int, bool]]] = {hook.name: [] for hook in harness.hooks}
    deciding: list[tuple[str, int, str]] = []
    for activation in gold_activations(trajectory):
        decider = ""
        for hook in harness.hooks:
            if not hook_applies(hook, activation):
                continue
            result = hook_fires(hook, activation)
            fired[hook.name].append((activation.event, activation.step, result))
            if result and not decider and hook.action != "allow":
                decider = hook.name
        deciding.append((activation.event, activation.step, decider))
    return DecisionProfile(
        fired={name: tuple(results) for name, results in fired.items()},
        deciding=tuple(deciding),
    )


def profile_differences(before: DecisionProfile, after: DecisionProfile) -> list[str]:
    """Human-readable differences between two profiles ([] when equal)."""
    problems = []
    for name in sorted(set(before.fired) | set(after.fired)):
        if before.fired.get(name) != after.fired.get(name):
            problems.append(
                f"hook '{name}' decides differently on the gold trajectory: "
                f"{before.fired.get(name)} before, {after.fired.get(name)} after"
            )
    if not problems and before.deciding != after.deciding:
        problems.append(
            f"a different hook decides a step of the gold trajectory: {before.deciding} before, "
            f"{after.deciding} after"
        )
    return problems
