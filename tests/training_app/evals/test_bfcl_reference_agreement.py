"""The BFCL scorer (library and CLI) against BFCL's own eval runner, on recorded model outputs.

``data/bfcl_official_outputs.jsonl.gz`` was written by
``scripts/bfcl_reference/official_model_outputs.py`` in the reference venv (``bfcl-eval``
2026.3.23): every case of the ten single-turn categories, and 25 HSA-augmented records per
category as ``bfcl_augment`` wrote them, each with model outputs as strings of Python calls
(decoded by BFCL's prompting decoder) and in the decoded form, right and wrong (wrong
function, missing required argument, wrong type, value outside the set, extra and omitted
calls, calls where none is wanted, prose, fences, cut-short text, decoder probes), scored by
BFCL's ``eval_runner`` functions. Here every recorded output must get the same verdict and
error type from ``score_result`` and from ``python -m training_app.evals.bfcl``, and every
string the same decoding. Regenerate: docs/EVALUATION_BFCL.md.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.reference_recordings import read_recording
from training_app.evals.bfcl import (
    CATEGORIES,
    NO_CALL_CATEGORIES,
    DecodeError,
    decode_python_calls,
    load_cases,
    score_result,
)

ROOT = Path(__file__).resolve().parents[3]
OUTPUTS = Path(__file__).resolve().parent / "data" / "bfcl_official_outputs.jsonl.gz"
# What the reference script records when BFCL's runner itself raises on an output, and what
# the scorer reports for the same output.
OFFICIAL_CRASH, SCORER_CRASH = "exception:", "checker_error:"
# Per category: (original outputs, of them officially valid), (augmented, valid).
EXPECTED_COUNTS = {
    "simple_python": ((12_097, 2_938), (755, 182)),
    "multiple": ((6_228, 1_475), (736, 182)),
    "parallel": ((6_436, 1_674), (778, 199)),
    "parallel_multiple": ((6_745, 1_865), (789, 218)),
    "live_simple": ((7_456, 1_659), (730, 179)),
    "live_multiple": ((29_470, 6_925), (707, 162)),
    "live_parallel": ((755, 125), (480, 125)),
    "live_parallel_multiple": ((998, 191), (697, 185)),
    "irrelevance": ((4_392, 3_168), (450, 325)),
    "live_irrelevance": ((15_984, 11_540), (450, 325)),
}
WRONG_KINDS = (
    "py:original_function_name",
    "py:original_param_name",
    "py:missing_required",
    "py:wrong_type",
    "py:value_outside",
    "py:extra_call",
    "py:omitted_call",
    "text:prose",
    "text:cut_short",
    "text:fenced_python",
)
AUGMENTED_RECORDS = {"live_parallel": 16, "live_parallel_multiple": 23}
NO_CALL_KINDS = ("py:no_call", "py:call_when_none_wanted", "text:prose", "text:empty")


@functools.cache
def recorded() -> tuple[dict[str, Any], dict[str, dict[str, Any]], list[dict[str, Any]]]:
    return read_recording(
        OUTPUTS, "augmented_record", lambda item: item["record"]["id"], lambda item: item["record"]
    )


def case_docs(item: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(functions, ground truth) of a recorded case: the shipped data or the stored record."""
    if item["set"] == "augmented":
        record = recorded()[1][item["case_id"]]
        return record["function"], record["ground_truth"]
    case = _original(item["category"])[item["case_id"]]
    return case.functions, case.ground_truth


@functools.cache
def _original(category: str) -> dict[str, Any]:
    return load_cases(category).cases


def official_error_type(error_type: str | None) -> str | None:
    if error_type is not None and error_type.startswith(OFFICIAL_CRASH):
        return SCORER_CRASH + error_type.removeprefix(OFFICIAL_CRASH)
    return error_type


def test_the_recording_covers_every_category_right_and_wrong() -> None:
    meta, augmented, cases = recorded()
    assert meta["bfcl_eval"] == "2026.3.23"
    assert meta["python"].startswith("3.11.")
    counts: Counter[tuple[str, str, bool]] = Counter()
    kinds: dict[str, set[str]] = {category: set() for category in CATEGORIES}
    for item in cases:
        for kind, _result, valid, _error_type, _decoding in item["outputs"]:
            counts[(item["set"], item["category"], valid)] += 1
            kinds[item["category"]].add(kind)
    for category, ((original, original_valid), (aug, aug_valid)) in EXPECTED_COUNTS.items():
        assert counts[("original", category, True)] == original_valid, category
        assert counts[("original", category, False)] == original - original_valid, category
        assert counts[("augmented", category, True)] == aug_valid, category
        assert counts[("augmented", category, False)] == aug - aug_valid, category
        wanted = NO_CALL_KINDS if category in NO_CALL_CATEGORIES else WRONG_KINDS
        assert set(wanted) <= kinds[category], (category, set(wanted) - kinds[category])
        # (original_param_name: only where HSA renamed a parameter, so augmented records)
    # every original case is there, and the augmented records are real bfcl_augment output
    ids = Counter((item["set"], item["category"]) for item in cases)
    for category in CATEGORIES:
        assert ids[("original", category)] == len(_original(category))
        # (25 records marked valid per category, or all there are)
        assert ids[("augmented", category)] == AUGMENTED_RECORDS.get(category, 25)
    assert all(r["id"].endswith("-hsa") and r["valid"] and r["mapping"] for r in augmented.values())
    # the wrong outputs are wrong for BFCL, or agreeing on them would prove nothing
    accepted_wrong = [
        (item["case_id"], kind)
        for item in cases
        for kind, _result, valid, _error_type, _decoding in item["outputs"]
        if valid and kind in WRONG_KINDS and item["category"] not in NO_CALL_CATEGORIES
    ]
    assert accepted_wrong == []


