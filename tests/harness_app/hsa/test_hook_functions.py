"""Hook functions: feedback reworded, hooks reordered and thresholds moved, and every
decision on the gold trajectory is the same afterwards."""

from __future__ import annotations

import random

import pytest

from harness_app.harness.model import Harness, Hook
from harness_app.hsa.augment import augment
from harness_app.hsa.cel_refs import cel_references
from harness_app.hsa.hook_decisions import decision_profile
from harness_app.hsa.policy import AugmentationPolicy
from harness_app.hsa.trajectory import GoldTrajectory
from harness_app.hsa.transforms import transform_named
from harness_app.hsa.transforms.hook_functions import vary_threshold
from harness_app.hsa.verify import augmentation_problems


def only(name: str) -> AugmentationPolicy:
    return AugmentationPolicy(name=name, weights=(), k=0, always=(name,))


LENGTH = Hook(
    "reply-length",
    "pre_reply",
    "size(reply) > 80",
    feedback="Your reply is too long.",
)


@pytest.mark.parametrize(("reply_length", "fires"), [(40, False), (120, True)])
def test_threshold_moves_only_within_the_decision_preserving_range(
    reply_length: int, fires: bool
) -> None:
    gold = GoldTrajectory(None, final_answer="x" * reply_length)
    harness = Harness(hooks=(LENGTH,))
    assert decision_profile(harness, gold).fired["reply-length"] == (("pre_reply", -1, fires),)
    moved = set()
    for seed in range(40):
        hook = vary_threshold(LENGTH, gold, random.Random(seed))
        references = cel_references(hook.condition)
        assert references is not None
        (threshold,) = references.thresholds
        moved.add(threshold.value)
        # "> t" keeps firing iff the reply is longer than t
        assert (reply_length > threshold.value) == fires
    assert len(moved) > 2 and 80.0 not in moved


def test_threshold_next_to_the_gold_only_moves_away_from_it() -> None:
    # An 81-character reply fires "> 80"; only thresholds below 81 keep it firing.
    gold = GoldTrajectory(None, final_answer="x" * 81)
    tight = Hook("tight", "pre_reply", "size(reply) > 80", feedback="Too long.")
    for seed in range(20):
        hook = vary_threshold(tight, gold, random.Random(seed))
        references = cel_references(hook.condition)
        assert references is not None
        assert references.thresholds[0].value < 81


def test_double_thresholds_keep_their_type() -> None:
    hook = Hook("prices", "pre_reply", "quoted_prices.exists(p, p > 1000.5)", feedback="Check.")
    gold = GoldTrajectory(None, quoted_prices=(129.0,))
    new = vary_threshold(hook, gold, random.Random(0))
    assert new.condition != hook.condition
    references = cel_references(new.condition)
    assert references is not None and not references.thresholds[0].is_int


def test_reorder_keeps_the_relative_order_of_firing_hooks() -> None:
    hooks = tuple(
        Hook(f"h{i}", "pre_reply", cond, feedback="fix")
        for i, cond in enumerate(
            ["size(reply) > 1", "size(reply) > 1000", "size(reply) > 2", "size(reply) > 2000"]
        )
    )
    harness = Harness(hooks=hooks)
    gold = GoldTrajectory(None, final_answer="a reply")
    orders = set()
    for seed in range(30):
        example = augment(harness, gold, only("hook_functions.reorder_hooks"), seed)
        names = [h.name for h in example.harness.hooks]
        assert names.index("h0") < names.index("h2")  # both fire; h0 decides
        orders.add(tuple(names))
    assert len(orders) > 2


@pytest.mark.parametrize(
    "name", ["hook_functions.reword_feedback", "hook_functions.unseen_feedback"]
)
def test_feedback_is_reworded_around_the_original(
    demo: Harness, product_gold: GoldTrajectory, name: str
) -> None:
    result = transform_named(name).apply(demo, product_gold, random.Random(1))
    changed = [
        (old, new)
        for old, new in zip(demo.hooks, result.harness.hooks, strict=True)
        if old.feedback != new.feedback
    ]
    assert changed
    for old, new in changed:
        assert old.feedback.strip() in new.feedback
        assert (new.condition, new.action, new.matcher) == (old.condition, old.action, old.matcher)


def test_verification_catches_a_changed_decision(demo: Harness) -> None:
    gold = GoldTrajectory(None, final_answer="x" * 120)
    harness = Harness(demo.skills, demo.tools, demo.prompt, (LENGTH,))
    broken = Harness(
        demo.skills,
        demo.tools,
        demo.prompt,
        (Hook("reply-length", "pre_reply", "size(reply) > 200", feedback="too long"),),
    )
    from harness_app.hsa.mapping import IDENTITY

    problems = augmentation_problems(harness, gold, broken, gold, IDENTITY)
    assert any("decides differently" in p for p in problems)
