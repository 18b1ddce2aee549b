"""Task records from the demo catalog: disjoint train/eval banks, gold that fits the harness,
tool results that are what the catalog answers."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from harness_app.harness.serialization import harness_from_yaml, harness_to_dict
from harness_app.hsa.trajectory import trajectory_from_dict
from harness_app.hsa.verify import verify_pair
from training_app.pipeline.catalog_snapshot import CatalogSnapshot, demo_catalog
from training_app.pipeline.task_set import (
    QUESTION_TYPES,
    TEMPLATES,
    TaskSetError,
    generate_tasks,
)

ROOT = Path(__file__).resolve().parents[3]
HARNESS = harness_from_yaml(
    (ROOT / "harness_app/demo_data/live_stream_harness.yaml").read_text(encoding="utf-8")
)


def _tasks(split: str, **kwargs: Any) -> list[dict[str, Any]]:
    return generate_tasks(demo_catalog(), harness_to_dict(HARNESS), "demo", split=split, **kwargs)  # type: ignore[arg-type]


def test_train_and_eval_share_no_template_and_no_comment() -> None:
    # given the two banks
    train, evaluation = TEMPLATES["train"], TEMPLATES["eval"]
    # then no comment or answer template appears in both
    for qtype in QUESTION_TYPES:
        train_comments = {c for c, _a in train[qtype]}
        eval_comments = {c for c, _a in evaluation[qtype]}
        train_answers = {a for _c, a in train[qtype]}
        eval_answers = {a for _c, a in evaluation[qtype]}
        assert not train_comments & eval_comments, qtype
        assert not train_answers & eval_answers, qtype
    all_train = {t for bank in train.values() for pair in bank for t in pair}
    all_eval = {t for bank in evaluation.values() for pair in bank for t in pair}
    assert not all_train & all_eval
    # and no generated comment text either
    train_texts = {t["comment"] for t in _tasks("train")}
    eval_texts = {t["comment"] for t in _tasks("eval")}
    assert train_texts and eval_texts and not train_texts & eval_texts


def test_every_question_type_in_both_splits_with_gold_that_fits_the_harness() -> None:
    for split in ("train", "eval"):
        tasks = _tasks(split)
        counts = Counter(t["question_type"] for t in tasks)
        assert set(counts) == set(QUESTION_TYPES), split
        assert len({t["id"] for t in tasks}) == len(tasks)
        for task in tasks:
            gold = trajectory_from_dict(task["gold"])
            assert verify_pair(HARNESS, gold) == [], task["id"]
            assert gold.comment == task["comment"]
            assert gold.final_answer
            # every price the answer states is a price a tool returned
            assert set(gold.quoted_prices) <= set(gold.catalog_prices), task["id"]
            assert set(task["context"]) == {
                "room_name",
                "room_locale",
                "currency",
                "product_sku",
                "product_title",
                "product_price",
                "today",
            }


def test_gold_results_are_the_catalog_answers() -> None:
    # an independent reference: the demo gold set (make_gold_set.py computes get_product
    # results from the CSV by its own code)
    reference = [
        json.loads(line)
        for line in (ROOT / "training_app/demo_data/gold_trajectories.jsonl").open()
    ]
    snapshot = CatalogSnapshot(demo_catalog())
    checked = 0
    for example in reference:
        for call in example["tool_calls"]:
            if call["name"] == "get_product":
                assert snapshot.get_product(call["arguments"]["sku"]) == call["result"]
                checked += 1
    assert checked >= 30
    # and the price task of SW-1001 quotes the CSV price through the tool
    price = next(t for t in _tasks("train") if t["id"] == "train-price-SW-1001")
    (call,) = price["gold"]["tool_calls"]
    assert call["name"] == "get_product" and call["result"]["price"] == "89.00"
    assert "$89.00" in price["gold"]["final_answer"]
    assert price["gold"]["skill"] == "product-qa"


def test_stock_and_size_tasks_run_check_stock_for_the_asked_size() -> None:
    catalog = demo_catalog()
    by_sku = {p["sku"]: p for p in catalog["products"]}
    for task in _tasks("train", question_types=("stock", "size")):
        stock_call = task["gold"]["tool_calls"][1]
        assert stock_call["name"] == "check_stock"
        size = stock_call["arguments"]["size"]
        units = by_sku[task["context"]["product_sku"]]["attributes"]["stock_by_size"][size]
        assert stock_call["result"]["units"] == units
        expected = f"{units} left in {size}." if units else f"{size} is sold out right now."
        assert expected in task["gold"]["final_answer"]


def test_same_seed_same_tasks_and_per_type_sampling() -> None:
    assert _tasks("train", seed=3) == _tasks("train", seed=3)
    sampled = _tasks("train", seed=3, per_type=2)
    assert Counter(t["question_type"] for t in sampled) == dict.fromkeys(QUESTION_TYPES, 2)


def test_a_skill_the_harness_lacks_is_refused() -> None:
    with pytest.raises(TaskSetError, match=r"'price'.*'pricing'"):
        generate_tasks(
            demo_catalog(),
            harness_to_dict(HARNESS),
            "demo",
            split="train",
            skills={"price": "pricing"},
        )


def test_unknown_split_is_refused() -> None:
    with pytest.raises(TaskSetError, match="split must be one of train, eval"):
        _tasks("test")
