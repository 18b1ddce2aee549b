"""Skill content: steps reorder/reformat/paraphrase, and every constraint survives verbatim."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_app.harness.model import Harness
from harness_app.hsa.augment import augment
from harness_app.hsa.policy import AugmentationPolicy
from harness_app.hsa.skill_body import (
    Group,
    constraint_units,
    is_constraint_line,
    missing_units,
    normalise,
    paraphrase,
    parse_body,
    reformat,
    reorder,
)
from harness_app.hsa.trajectory import GoldTrajectory
from tests.harness_app.harness.strategies import any_text

CONTENT = [
    "skill_content.reorder_steps",
    "skill_content.paraphrase",
    "skill_content.reformat_lists",
    "skill_content.prose",
    "skill_content.unseen_paraphrase",
    "skill_content.unseen_reformat",
]


def only(name: str) -> AugmentationPolicy:
    return AugmentationPolicy(name=name, weights=(), k=0, always=(name,))


@pytest.mark.parametrize("name", CONTENT)
@pytest.mark.parametrize("seed", range(15))
def test_every_constraint_line_of_every_demo_skill_survives(
    demo: Harness, product_gold: GoldTrajectory, name: str, seed: int
) -> None:
    example = augment(demo, product_gold, only(name), seed)
    for old, new in zip(demo.skills, example.harness.skills, strict=True):
        assert missing_units(constraint_units(old.body), new.body) == []
        for line in old.body.splitlines():
            if line.strip() and is_constraint_line(line):
                assert normalise(line.lstrip(" -0123456789.")) in normalise(new.body)


def test_constraint_units_cover_steps_and_restrictive_lines(demo: Harness) -> None:
    units = constraint_units(demo.skill("product-qa").body)  # type: ignore[union-attr]
    assert (
        "Call get_product for that SKU before stating any fact. Never state a price, "
        "material or spec from memory or from an earlier product." in units
    )
    assert "Do not compare with other shops or brands." in units
    assert "# Product Q&A" not in units and "Constraints:" not in units


def test_parse_joins_wrapped_steps_and_keeps_list_kinds(demo: Harness) -> None:
    blocks = parse_body(demo.skill("size-advice").body)  # type: ignore[union-attr]
    groups = [b for b in blocks if isinstance(b, Group)]
    assert [g.numbered for g in groups] == [True, False]
    assert groups[0].steps[2] == (
        "Recommend exactly one size and give the chart row that supports it (for example "
        '"M fits 160-170 cm, 50-60 kg").'
    )


BODY = """# Returns

1. Ask for the order date.
2. Then check the policy.
3. Reply briefly.

Constraints:
- Never promise refunds.
- Do not ask for phone numbers.
- Stay polite.
"""


def test_reorder_keeps_numbered_order_and_shuffles_bullets() -> None:
    seen_bullet_orders = set()
    for seed in range(40):
        body = reorder(BODY, random.Random(seed))
        assert body.startswith("# Returns")
        first, second, third = (body.index(f"{n}. ") for n in (1, 2, 3))
        assert first < second < third
        bullets = tuple(line for line in body.splitlines() if line.startswith("- "))
        seen_bullet_orders.add(bullets)
        assert missing_units(constraint_units(BODY), body) == []
    assert len(seen_bullet_orders) > 1


def test_reformat_changes_markers_but_not_step_text() -> None:
    body = reformat(BODY, random.Random(0), "train", prose=False)
    assert body != BODY
    assert missing_units(constraint_units(BODY), body) == []
    prose = reformat(BODY, random.Random(0), "train", prose=True)
    assert "1." not in prose and "\n- " not in prose
    assert "Ask for the order date." in prose and "Never promise refunds." in prose


def test_paraphrase_rewords_framing_only() -> None:
    body = paraphrase(BODY, random.Random(2), "train")
    assert body != BODY
    assert "Constraints:" not in body  # the label was reworded from the bank
    assert "Never promise refunds." in body and "Ask for the order date." in body
    assert missing_units(constraint_units(BODY), body) == []


def test_lines_with_restrictive_words_or_numbers_are_never_paraphrased() -> None:
    body = "# Title\n\nYou must reply in 2 sentences:\nAlways quote 'exact' prices.\nNotes:\n"
    for seed in range(20):
        new = paraphrase(body, random.Random(seed), "heldout")
        assert "You must reply in 2 sentences:" in new
        assert "Always quote 'exact' prices." in new


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(
        st.one_of(
            any_text,
            any_text.map(lambda t: f"- {t}"),
            any_text.map(lambda t: f"1. {t}"),
            st.just(""),
            st.just("Constraints:"),
            st.just("# Heading"),
        ),
        max_size=8,
    ),
    seed=st.integers(0, 2**32),
    split=st.sampled_from(["train", "heldout"]),
)
def test_no_body_edit_ever_loses_a_unit(lines: list[str], seed: int, split: str) -> None:
    body = "\n".join(lines)
    units = constraint_units(body)
    rng = random.Random(seed)
    for edited in (
        reorder(body, rng),
        paraphrase(body, rng, split),  # type: ignore[arg-type]
        reformat(body, rng, split, prose=False),  # type: ignore[arg-type]
        reformat(body, rng, split, prose=True),  # type: ignore[arg-type]
    ):
        assert missing_units(units, edited) == []
