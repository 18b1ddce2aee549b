"""Data generation: JSONL artifacts are reproducible and every line reproduces its example."""

from __future__ import annotations

import json
from pathlib import Path

from harness_app.harness.model import Harness
from harness_app.harness.serialization import harness_from_dict
from harness_app.hsa.augment import augment, augment_many, write_jsonl
from harness_app.hsa.policy import HSA_TRAIN, POLICIES
from harness_app.hsa.trajectory import GoldTrajectory, trajectory_from_dict
from harness_app.hsa.verify import verify_pair


def test_jsonl_is_reproducible_and_self_describing(
    tmp_path: Path, demo: Harness, product_gold: GoldTrajectory, shipping_gold: GoldTrajectory
) -> None:
    pairs = [(demo, product_gold), (demo, shipping_gold)]
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert write_jsonl(augment_many(pairs, HSA_TRAIN, seed=9, variants=3), first) == 6
    write_jsonl(augment_many(pairs, HSA_TRAIN, seed=9, variants=3), second)
    assert first.read_bytes() == second.read_bytes()
    lines = [json.loads(line) for line in first.read_text("utf-8").splitlines()]
    assert [line["provenance"]["source_index"] for line in lines] == [0, 0, 0, 1, 1, 1]
    for line in lines:
        harness = harness_from_dict(line["harness"])
        trajectory = trajectory_from_dict(line["trajectory"])
        assert verify_pair(harness, trajectory) == []
        provenance = line["provenance"]
        source = pairs[provenance["source_index"]]
        again = augment(*source, POLICIES[provenance["policy"]], provenance["seed"])
        assert again.harness == harness and again.trajectory == trajectory
        assert again.prompt_layout == line["prompt_layout"]
