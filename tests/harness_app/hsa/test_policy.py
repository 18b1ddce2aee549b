"""Policies: weighted, seeded sampling; train and held-out edits never mix."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from harness_app.hsa import banks
from harness_app.hsa.policy import (
    BFCL_TOOL_SCHEMAS,
    HARNESS_VARIANT_T1,
    HARNESS_VARIANT_T2,
    HSA_TRAIN,
    POLICIES,
    AugmentationPolicy,
)
from harness_app.hsa.transforms import FAMILIES, TRANSFORMS, select_transforms, transform_named


def test_every_family_has_train_and_heldout_transforms() -> None:
    for family in FAMILIES:
        assert select_transforms("train", [family]), family
        assert select_transforms("heldout", [family]), family
    names = [t.name for t in TRANSFORMS]
    assert len(names) == len(set(names))
    assert all(t.name.startswith(f"{t.family}.") for t in TRANSFORMS)


def test_train_and_harness_variant_policies_are_disjoint() -> None:
    train = {t.name for t in HSA_TRAIN.transforms}
    heldout = {t.name for t in HARNESS_VARIANT_T1.transforms} | {
        t.name for t in HARNESS_VARIANT_T2.transforms
    }
    assert HSA_TRAIN.split == "train"
    assert HARNESS_VARIANT_T1.split == HARNESS_VARIANT_T2.split == "heldout"
    assert not train & heldout
    assert {t.family for t in HARNESS_VARIANT_T1.transforms} == {"skill_ids", "tool_schemas"}
    assert {t.family for t in HARNESS_VARIANT_T2.transforms} == {
        "skill_content",
        "prompt_structure",
        "hook_functions",
    }


def _flatten(value: object) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(_flatten(v) for v in value.values())) if value else set()
    if isinstance(value, tuple | list):
        return set().union(*(_flatten(v) for v in value)) if value else set()
    return set()


@pytest.mark.parametrize(
    "bank",
    [
        banks.VERB_FRAMES,
        banks.LABEL_FRAMES,
        banks.PARAMETER_FRAMES,
        banks.HEADING_FRAMES,
        banks.LEAD_INS,
        banks.PROSE_CONNECTIVES,
        banks.BULLET_MARKERS,
        banks.NUMBER_STYLES,
        banks.SECTION_TITLE_FRAMES,
        banks.FEEDBACK_FRAMES,
        banks.NAME_MARKERS,
        banks.SKILL_MARKERS,
        banks.TRANSLATIONS,
    ],
)
def test_bank_halves_share_no_wording(bank: dict[str, object]) -> None:
    assert not _flatten(bank["train"]) & _flatten(bank["heldout"])


def test_keyed_banks_share_no_entry_for_the_same_key() -> None:
    for bank in (banks.SYNONYMS, banks.LABEL_SYNONYMS, banks.SECTION_TITLES):
        for key, options in bank["train"].items():  # type: ignore[attr-defined]
            assert not set(options) & set(bank["heldout"].get(key, ())), key  # type: ignore[attr-defined]
    train_names = {entry[0] for entry in banks.DISTRACTOR_SKILLS["train"]}
    assert not train_names & {entry[0] for entry in banks.DISTRACTOR_SKILLS["heldout"]}
    train_tools = {entry[0] for entry in banks.DISTRACTOR_TOOLS["train"]}
    assert not train_tools & {entry[0] for entry in banks.DISTRACTOR_TOOLS["heldout"]}
    train_params = {entry[0] for entry in banks.OPTIONAL_PARAMETERS["train"]}
    assert not train_params & {entry[0] for entry in banks.OPTIONAL_PARAMETERS["heldout"]}


def test_sampling_is_seeded_weighted_and_without_replacement() -> None:
    first = [t.name for t in HSA_TRAIN.sample(random.Random(11))]
    assert first == [t.name for t in HSA_TRAIN.sample(random.Random(11))]
    assert len(first) == len(set(first)) == 3
    counts: Counter[str] = Counter()
    rng = random.Random(0)
    for _ in range(4000):
        counts.update(t.family for t in HSA_TRAIN.sample(rng))
    # default weights give each family the same share, whatever its number of transforms
    shares = [counts[family] / (3 * 4000) for family in FAMILIES]
    assert max(shares) - min(shares) < 0.03


def test_weights_and_always_are_honoured() -> None:
    policy = AugmentationPolicy.build(
        "custom",
        split="train",
        k=1,
        families=["prompt_structure"],
        weights={"prompt_structure.xml_layout": 100.0},
        always=["hook_functions.reword_feedback"],
    )
    rng = random.Random(0)
    picks = Counter(tuple(t.name for t in policy.sample(rng)) for _ in range(500))
    assert all(p[0] == "hook_functions.reword_feedback" for p in picks)
    assert picks[("hook_functions.reword_feedback", "prompt_structure.xml_layout")] > 450
    assert BFCL_TOOL_SCHEMAS.sample(random.Random(0))[:2] == [
        transform_named("tool_schemas.rename_tools"),
        transform_named("tool_schemas.rename_params"),
    ]


def test_bad_policies_are_rejected_with_the_reason() -> None:
    with pytest.raises(KeyError, match="unknown transform 'nope'"):
        AugmentationPolicy("p", weights=(("nope", 1.0),))
    with pytest.raises(ValueError, match="must be > 0"):
        AugmentationPolicy("p", weights=(("skill_ids.synonyms", 0.0),))
    with pytest.raises(ValueError, match="k must be >= 0"):
        AugmentationPolicy("p", weights=(), k=-1)
    with pytest.raises(ValueError, match="both weighted and always"):
        AugmentationPolicy(
            "p", weights=(("skill_ids.synonyms", 1.0),), always=("skill_ids.synonyms",)
        )


def test_named_policies_are_registered() -> None:
    assert set(POLICIES) == {
        "hsa-train",
        "harness-variant-t1",
        "harness-variant-t2",
        "hsa-heldout",
        "bfcl-tool-schemas",
        "bfcl-tool-schemas-heldout",
    }
    assert HSA_TRAIN.describe()["split"] == "train"


def test_the_package_never_imports_django() -> None:
    import subprocess
    import sys

    code = (
        "import sys, harness_app.hsa, harness_app.hsa.bfcl_augment; "
        "print(any(m == 'django' or m.startswith('django.') for m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def _bank_words(split: str) -> dict[str, str]:
    """Every word a bank can put into a name in ``split`` -> where it comes from."""
    import re

    from harness_app.hsa.naming import tokens

    found: dict[str, str] = {}

    def add(text: str, source: str) -> None:
        for word in re.findall(r"[a-z0-9]+", " ".join(tokens(text))):
            found.setdefault(word, source)

    for key, options in banks.SYNONYMS[split].items():  # type: ignore[index]
        for option in options:
            add(option, f"SYNONYMS[{key}]")
    for key, value in banks.TRANSLATIONS[split].items():  # type: ignore[index]
        add(value, f"TRANSLATIONS[{key}]")
    for marker in (*banks.NAME_MARKERS[split], *banks.SKILL_MARKERS[split]):  # type: ignore[index]
        add(marker, "markers")
    for name, _schema in banks.OPTIONAL_PARAMETERS[split]:  # type: ignore[index]
        add(name, "OPTIONAL_PARAMETERS")
    for entry in (*banks.DISTRACTOR_TOOLS[split], *banks.DISTRACTOR_SKILLS[split]):  # type: ignore[index]
        add(entry[0], "distractors")
    return found


def test_train_and_heldout_vocabulary_share_no_word_across_banks_and_keys() -> None:
    """Not only per key: 'broadcast' was a train synonym of push and a held-out one of live."""
    train, heldout = _bank_words("train"), _bank_words("heldout")
    shared = {word: (train[word], heldout[word]) for word in set(train) & set(heldout)}
    assert shared == {}


def test_no_policy_mixes_train_and_heldout_transforms() -> None:
    """A training policy must never carry a held-out transform (bfcl-tool-schemas did)."""
    for policy in POLICIES.values():
        assert policy.split in ("train", "heldout"), policy.name
        if policy.split == "train":
            assert all(t.split == "train" for t in policy.transforms), policy.name
    assert BFCL_TOOL_SCHEMAS.split == "train"
    assert POLICIES["bfcl-tool-schemas-heldout"].split == "heldout"
