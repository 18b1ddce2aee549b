"""The production BFCL scorer against BFCL's own checker, on recorded verdicts.

``data/bfcl_official_verdicts.jsonl.gz`` was written by
``scripts/bfcl_reference/official_verdicts.py`` running ``bfcl-eval`` 2026.3.23's
``ast_checker`` (in its own venv: it pins numpy 1.26) on the records ``bfcl_augment`` writes
for all ten categories, seeds 0-4, both BFCL policies, and on the original cases: the calls
built from each truth, and for seed 0 and the originals wrong calls of every kind. Here
``training_app.evals.bfcl.score_result`` (the production scorer, a port of BFCL's rule) must
give the same verdict, and the same error type, on every recorded candidate.
Regenerate: docs/HSA.md, "Agreement with BFCL's official checker".
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from pathlib import Path
from typing import Any

from harness_app.hsa.bfcl_data import CATEGORIES, NO_CALL_CATEGORIES
from tests.reference_recordings import read_recording
from training_app.evals.bfcl import check_parallel, score_result

DATA = Path(__file__).resolve().parent / "data"
VERDICTS = DATA / "bfcl_official_verdicts.jsonl.gz"
SUMMARY = DATA / "bfcl_official_summary.json"
POLICIES = ("bfcl-tool-schemas", "bfcl-tool-schemas-heldout")
SEEDS = range(5)
PASSING_KINDS = frozenset(
    {"truth", "truth_minimal", "truth_reversed", "truth_last_option", "no_call", "empty_call"}
)
WRONG_KINDS = frozenset(
    {
        "original_function_name",
        "original_param_name",
        "value_outside",
        "wrong_type",
        "missing_required",
        "extra_call",
        "omitted_call",
        "call_when_none_wanted",
    }
)


@functools.cache
def _recorded() -> tuple[dict[str, Any], dict[str, dict[str, Any]], list[dict[str, Any]]]:
    return read_recording(VERDICTS, "record", lambda item: item["record_id"])


def test_the_recorded_verdicts_cover_every_category_seed_policy_and_candidate_kind() -> None:
    meta, records, verdicts = _recorded()
    assert meta["bfcl_eval"] == "2026.3.23"
    assert meta["checker"] == "bfcl_eval.eval_checker.ast_eval.ast_checker.ast_checker"
    runs = {(r["policy"], r["seed"], r["category"]) for r in records.values()}
    # seed 0 and the originals in full; seeds 1-4 the truth verdicts of the call categories
    assert meta["wrong_seeds"] == [0]
    expected = {("original", None, c) for c in CATEGORIES} | {
        (p, s, c)
        for p in POLICIES
        for s in SEEDS
        for c in CATEGORIES
        if s == 0 or c not in NO_CALL_CATEGORIES
    }
    assert runs == expected
    assert {v["record_id"] for v in verdicts} == set(records)  # every record is judged
    kinds = Counter(v["candidate_kind"] for v in verdicts)
    # (truth_int_for_float only where a truth holds a whole float; BFCL's data has none)
    assert (
        PASSING_KINDS | WRONG_KINDS
        <= set(kinds)
        <= PASSING_KINDS | WRONG_KINDS | {"truth_int_for_float"}
    )
    assert all(kinds[kind] >= 1000 for kind in WRONG_KINDS - {"original_param_name"}), kinds
    # the wrong candidates are really wrong for BFCL, or agreeing on them would prove nothing
    accepted = [v for v in verdicts if v["candidate_kind"] in WRONG_KINDS and v["official_valid"]]
    assert accepted == []


def test_the_scorer_gives_bfcls_verdict_on_every_recorded_candidate() -> None:
    _meta, records, verdicts = _recorded()
    disagreements = []
    for verdict in verdicts:
        record = records[verdict["record_id"]]
        mine = score_result(
            record["category"], record["functions"], record["ground_truth"], verdict["candidate"]
        )
        if (mine.valid, mine.error_type) != (
            verdict["official_valid"],
            verdict["official_error_type"],
        ):
            disagreements.append(
                (
                    verdict["record_id"],
                    verdict["candidate_kind"],
                    verdict["official_error_type"],
                    mine,
                )
            )
    assert disagreements == [], (len(disagreements), disagreements[:10])
    assert len(verdicts) == 85_668


def _officially_rejected(verdicts: list[dict[str, Any]]) -> Counter[tuple[str, Any, str]]:
    """Per (policy, seed, category): records whose truth call(s) BFCL's checker rejects."""
    _meta, records, _ = _recorded()
    rejected = {
        v["record_id"]
        for v in verdicts
        if v["candidate_kind"] in ("truth", "truth_minimal", "no_call") and not v["official_valid"]
    }
    return Counter(
        (records[r]["policy"], records[r]["seed"], records[r]["category"]) for r in rejected
    )


def test_the_summary_numbers_are_those_of_the_recorded_verdicts() -> None:
    _meta, records, verdicts = _recorded()
    summary = json.loads(SUMMARY.read_text("utf-8"))
    rejected = _officially_rejected(verdicts)
    recorded = Counter((r["policy"], r["seed"], r["category"]) for r in records.values())
    assert len(summary["runs"]) == (1 + len(POLICIES) * len(SEEDS)) * len(CATEGORIES)
    for run in summary["runs"]:
        key = (run["policy"], run["seed"], run["category"])
        assert run["recorded"] == recorded[key], key
        if run["seed"] in (None, 0) or run["category"] not in NO_CALL_CATEGORIES:
            assert run["recorded"] == run["valid"], key
        assert run["records"] == run["valid"] + run["refused"], key
        assert sum(run["refused_reasons"].values()) == run["refused"], key
        assert run["official_rejects_valid"] == rejected[key], key
        assert run["wrong_accepted"] == 0, key


def test_bfcls_checker_accepts_every_record_marked_valid() -> None:
    _meta, _records, verdicts = _recorded()
    rejected = _officially_rejected(verdicts)
    assert {key: n for key, n in rejected.items() if key[0] != "original"} == {}


def test_a_simple_category_is_judged_against_the_first_offered_function() -> None:
    """Why the dispatch matters: the same call and answer pass as "multiple" but fail as
    "simple" when a distractor comes first (BFCL's simple_function_checker reads the name
    from func_description[0], not from the answer)."""
    params = {"type": "dict", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    functions = [
        {"name": "distractor", "parameters": params},
        {"name": "area", "parameters": params},
    ]
    call, answer = [{"area": {"x": 2}}], [{"area": {"x": [2]}}]
    assert score_result("multiple", functions, answer, call).valid
    assert check_parallel(functions, call, answer).valid
    assert not score_result("simple_python", functions, answer, call).valid
    assert score_result("simple_python", functions[::-1], answer, call).valid
    # irrelevance: [] and [{}] are "no call"; any decoded call is one
    assert score_result("irrelevance", functions, [], []).valid
    assert score_result("irrelevance", functions, [], [{}]).valid
    assert not score_result("irrelevance", functions, [], call).valid
    assert set(NO_CALL_CATEGORIES) == {"irrelevance", "live_irrelevance"}
