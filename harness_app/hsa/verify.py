"""Checks that an augmented (harness, gold trajectory) pair is valid, never assumed.

``verify_pair`` is what any consumer can ask of a pair: the harness is valid, the gold skill
exists and allows the tools it calls, every called tool exists, and every call's arguments
validate against that tool's input schema. ``augmentation_problems`` adds what only holds
relative to the original pair: the mapping explains the new trajectory and inverts exactly,
tool permissions and hook decisions are unchanged on the gold trajectory, and every
constraint line of every original skill survives (modulo the renames).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness_app.harness.model import Harness, Tool
from harness_app.hsa.harness_check import (
    KnownValid,
    argument_validator,
    arguments_valid,
    harness_problems,
    schema_errors,
)
from harness_app.hsa.hook_decisions import DecisionProfile, decision_profile, profile_differences
from harness_app.hsa.mapping import RenameMapping
from harness_app.hsa.renaming import rewrite_text
from harness_app.hsa.skill_body import constraint_units, missing_units
from harness_app.hsa.trajectory import GoldTrajectory


def _allowed(harness: Harness, skill_name: str | None, tool: str) -> bool:
    """A skill with an ``allowed_tools`` list restricts calls to it; an empty list (or no
    skill) restricts nothing, as in the Agent Skills convention."""
    if skill_name is None:
        return True
    skill = harness.skill(skill_name)
    return skill is None or not skill.allowed_tools or tool in skill.allowed_tools


def trajectory_problems(
    harness: Harness, trajectory: GoldTrajectory, known: KnownValid | None = None
) -> list[str]:
    """What is wrong with a gold trajectory against a harness ([] when it fits).
    ``known``: objects of an already verified harness (``harness_check.known_valid``)."""
    problems: list[str] = []
    if trajectory.skill is not None and harness.skill(trajectory.skill) is None:
        problems.append(f"gold skill '{trajectory.skill}' is not a skill of the harness")
    for index, call in enumerate(trajectory.tool_calls):
        where = f"tool_calls[{index}]"
        tool = harness.tool(call.name)
        if tool is None:
            problems.append(f"{where}: tool '{call.name}' is not a tool of the harness")
            continue
        if not _allowed(harness, trajectory.skill, call.name):
            problems.append(
                f"{where}: skill '{trajectory.skill}' does not allow tool '{call.name}'"
            )
        if schema_errors(tool.input_schema, known):
            problems.append(f"{where}: tool '{call.name}' has an invalid input schema")
            continue
        if not arguments_valid(tool.input_schema, call.arguments, known):
            for error in argument_validator(tool.input_schema).iter_errors(call.arguments):
                location = "/".join(str(part) for part in error.absolute_path) or "arguments"
                problems.append(
                    f"{where}: arguments of '{call.name}' do not match its schema at "
                    f"{location}: {error.message}"
                )
    return problems


def verify_pair(
    harness: Harness, trajectory: GoldTrajectory, known: KnownValid | None = None
) -> list[str]:
    """Every problem with the pair: harness rules first, then the trajectory against it.
    ``known`` (the objects of an already verified harness it was derived from) only makes
    the check faster: shared objects are not checked again."""
    return [str(error) for error in harness_problems(harness, known)] + trajectory_problems(
        harness, trajectory, known
    )


def _properties(tools: dict[str, Tool], tool_name: str) -> list[str]:
    tool = tools.get(tool_name)
    properties = tool.input_schema.get("properties") if tool is not None else None
    return list(properties) if isinstance(properties, dict) else []


def _by_name(harness: Harness) -> dict[str, Tool]:
    """Tools by name, the first of each name (as ``Harness.tool`` finds it)."""
    tools: dict[str, Tool] = {}
    for tool in harness.tools:
        tools.setdefault(tool.name, tool)
    return tools


def mapping_problems(original: Harness, augmented: Harness, mapping: RenameMapping) -> list[str]:
    """The mapping must be one-to-one between the original and the augmented names: every
    original tool (and each of its parameters) lands on a distinct name that exists, and no
    name the augmented harness adds (a distractor tool, an optional parameter) is an
    original name, which the inverse mapping would send to the original item."""
    problems: list[str] = []
    originals = [tool.name for tool in original.tools]
    images = [mapping.tool(name) for name in originals]
    if len(set(images)) != len(images):
        problems.append("the mapping sends two tools to the same name")
    augmented_names = {tool.name for tool in augmented.tools}
    for old, new in zip(originals, images, strict=True):
        if new not in augmented_names:
            problems.append(f"tool '{old}' maps to '{new}', which is not a tool")
    for added in augmented_names - set(images):
        if added in originals:
            problems.append(f"added tool '{added}' has the name of an original tool")
    original_tools, augmented_tools = _by_name(original), _by_name(augmented)
    for old, new in zip(originals, images, strict=True):
        before = _properties(original_tools, old)
        after = _properties(augmented_tools, new)
        renamed = [mapping.param(old, name) for name in before]
        if len(set(renamed)) != len(renamed):
            problems.append(f"tool '{old}': the mapping sends two parameters to the same name")
        missing = [name for name in renamed if name not in after]
        if missing and new in augmented_names:
            problems.append(f"tool '{old}': renamed parameters {missing} are not in '{new}'")
        for added in set(after) - set(renamed):
            if added in before:
                problems.append(
                    f"tool '{new}': added parameter '{added}' has the name of an original "
                    f"parameter of '{old}', so the mapping is not one-to-one"
                )
    return problems


def _constraint_problems(
    original: Harness, augmented: Harness, mapping: RenameMapping, steps: Sequence[RenameMapping]
) -> list[str]:
    problems: list[str] = []
    step_renames = [
        {**step.skill_renames, **step.tool_renames}
        for step in steps
        if step.skill_renames or step.tool_renames
    ]
    by_name = {skill.name: skill for skill in augmented.skills}
    for skill in original.skills:
        new = by_name.get(mapping.skill(skill.name))
        if new is None:
            problems.append(f"skill '{skill.name}' disappeared")
            continue
        if new.body is skill.body:
            continue  # untouched by every step
        units = constraint_units(skill.body)
        if not units:
            continue
        if step_renames:
            # Fast path: a body only touched by renames is exactly the renamed original.
            expected = skill.body
            for renames in step_renames:
                expected = rewrite_text(expected, renames)
            if expected == new.body:
                continue
        if step_renames:
            text = "\n".join(units)
            for renames in step_renames:
                text = rewrite_text(text, renames)
            units = tuple(text.split("\n"))
        for unit in missing_units(units, new.body):
            problems.append(f"skill '{new.name}' lost a constraint of '{skill.name}': {unit!r}")
    return problems


def augmentation_problems(
    original: Harness,
    original_trajectory: GoldTrajectory,
    augmented: Harness,
    augmented_trajectory: GoldTrajectory,
    mapping: RenameMapping,
    steps: Sequence[RenameMapping] = (),
    *,
    original_profile: DecisionProfile | None = None,
    known: KnownValid | None = None,
) -> list[str]:
    """Everything that must hold for an augmented pair ([] when it is valid). ``known``:
    ``harness_check.known_valid(original)``, when the caller keeps one (a speed-up only)."""
    problems = verify_pair(augmented, augmented_trajectory, known)
    if problems:
        return problems
    if mapping.apply(original_trajectory) != augmented_trajectory:
        problems.append("the mapping does not turn the original gold trajectory into the new one")
    if mapping.inverse().apply(augmented_trajectory) != original_trajectory:
        problems.append("the inverse mapping does not restore the original gold trajectory")
    for index, call in enumerate(original_trajectory.tool_calls):
        before = _allowed(original, original_trajectory.skill, call.name)
        new_skill = (
            None if original_trajectory.skill is None else mapping.skill(original_trajectory.skill)
        )
        if before and not _allowed(augmented, new_skill, mapping.tool(call.name)):
            problems.append(f"tool_calls[{index}]: the skill no longer allows the tool it calls")
    if augmented.hooks is not original.hooks or augmented_trajectory is not original_trajectory:
        # (a profile is a function of the hooks and the trajectory alone)
        profile = original_profile or decision_profile(original, original_trajectory)
        after = decision_profile(augmented, augmented_trajectory)
        problems += profile_differences(profile, after)
    problems += mapping_problems(original, augmented, mapping)
    problems += _constraint_problems(original, augmented, mapping, steps)
    return problems
