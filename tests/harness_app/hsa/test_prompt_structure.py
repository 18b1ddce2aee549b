"""Prompt structure: same sections, same content, other order / titles / layout."""

from __future__ import annotations

import json
import random

from harness_app.harness.model import Harness
from harness_app.harness.prompt import PromptContext
from harness_app.hsa.augment import augment
from harness_app.hsa.policy import AugmentationPolicy
from harness_app.hsa.trajectory import GoldTrajectory
from harness_app.hsa.transforms import transform_named

CTX = PromptContext(room_name="Linen Live", room_locale="en-US", currency="CNY")


def only(name: str) -> AugmentationPolicy:
    return AugmentationPolicy(name=name, weights=(), k=0, always=(name,))


def test_reorder_sections_is_a_different_permutation(
    demo: Harness, product_gold: GoldTrajectory
) -> None:
    for seed in range(10):
        result = transform_named("prompt_structure.reorder_sections").apply(
            demo, product_gold, random.Random(seed)
        )
        new = result.harness.prompt.sections
        assert new != demo.prompt.sections
        assert sorted(new, key=lambda s: s.id) == sorted(demo.prompt.sections, key=lambda s: s.id)


def test_retitle_keeps_ids_and_templates(demo: Harness, product_gold: GoldTrajectory) -> None:
    result = transform_named("prompt_structure.retitle_sections").apply(
        demo, product_gold, random.Random(0)
    )
    old, new = demo.prompt.sections, result.harness.prompt.sections
    assert [(s.id, s.template) for s in new] == [(s.id, s.template) for s in old]
    assert [s.title for s in new] != [s.title for s in old]
    titles = dict((s.id, s.title) for s in new)
    assert titles["persona"] in {"Persona", "Role", "Who you are", "Your role"}


def test_layouts_render_the_same_content(demo: Harness, product_gold: GoldTrajectory) -> None:
    xml = augment(demo, product_gold, only("prompt_structure.xml_layout"), seed=0)
    as_json = augment(demo, product_gold, only("prompt_structure.json_layout"), seed=0)
    assert xml.prompt_layout == "xml" and as_json.prompt_layout == "json"
    assert xml.provenance["transforms"] == ["prompt_structure.xml_layout"]
    rendered_xml = xml.system_prompt(CTX)
    assert rendered_xml.startswith('<section id="persona" title="Persona">')
    document = json.loads(as_json.system_prompt(CTX))
    assert [s["id"] for s in document["sections"]] == ["persona", "rules", "compliance"]
    assert "get_product" in document["sections"][1]["content"]
