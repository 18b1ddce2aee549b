"""Skill identifiers: rename skills (synonyms, styles, random ids, another language) and add
distractor skills, so a model must read the skill list instead of remembering names."""

from __future__ import annotations

import random

from harness_app.harness.model import Harness, Skill
from harness_app.hsa.banks import DISTRACTOR_SKILLS, Split
from harness_app.hsa.mapping import RenameMapping
from harness_app.hsa.naming import RenameMode, candidate_name, choose_renames
from harness_app.hsa.renaming import rename_skills
from harness_app.hsa.trajectory import GoldTrajectory
from harness_app.hsa.transforms.base import ApplyFn, Transform, TransformResult, unchanged


def _renamer(mode: RenameMode, split: Split) -> ApplyFn:
    def apply(harness: Harness, _trajectory: GoldTrajectory, rng: random.Random) -> TransformResult:
        names = [skill.name for skill in harness.skills]
        renames = choose_renames(
            names,
            "skill",
            lambda old: candidate_name(old, "skill", mode, split, rng),
            taken=names,
        )
        if not renames:
            return unchanged(harness)
        return TransformResult(
            rename_skills(harness, renames), RenameMapping(skill_renames=renames)
        )

    return apply


def _distractors(split: Split) -> ApplyFn:
    def apply(harness: Harness, _trajectory: GoldTrajectory, rng: random.Random) -> TransformResult:
        taken = {skill.name for skill in harness.skills}
        options = [entry for entry in DISTRACTOR_SKILLS[split] if entry[0] not in taken]
        if not options:
            return unchanged(harness)
        tool_names = [tool.name for tool in harness.tools]
        skills = list(harness.skills)
        for name, description, body in rng.sample(options, min(len(options), rng.randint(1, 2))):
            allowed = tuple(rng.sample(tool_names, min(len(tool_names), rng.randint(1, 2))))
            skills.insert(rng.randint(0, len(skills)), Skill(name, description, body, allowed))
        return TransformResult(Harness(tuple(skills), harness.tools, harness.prompt, harness.hooks))

    return apply


TRANSFORMS: tuple[Transform, ...] = (
    Transform(
        "skill_ids.synonyms",
        "skill_ids",
        "train",
        "Rename skills with synonyms of their words (product-qa -> item-faq).",
        _renamer("synonym", "train"),
    ),
    Transform(
        "skill_ids.styles",
        "skill_ids",
        "train",
        "Reorder the words of skill names or add a marker word (product-qa -> qa-product).",
        _renamer("style", "train"),
    ),
    Transform(
        "skill_ids.random_ids",
        "skill_ids",
        "train",
        "Replace skill names with random identifiers (product-qa -> flow-ptgz).",
        _renamer("random", "train"),
    ),
    Transform(
        "skill_ids.spanish",
        "skill_ids",
        "train",
        "Translate the words of skill names into Spanish (product-qa -> producto-preguntas).",
        _renamer("translate", "train"),
    ),
    Transform(
        "skill_ids.distractors",
        "skill_ids",
        "train",
        "Add one or two unrelated skills the gold answer never uses.",
        _distractors("train"),
    ),
    Transform(
        "skill_ids.pinyin",
        "skill_ids",
        "heldout",
        "Translate the words of skill names into Pinyin (product-qa -> shangpin-wenda).",
        _renamer("translate", "heldout"),
    ),
    Transform(
        "skill_ids.unseen_synonyms",
        "skill_ids",
        "heldout",
        "Rename skills with held-out synonyms (product-qa -> article-inquiries).",
        _renamer("synonym", "heldout"),
    ),
    Transform(
        "skill_ids.unseen_distractors",
        "skill_ids",
        "heldout",
        "Add unrelated skills from the held-out bank.",
        _distractors("heldout"),
    ),
)
