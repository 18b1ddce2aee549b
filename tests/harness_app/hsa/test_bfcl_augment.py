"""BFCL live-simple under tool-schema HSA: 100% of augmented ground truths validate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_app.harness.bfcl import tool_from_bfcl
from harness_app.hsa.bfcl_augment import (
    GroundTruthCall,
    augment_bfcl,
    ground_truth_problems,
    main,
)
from harness_app.hsa.mapping import RenameMapping
from tests.harness_app.hsa.conftest import BFCL_DIR

needs_data = pytest.mark.skipif(
    not (BFCL_DIR / "live_simple.jsonl").exists(),
    reason=f"BFCL data not found at {BFCL_DIR} (the shared data folder is absent)",
)


@needs_data
def test_every_case_is_augmented_and_every_ground_truth_validates() -> None:
    records, report = augment_bfcl(BFCL_DIR, seed=0)
    assert report.cases == 258  # wc -l says 257: the last line has no newline
    assert report.failures == []
    assert report.original_ground_truths_valid == 258
    assert report.augmented == report.augmented_ground_truths_valid == 258
    assert report.inverse_mapping_exact == 258
    assert report.tool_renamed >= 250
    assert len(records) == 258 and all(r["valid"] for r in records)


@needs_data
def test_records_revalidate_from_their_own_json_and_map_back() -> None:
    records, _report = augment_bfcl(BFCL_DIR, seed=3)
    answers = {
        json.loads(line)["id"]: json.loads(line)
        for line in (BFCL_DIR / "live_simple_answers.jsonl").read_text("utf-8").splitlines()
        if line.strip()
    }
    for record in json.loads(json.dumps(records)):
        (truth,) = record["ground_truth"]
        call = GroundTruthCall.from_bfcl(truth)
        function = next(f for f in record["function"] if f["name"] == call.name)
        tool = tool_from_bfcl(function)
        assert ground_truth_problems(tool, call) == [], record["id"]
        mapping = RenameMapping.from_dict(record["mapping"])
        original = GroundTruthCall.from_bfcl(answers[record["source_id"]]["ground_truth"][0])
        assert call.remapped(mapping.inverse()) == original


@needs_data
def test_same_seed_same_file_and_cli(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert main(["--out", str(first), "--seed", "5"]) == 0
    assert main(["--out", str(second), "--seed", "5"]) == 0
    assert first.read_bytes() == second.read_bytes()
    assert len(first.read_text("utf-8").splitlines()) == 258


def test_ground_truth_rules() -> None:
    tool = tool_from_bfcl(
        {
            "name": "set_mode",
            "description": "Set a mode.",
            "parameters": {
                "type": "dict",
                "required": ["body"],
                "properties": {
                    "body": {
                        "type": "dict",
                        "properties": {"mode": {"type": "string", "enum": ["COOL", "DRY"]}},
                        "required": ["mode"],
                    },
                    "unit": {"type": "string", "enum": ["s", "ms"], "default": "N/A"},
                },
            },
        }
    )
    good = GroundTruthCall("set_mode", {"body": [{"mode": ["COOL"]}], "unit": ["", "N/A"]})
    assert ground_truth_problems(tool, good) == []
    bad_value = GroundTruthCall("set_mode", {"body": [{"mode": ["HOT"]}]})
    assert any("'HOT' is not accepted" in p for p in ground_truth_problems(tool, bad_value))
    omitted_required = GroundTruthCall("set_mode", {"body": [""]})
    assert any("required" in p for p in ground_truth_problems(tool, omitted_required))
    unknown = GroundTruthCall("set_mode", {"body": [{"mode": ["DRY"]}], "speed": [1]})
    assert any("not a parameter" in p for p in ground_truth_problems(tool, unknown))
    renamed = good.remapped(
        RenameMapping(
            tool_renames={"set_mode": "setMode"}, param_renames={"set_mode": {"unit": "u"}}
        )
    )
    assert renamed == GroundTruthCall("setMode", {"body": [{"mode": ["COOL"]}], "u": ["", "N/A"]})