def test_the_library_scorer_gives_bfcls_verdict_and_decoding_on_every_recorded_output() -> None:
    _meta, _augmented, cases = recorded()
    agreed: Counter[str] = Counter()
    disagreements = []
    decodings = 0
    for item in cases:
        functions, truth = case_docs(item)
        for kind, result, valid, error_type, decoding in item["outputs"]:
            verdict = score_result(item["category"], functions, truth, result)
            if (verdict.valid, verdict.error_type) == (valid, official_error_type(error_type)):
                agreed[item["category"]] += 1
            else:
                disagreements.append((item["case_id"], kind, result, valid, error_type, verdict))
            if decoding is not None:
                decodings += 1
                try:
                    mine = repr(decode_python_calls(result))
                except DecodeError:
                    mine = "error"
                if (mine == "error") != decoding.startswith("error:") or mine not in (
                    "error",
                    decoding,
                ):
                    disagreements.append((item["case_id"], kind, result, decoding, mine))
    assert disagreements == [], (len(disagreements), disagreements[:5])
    for category, ((original, _), (aug, _)) in EXPECTED_COUNTS.items():
        assert agreed[category] == original + aug, category
    assert decodings > 70_000


def _run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "training_app.evals.bfcl", *map(str, args)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


@pytest.mark.parametrize("category", CATEGORIES)
def test_the_cli_gives_bfcls_verdict_on_every_recorded_output(
    category: str, tmp_path: Path
) -> None:
    """One CLI run per category: every recorded output becomes its own case of an augmented
    set (the case's functions and truth under a unique id), so one results file holds them
    all."""
    _meta, _augmented, cases = recorded()
    records, results, expected = [], [], {}
    for item in cases:
        if item["category"] != category:
            continue
        functions, truth = case_docs(item)
        for index, (_kind, result, valid, error_type, _decoding) in enumerate(item["outputs"]):
            case_id = f"{item['set']}:{item['case_id']}#{index}"
            records.append(
                {
                    "id": case_id,
                    "category": category,
                    "function": functions,
                    "ground_truth": truth,
                    "valid": True,
                }
            )
            results.append({"id": case_id, "result": result})
            expected[case_id] = (valid, official_error_type(error_type))
    augmented, results_file, out = (
        tmp_path / "set.jsonl",
        tmp_path / "results.jsonl",
        tmp_path / "out.jsonl",
    )
    augmented.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    results_file.write_text("".join(json.dumps(r) + "\n" for r in results), "utf-8")

    run = _run_cli(
        "--category", category, "--results", results_file, "--out", out, "--augmented", augmented
    )

    assert run.returncode == 0, run.stderr
    scored = {line["id"]: (line["valid"], line["error_type"]) for line in _read_lines(out)}
    assert scored == expected
    valid = sum(v for v, _ in expected.values())
    assert (
        f"{category}: accuracy {valid / len(expected):.4f} ({valid} of {len(expected)}"
        in run.stdout
    )


def test_the_cli_scores_bfcl_augment_output_and_the_shipped_data(tmp_path: Path) -> None:
    """The real records bfcl_augment wrote (``--augmented``), and the default set."""
    _meta, augmented, cases = recorded()
    records_file = tmp_path / "bfcl-tool-schemas_seed0.jsonl"
    records_file.write_text("".join(json.dumps(r) + "\n" for r in augmented.values()), "utf-8")
    for item_set, kind, extra in (
        ("augmented", "py:truth", ["--augmented", records_file]),
        ("original", "text:fenced", []),
    ):
        results, expected = [], {}
        for item in cases:
            if item["set"] != item_set or item["category"] != "parallel_multiple":
                continue
            for output_kind, result, valid, error_type, _decoding in item["outputs"]:
                if output_kind == kind:
                    results.append({"id": item["case_id"], "result": result, "inference_log": []})
                    expected[item["case_id"]] = (valid, error_type)
        results_file, out = tmp_path / f"{item_set}.jsonl", tmp_path / f"{item_set}-out.jsonl"
        results_file.write_text("".join(json.dumps(r) + "\n" for r in results), "utf-8")

        run = _run_cli(
            "--category", "parallel_multiple", "--results", results_file, "--out", out, *extra
        )

        assert run.returncode == 0, run.stderr
        assert {
            line["id"]: (line["valid"], line["error_type"]) for line in _read_lines(out)
        } == expected
        assert len(expected) == (25 if item_set == "augmented" else 200)
