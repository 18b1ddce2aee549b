"""Hook functions: reword feedback, reorder hooks, vary numeric thresholds. Every edit keeps
what the hooks decide on the gold trajectory: reordering keeps the relative order of the hooks
that fire on it, and a threshold only moves to a value under which the condition gives the
same outcome on every gold activation it sees."""

from __future__ import annotations

import random
from typing import Final

from harness_app.harness.conditions import ConditionError
from harness_app.harness.model import Harness, Hook
from harness_app.hsa.banks import FEEDBACK_FRAMES, Split
from harness_app.hsa.cel_refs import cel_references, format_number, replace_spans
from harness_app.hsa.hook_decisions import (
    compiled_condition,
    condition_outcome,
    decision_profile,
    gold_activations,
    hook_applies,
)
from harness_app.hsa.renaming import replace_hook
from harness_app.hsa.trajectory import GoldTrajectory
from harness_app.hsa.transforms.base import ApplyFn, Transform, TransformResult, unchanged

# Multipliers tried for a threshold, a small grid so edited conditions repeat across examples
# (their compiled form and outcomes are cached).
THRESHOLD_FACTORS: Final[tuple[float, ...]] = (0.5, 0.75, 0.8, 0.9, 1.1, 1.2, 1.25, 1.5, 2.0)
ZERO_THRESHOLD_CANDIDATES: Final[tuple[float, ...]] = (1.0, 2.0, 5.0)


def _with_hooks(harness: Harness, hooks: list[Hook]) -> Harness:
    if all(a is b for a, b in zip(hooks, harness.hooks, strict=True)):
        return harness
    return Harness(harness.skills, harness.tools, harness.prompt, tuple(hooks))


def _reword(split: Split) -> ApplyFn:
    def apply(harness: Harness, _trajectory: GoldTrajectory, rng: random.Random) -> TransformResult:
        hooks = [
            replace_hook(
                hook,
                feedback=rng.choice(FEEDBACK_FRAMES[split]).format(feedback=hook.feedback.strip()),
            )
            if hook.feedback.strip() and rng.random() < 0.8
            else hook
            for hook in harness.hooks
        ]
        return TransformResult(_with_hooks(harness, hooks))

    return apply


def _reorder(harness: Harness, trajectory: GoldTrajectory, rng: random.Random) -> TransformResult:
    if len(harness.hooks) < 2:
        return unchanged(harness)
    profile = decision_profile(harness, trajectory)
    fires = [any(fired for _e, _s, fired in profile.fired[h.name]) for h in harness.hooks]
    # Hooks that fire somewhere on the gold trajectory keep their relative order, so the
    # first firing hook (the one that decides) is the same at every step.
    anchored = iter([hook for hook, fired in zip(harness.hooks, fires, strict=True) if fired])
    shuffled = rng.sample(range(len(harness.hooks)), len(harness.hooks))
    hooks = [next(anchored) if fires[i] else harness.hooks[i] for i in shuffled]
    return TransformResult(_with_hooks(harness, hooks))


def _candidates(value: float, is_int: bool) -> list[float]:
    raw = [value * f for f in THRESHOLD_FACTORS] if value else list(ZERO_THRESHOLD_CANDIDATES)
    result: list[float] = []
    for candidate in raw:
        number = float(round(candidate)) if is_int else round(candidate, 4)
        if number != value and number not in result:
            result.append(number)
    return result


def vary_threshold(hook: Hook, trajectory: GoldTrajectory, rng: random.Random) -> Hook:
    """The hook with one numeric threshold moved to a grid value that keeps the condition's
    outcome on every gold activation it applies to (the hook itself when none does)."""
    if hook.condition_kind != "cel":
        return hook
    references = cel_references(hook.condition)
    if references is None or not references.thresholds:
        return hook
    literal = rng.choice(references.thresholds)
    activations = [a for a in gold_activations(trajectory) if hook_applies(hook, a)]
    before = [condition_outcome("cel", hook.condition, hook.event, a.values) for a in activations]
    candidates = _candidates(literal.value, literal.is_int)
    for number in rng.sample(candidates, len(candidates)):
        source = replace_spans(
            hook.condition, [(literal.start, literal.end, format_number(number, literal.is_int))]
        )
        try:
            compiled_condition("cel", source, hook.event)
        except ConditionError:
            continue
        after = [condition_outcome("cel", source, hook.event, a.values) for a in activations]
        if after == before:
            return replace_hook(hook, condition=source)
    return hook


def _vary_thresholds(
    harness: Harness, trajectory: GoldTrajectory, rng: random.Random
) -> TransformResult:
    hooks = [vary_threshold(hook, trajectory, rng) for hook in harness.hooks]
    return TransformResult(_with_hooks(harness, hooks))


TRANSFORMS: tuple[Transform, ...] = (
    Transform(
        "hook_functions.reword_feedback",
        "hook_functions",
        "train",
        "Wrap each hook's feedback message in a framing from a template bank.",
        _reword("train"),
    ),
    Transform(
        "hook_functions.reorder_hooks",
        "hook_functions",
        "train",
        "Run hooks in another order; hooks that fire on the gold trajectory keep theirs.",
        _reorder,
    ),
    Transform(
        "hook_functions.vary_thresholds",
        "hook_functions",
        "train",
        "Move numeric thresholds of CEL conditions (size(reply) > 280 -> > 336) within the "
        "range that keeps every decision on the gold trajectory.",
        _vary_thresholds,
    ),
    Transform(
        "hook_functions.unseen_feedback",
        "hook_functions",
        "heldout",
        "Wrap feedback in framings from the held-out bank.",
        _reword("heldout"),
    ),
)
