"""Verification finds every way a pair can be wrong; augment never returns such a pair."""

from __future__ import annotations

import dataclasses

import pytest

from harness_app.harness.model import Harness, Skill
from harness_app.hsa.augment import AugmentationError, InvalidGoldError, augment
from harness_app.hsa.mapping import IDENTITY, RenameMapping
from harness_app.hsa.policy import HSA_TRAIN, AugmentationPolicy
from harness_app.hsa.trajectory import GoldTrajectory, ToolCall
from harness_app.hsa.transforms import Transform, TransformResult
from harness_app.hsa.verify import augmentation_problems, verify_pair


def test_a_good_pair_has_no_problems(demo: Harness, product_gold: GoldTrajectory) -> None:
    assert verify_pair(demo, product_gold) == []


@pytest.mark.parametrize(
    ("gold", "problem"),
    [
        (GoldTrajectory("no-such-skill"), "gold skill 'no-such-skill' is not a skill"),
        (GoldTrajectory(None, (ToolCall("nope", {}),)), "tool 'nope' is not a tool"),
        (
            GoldTrajectory("promo-push", (ToolCall("check_stock", {"sku": "S"}),)),
            "skill 'promo-push' does not allow tool 'check_stock'",
        ),
        (
            GoldTrajectory(None, (ToolCall("get_product", {}),)),
            "'sku' is a required property",
        ),
        (
            GoldTrajectory(None, (ToolCall("check_stock", {"sku": "S", "size": "XXXL"}),)),
            "at size: 'XXXL' is not one of",
        ),
        (
            GoldTrajectory(None, (ToolCall("get_product", {"sku": "S", "colour": "red"}),)),
            "Additional properties are not allowed",
        ),
    ],
)
def test_problems_name_what_is_wrong(demo: Harness, gold: GoldTrajectory, problem: str) -> None:
    problems = verify_pair(demo, gold)
    assert any(problem in p for p in problems), problems


def test_invalid_harness_is_reported(demo: Harness, product_gold: GoldTrajectory) -> None:
    broken = Harness((dataclasses.replace(demo.skills[0], name="Bad"),), demo.tools)
    assert any(p.startswith("skills[0].name:") for p in verify_pair(broken, product_gold))


def test_augment_refuses_an_invalid_original(demo: Harness) -> None:
    with pytest.raises(InvalidGoldError, match="does not fit its harness"):
        augment(demo, GoldTrajectory("nope"), HSA_TRAIN, 0)


def _faulty(apply):  # type: ignore[no-untyped-def]
    transform = Transform("skill_ids.faulty", "skill_ids", "train", "test double", apply)
    return transform


def test_augment_raises_when_a_transform_breaks_the_pair(
    demo: Harness, product_gold: GoldTrajectory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A transform that renames a skill but forgets to report it in the mapping.
    def forgetful(harness: Harness, _gold: GoldTrajectory, _rng: object) -> TransformResult:
        skills = tuple(
            Skill("renamed-qa", s.description, s.body, s.allowed_tools)
            if s.name == "product-qa"
            else s
            for s in harness.skills
        )
        return TransformResult(Harness(skills, harness.tools, harness.prompt, harness.hooks))

    faulty = _faulty(forgetful)
    policy = AugmentationPolicy("p", weights=(), k=0)
    monkeypatch.setattr(AugmentationPolicy, "sample", lambda self, rng: [faulty])
    with pytest.raises(AugmentationError, match="gold skill 'product-qa' is not a skill"):
        augment(demo, product_gold, policy, 0)


def test_lost_constraints_and_wrong_mappings_are_caught(
    demo: Harness, product_gold: GoldTrajectory
) -> None:
    skill = demo.skills[0]
    dropped = Skill(
        skill.name, skill.description, skill.body.replace("Do not guess.", ""), skill.allowed_tools
    )
    edited = Harness((dropped, *demo.skills[1:]), demo.tools, demo.prompt, demo.hooks)
    problems = augmentation_problems(demo, product_gold, edited, product_gold, IDENTITY)
    assert any("lost a constraint" in p and "Do not guess." in p for p in problems)
    wrong = RenameMapping(tool_renames={"get_product": "x_y"})
    problems = augmentation_problems(demo, product_gold, demo, product_gold, wrong)
    assert any("does not turn the original gold trajectory" in p for p in problems)
