"""Skill content: reorder unordered steps, reword the framing, rewrite lists as other list
styles or prose. Step texts and constraint lines are kept verbatim (see ``skill_body``)."""

from __future__ import annotations

import random
from collections.abc import Callable

from harness_app.harness.model import Harness, Skill
from harness_app.hsa.banks import Split
from harness_app.hsa.skill_body import paraphrase, reformat, reorder
from harness_app.hsa.trajectory import GoldTrajectory
from harness_app.hsa.transforms.base import ApplyFn, Transform, TransformResult, pick_items

BodyEdit = Callable[[str, random.Random], str]


def _edit_bodies(edit: BodyEdit) -> ApplyFn:
    def apply(harness: Harness, _trajectory: GoldTrajectory, rng: random.Random) -> TransformResult:
        chosen = pick_items(len(harness.skills), rng)
        skills = []
        for index, skill in enumerate(harness.skills):
            body = edit(skill.body, rng) if index in chosen else skill.body
            skills.append(
                skill
                if body == skill.body
                else Skill(skill.name, skill.description, body, skill.allowed_tools)
            )
        if all(new is old for new, old in zip(skills, harness.skills, strict=True)):
            return TransformResult(harness)
        return TransformResult(Harness(tuple(skills), harness.tools, harness.prompt, harness.hooks))

    return apply


def _paraphrase(split: Split) -> BodyEdit:
    return lambda body, rng: paraphrase(body, rng, split)


def _reformat(split: Split, prose: bool | None) -> BodyEdit:
    def edit(body: str, rng: random.Random) -> str:
        as_prose = rng.random() < 0.5 if prose is None else prose
        return reformat(body, rng, split, prose=as_prose)

    return edit


TRANSFORMS: tuple[Transform, ...] = (
    Transform(
        "skill_content.reorder_steps",
        "skill_content",
        "train",
        "Shuffle bullet items and paragraphs; numbered steps keep their order.",
        _edit_bodies(reorder),
    ),
    Transform(
        "skill_content.paraphrase",
        "skill_content",
        "train",
        "Reword headings, list labels and the lead-in of the steps from a template bank.",
        _edit_bodies(_paraphrase("train")),
    ),
    Transform(
        "skill_content.reformat_lists",
        "skill_content",
        "train",
        "Rewrite each list with another numbering style or as bullets.",
        _edit_bodies(_reformat("train", prose=False)),
    ),
    Transform(
        "skill_content.prose",
        "skill_content",
        "train",
        "Rewrite each list as a paragraph with ordinal connectives (First: ... Then: ...).",
        _edit_bodies(_reformat("train", prose=True)),
    ),
    Transform(
        "skill_content.unseen_paraphrase",
        "skill_content",
        "heldout",
        "Reword the framing from the held-out template bank.",
        _edit_bodies(_paraphrase("heldout")),
    ),
    Transform(
        "skill_content.unseen_reformat",
        "skill_content",
        "heldout",
        "Rewrite lists with held-out markers or held-out prose connectives.",
        _edit_bodies(_reformat("heldout", prose=None)),
    ),
)
