"""Live-Stream QA and Harness-Variant QA sets from the demo room: disjoint from training,
T1 and T2 from disjoint held-out families, verified and reproducible variants."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from harness_app.harness.serialization import harness_from_yaml, harness_to_dict
from harness_app.hsa.augment import augment
from harness_app.hsa.policy import POLICIES
from harness_app.hsa.trajectory import trajectory_from_dict, trajectory_to_dict
from harness_app.hsa.verify import verify_pair
from training_app.evals.qa_sets import (
    QASet,
    QASetError,
    build_harness_variant_qa_set,
    build_live_stream_qa_set,
    harness_ref,
)
from training_app.pipeline.catalog_snapshot import demo_catalog
from training_app.pipeline.task_set import QUESTION_TYPES, generate_tasks, task_from_gold

ROOT = Path(__file__).resolve().parents[3]
DEMO_HARNESS = ROOT / "harness_app" / "demo_data" / "live_stream_harness.yaml"


@cache
def harness_dict() -> dict:  # type: ignore[type-arg]
    return harness_to_dict(harness_from_yaml(DEMO_HARNESS.read_text("utf-8")))


@cache
def live_set() -> QASet:
    return build_live_stream_qa_set(demo_catalog(), harness_dict(), harness_id="demo")


@cache
def variant_set(which: str, seed: int = 0) -> QASet:
    return build_harness_variant_qa_set(live_set(), which, seed=seed)  # type: ignore[arg-type]


def test_live_stream_set_is_the_eval_split_with_gold_and_facts() -> None:
    qa = live_set()
    counts = Counter(item.question_type for item in qa.items)
    assert set(counts) == set(QUESTION_TYPES)
    assert len(qa.items) == 232 and len(qa.harnesses) == 1
    assert qa.catalog == demo_catalog()
    assert qa.source["split"] == "eval" and qa.source["catalog_hash"].startswith("sha256:")
    harness = qa.harness(harness_ref(harness_dict()))
    for item in qa.items:
        assert item.base_id == item.id and item.variant is None
        assert verify_pair(harness, trajectory_from_dict(item.gold)) == [], item.id
        # an item that needs tools states facts from them; one that needs none has none
        assert bool(item.facts) == bool(item.gold["tool_calls"]), item.id


def test_no_eval_comment_appears_in_the_training_task_set() -> None:
    train = generate_tasks(demo_catalog(), harness_dict(), "demo", split="train")
    train_comments = {task["comment"].strip().lower() for task in train}
    for qa in (live_set(), variant_set("t1"), variant_set("t2")):
        eval_comments = {item.comment.strip().lower() for item in qa.items}
        assert eval_comments and not eval_comments & train_comments, qa.name
        # nor any gold answer
        train_answers = {task["gold"]["final_answer"] for task in train}
        assert not {item.gold["final_answer"] for item in qa.items} & train_answers


def test_t1_and_t2_use_disjoint_held_out_families() -> None:
    t1, t2 = variant_set("t1"), variant_set("t2")
    assert t1.transform_families == {"skill_ids", "tool_schemas"}
    assert t2.transform_families == {"skill_content", "prompt_structure", "hook_functions"}
    assert not t1.transform_families & t2.transform_families
    assert set(t1.source["families"]).isdisjoint(t2.source["families"])
    for qa in (t1, t2):
        policy = POLICIES[str(qa.policy)]
        assert policy.split == "heldout"
        allowed = {t.name for t in policy.transforms}
        for item in qa.items:
            assert item.variant is not None and item.variant.transforms
            assert set(item.variant.transforms) <= allowed


def test_variants_are_verified_remapped_and_reproducible() -> None:
    base = live_set()
    t1 = variant_set("t1")
    assert len(t1.items) == len(base.items) and t1.skipped == ()
    original_ref = harness_ref(harness_dict())
    renamed = 0
    for item in t1.items:
        assert item.variant is not None
        source = base.item(item.base_id)
        assert item.id == f"{source.id}~t1" and item.comment == source.comment
        assert item.facts == source.facts and item.variant.base_harness_ref == original_ref
        harness = t1.harness_for(item)
        gold = trajectory_from_dict(item.gold)
        assert verify_pair(harness, gold) == []
        assert item.harness_ref != original_ref  # every variant changed the harness
        # the gold maps back to the original's through the recorded mapping
        back = item.variant.mapping.inverse().apply(gold)
        assert trajectory_to_dict(back) == source.gold
        renamed += not item.variant.mapping.is_identity
        # and augment reproduces the variant from the recorded policy and seed
        again = augment(
            base.harness(original_ref),
            trajectory_from_dict(source.gold),
            POLICIES[item.variant.policy],
            item.variant.seed,
        )
        assert harness_ref(harness_to_dict(again.harness)) == item.harness_ref
        assert again.prompt_layout == item.prompt_layout
    assert renamed > len(t1.items) // 2
    assert original_ref in t1.harnesses  # the base harness travels with the variants


def test_same_seed_same_set_other_seed_other_variants() -> None:
    assert (
        variant_set("t2").content_hash
        == build_harness_variant_qa_set(live_set(), "t2").content_hash
    )
    assert variant_set("t2", 1).content_hash != variant_set("t2").content_hash
    small = build_live_stream_qa_set(demo_catalog(), harness_dict(), per_type=2, seed=3)
    assert (
        small.content_hash
        == build_live_stream_qa_set(demo_catalog(), harness_dict(), per_type=2, seed=3).content_hash
    )
    assert len(small.items) == 2 * len(QUESTION_TYPES)
    # adding items does not change the variants of the others (seeds follow item ids)
    t1_small = build_harness_variant_qa_set(small, "t1")
    full = {item.id: item for item in variant_set("t1").items}
    for item in t1_small.items:
        assert item.harness_ref == full[item.id].harness_ref


def test_more_variants_per_item_and_hand_written_items() -> None:
    gold = dict(live_set().items[0].gold, comment="hand-written: how much is it?")
    extra = task_from_gold(gold, task_id="hand-1", harness_id="demo", catalog=demo_catalog())
    qa = build_live_stream_qa_set(
        demo_catalog(), harness_dict(), per_type=1, question_types=("price",), extra_tasks=[extra]
    )
    assert [item.id for item in qa.items][-1] == "hand-1"
    assert qa.item("hand-1").question_type == "gold" and qa.item("hand-1").facts
    two = build_harness_variant_qa_set(qa, "t1", variants_per_item=2)
    assert [item.id for item in two.items] == [
        f"{qa.items[0].id}~t1.0",
        f"{qa.items[0].id}~t1.1",
        "hand-1~t1.0",
        "hand-1~t1.1",
    ]
    assert two.base_ids["hand-1~t1.1"] == "hand-1"


def test_refusals() -> None:
    with pytest.raises(QASetError, match="built from a live_stream_qa set"):
        build_harness_variant_qa_set(variant_set("t1"), "t2")
    with pytest.raises(QASetError, match="variant_set must be one of t1, t2"):
        build_harness_variant_qa_set(live_set(), "t3")  # type: ignore[arg-type]
    task = generate_tasks(demo_catalog(), harness_dict(), "demo", split="eval")[0]
    with pytest.raises(QASetError, match="item ids must be unique"):
        build_live_stream_qa_set(demo_catalog(), harness_dict(), extra_tasks=[task])


def test_the_eval_modules_never_import_django() -> None:
    code = (
        "import sys; import training_app.evals.qa_sets, training_app.evals.qa_set_document, "
        "training_app.evals.qa_runner, training_app.evals.eval_stats, "
        "training_app.evals.score_table, training_app.evals.qa_summary; "
        "bad = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.')); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
