"""Skill identifiers: every skill is renamed, every reference follows, distractors are inert."""

from __future__ import annotations

import random

import pytest

from harness_app.harness.model import Harness
from harness_app.harness.validation import validate_harness
from harness_app.hsa.augment import augment
from harness_app.hsa.naming import looks_like_identifier
from harness_app.hsa.policy import AugmentationPolicy
from harness_app.hsa.trajectory import GoldTrajectory
from harness_app.hsa.transforms import transform_named

RENAMERS = [
    "skill_ids.synonyms",
    "skill_ids.styles",
    "skill_ids.random_ids",
    "skill_ids.spanish",
    "skill_ids.pinyin",
    "skill_ids.unseen_synonyms",
]


def only(name: str) -> AugmentationPolicy:
    return AugmentationPolicy(name=name, weights=(), k=0, always=(name,))


@pytest.mark.parametrize("name", RENAMERS)
def test_renames_every_skill_and_the_gold_choice(
    demo: Harness, product_gold: GoldTrajectory, name: str
) -> None:
    example = augment(demo, product_gold, only(name), seed=7)
    renames = example.mapping.skill_renames
    assert set(renames) == {s.name for s in demo.skills}
    assert [s.name for s in example.harness.skills] == [renames[s.name] for s in demo.skills]
    assert example.trajectory.skill == renames["product-qa"]
    assert all(looks_like_identifier(new) for new in renames.values())
    # allowed tools and bodies' tool mentions are untouched by a skill rename
    for old, new in zip(demo.skills, example.harness.skills, strict=True):
        assert new.allowed_tools == old.allowed_tools


def test_body_mentions_of_other_skills_follow_the_rename(
    demo: Harness, product_gold: GoldTrajectory
) -> None:
    example = augment(demo, product_gold, only("skill_ids.spanish"), seed=1)
    product_qa = example.harness.skill(example.mapping.skill("product-qa"))
    assert product_qa is not None
    after_sales = example.mapping.skill("after-sales")
    assert after_sales == "post-venta"
    assert f"delivery questions belong to {after_sales}." in product_qa.body
    assert "after-sales" not in product_qa.body


def test_language_renames_use_the_bank(demo: Harness, product_gold: GoldTrajectory) -> None:
    spanish = augment(demo, product_gold, only("skill_ids.spanish"), seed=0).mapping
    pinyin = augment(demo, product_gold, only("skill_ids.pinyin"), seed=0).mapping
    assert spanish.skill("product-qa") == "producto-preguntas"
    assert pinyin.skill("product-qa") == "shangpin-wenda"
    assert pinyin.skill("after-sales") == "shouhou-fuwu"


@pytest.mark.parametrize("name", ["skill_ids.distractors", "skill_ids.unseen_distractors"])
def test_distractor_skills_are_added_and_never_chosen(
    demo: Harness, product_gold: GoldTrajectory, name: str
) -> None:
    result = transform_named(name).apply(demo, product_gold, random.Random(3))
    added = [s for s in result.harness.skills if demo.skill(s.name) is None]
    assert 1 <= len(added) <= 2
    assert all(s.allowed_tools and s.description for s in added)
    assert result.mapping.is_identity
    assert validate_harness(result.harness) == []
    # the original skills are all still there, unchanged and in their relative order
    kept = [s for s in result.harness.skills if demo.skill(s.name) is not None]
    assert kept == list(demo.skills)


def test_renames_are_injective_even_when_banks_collide(product_gold: GoldTrajectory) -> None:
    from harness_app.harness.model import Skill

    skills = tuple(
        Skill(name, "Use when testing.", "", ())
        for name in ("get-product", "fetch-item", "get-goods")
    )
    harness = Harness(skills=skills)
    gold = GoldTrajectory(skill="get-product")
    for seed in range(50):
        example = augment(harness, gold, only("skill_ids.synonyms"), seed)
        new_names = [s.name for s in example.harness.skills]
        assert len(set(new_names)) == len(new_names)
        assert not set(new_names) & {s.name for s in skills}
