"""Prompt structure: reorder sections, retitle them, and switch the layout the prompt is
rendered in (markdown headings, XML-style tags, JSON). Section templates are untouched, so
the prompt says the same things in a different shape."""

from __future__ import annotations

import random

from harness_app.harness.model import Harness, Prompt, PromptSection
from harness_app.harness.prompt import PromptLayout
from harness_app.hsa.banks import SECTION_TITLE_FRAMES, SECTION_TITLES, Split
from harness_app.hsa.trajectory import GoldTrajectory
from harness_app.hsa.transforms.base import ApplyFn, Transform, TransformResult, unchanged


def _with_sections(harness: Harness, sections: list[PromptSection]) -> Harness:
    return Harness(harness.skills, harness.tools, Prompt(tuple(sections)), harness.hooks)


def _reorder_sections(
    harness: Harness, _trajectory: GoldTrajectory, rng: random.Random
) -> TransformResult:
    sections = list(harness.prompt.sections)
    if len(sections) < 2:
        return unchanged(harness)
    order = rng.sample(sections, len(sections))
    if order == sections:
        order = order[1:] + order[:1]  # a rotation is always a different order
    return TransformResult(_with_sections(harness, order))


def _new_title(section: PromptSection, split: Split, rng: random.Random) -> str:
    text = f"{section.id} {section.title}".lower()
    for keyword, titles in SECTION_TITLES[split].items():
        if keyword in text:
            options = [t for t in titles if t != section.title]
            if options:
                return rng.choice(options)
    return rng.choice(SECTION_TITLE_FRAMES[split]).format(title=section.title.strip())


def _retitle(split: Split) -> ApplyFn:
    def apply(harness: Harness, _trajectory: GoldTrajectory, rng: random.Random) -> TransformResult:
        sections = harness.prompt.sections
        if not sections:
            return unchanged(harness)
        new = [
            PromptSection(s.id, _new_title(s, split, rng), s.template) if rng.random() < 0.7 else s
            for s in sections
        ]
        if all(a is b for a, b in zip(new, sections, strict=True)):
            index = rng.randrange(len(sections))
            s = sections[index]
            new[index] = PromptSection(s.id, _new_title(s, split, rng), s.template)
        return TransformResult(_with_sections(harness, new))

    return apply


def _layout(layout: PromptLayout) -> ApplyFn:
    def apply(
        harness: Harness, _trajectory: GoldTrajectory, _rng: random.Random
    ) -> TransformResult:
        return TransformResult(harness, prompt_layout=layout)

    return apply


TRANSFORMS: tuple[Transform, ...] = (
    Transform(
        "prompt_structure.reorder_sections",
        "prompt_structure",
        "train",
        "Render the prompt sections in another order.",
        _reorder_sections,
    ),
    Transform(
        "prompt_structure.retitle_sections",
        "prompt_structure",
        "train",
        "Give sections other titles (Persona -> Who you are).",
        _retitle("train"),
    ),
    Transform(
        "prompt_structure.xml_layout",
        "prompt_structure",
        "train",
        'Render the prompt as <section id=".." title=".."> elements instead of headings.',
        _layout("xml"),
    ),
    Transform(
        "prompt_structure.json_layout",
        "prompt_structure",
        "heldout",
        'Render the prompt as a JSON document {"sections": [...]}.',
        _layout("json"),
    ),
    Transform(
        "prompt_structure.unseen_titles",
        "prompt_structure",
        "heldout",
        "Retitle sections from the held-out bank (Persona -> Identity).",
        _retitle("heldout"),
    ),
)
