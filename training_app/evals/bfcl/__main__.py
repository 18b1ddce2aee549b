"""Score BFCL results produced elsewhere.

    python -m training_app.evals.bfcl --category NAME --results FILE --out FILE [--augmented FILE]

``--results``: JSON lines ``{"id": ..., "result": ...}`` (other fields, such as BFCL's
``inference_log``, are ignored); ``result`` is BFCL's decoded form (a list of
``{function_name: {argument: value}}``) or a string of Python calls (``[f(a=1), g(b="x")]``).
``--out``: one JSON line per result, in input order: ``{"id", "valid", "error",
"error_type"}`` (``error`` and ``error_type`` null when valid). Prints the accuracy.
``--augmented``: score against the records of the category in an HSA-augmented set written by
``python -m harness_app.hsa.bfcl_augment`` instead of the shipped BFCL v4 data.

Exit status 0 when scored; 2 when the input cannot be scored (the message names the file,
line and field; nothing is written).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness_app.hsa.bfcl_data import CATEGORIES
from training_app.evals.bfcl.cases import (
    MAX_REPORTED_PROBLEMS,
    BfclInputError,
    CaseSet,
    json_lines,
    load_augmented_cases,
    load_cases,
)
from training_app.evals.bfcl.checker import Verdict
from training_app.evals.bfcl.scoring import score_result


def read_results(path: Path, cases: CaseSet) -> list[tuple[str, Any]]:
    """(id, result) per line, every id a case of ``cases`` and given once; otherwise
    ``BfclInputError`` naming each bad line and field."""
    problems: list[str] = []
    results: list[tuple[str, Any]] = []
    first_line: dict[str, int] = {}
    example = next(iter(cases.cases), None)
    for number, item in json_lines(path, "results", problems):
        if len(problems) >= MAX_REPORTED_PROBLEMS:
            break
        where = f"results {path} line {number}"
        if not isinstance(item, dict):
            problems.append(f"{where}: expected a JSON object with fields 'id' and 'result'")
            continue
        if "id" not in item:
            problems.append(f"{where}: missing field 'id'")
            continue
        result_id = item["id"]
        if not isinstance(result_id, str):
            problems.append(f"{where}: field 'id' must be a string, got {json.dumps(result_id)}")
            continue
        if result_id in first_line:
            problems.append(
                f"{where}: field 'id': duplicate id {result_id!r} (first on line "
                f"{first_line[result_id]})"
            )
            continue
        first_line[result_id] = number
        if result_id in cases.refused:
            reason = cases.refused[result_id]
            problems.append(
                f"{where}: field 'id': {result_id!r} is a record bfcl_augment refused"
                + (f" ({reason})" if reason else "")
                + "; it has no functions to score against"
            )
            continue
        if result_id not in cases.cases:
            hint = f" (ids look like {example!r})" if example else ""
            problems.append(
                f"{where}: field 'id': unknown id {result_id!r} for category "
                f"{cases.category} in {cases.source}{hint}"
            )
            continue
        if "result" not in item:
            problems.append(f"{where}: missing field 'result'")
            continue
        results.append((result_id, item["result"]))
    if problems:
        raise BfclInputError(problems)
    if not results:
        raise BfclInputError([f"results {path}: no results (expected JSON lines with 'id')"])
    return results


def score_file(cases: CaseSet, results: Sequence[tuple[str, Any]]) -> list[tuple[str, Verdict]]:
    scored = []
    for result_id, result in results:
        case = cases.cases[result_id]
        verdict = score_result(case.category, case.functions, case.ground_truth, result)
        scored.append((result_id, verdict))
    return scored


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m training_app.evals.bfcl",
        description="Score BFCL v4 single-turn results with BFCL's AST rule.",
    )
    parser.add_argument("--category", required=True, choices=CATEGORIES)
    parser.add_argument("--results", required=True, type=Path, help='{"id", "result"} lines')
    parser.add_argument("--out", required=True, type=Path, help='{"id", "valid", "error"} lines')
    parser.add_argument(
        "--augmented",
        type=Path,
        help="an augmented set written by python -m harness_app.hsa.bfcl_augment",
    )
    args = parser.parse_args(argv)
    try:
        if args.augmented is not None:
            cases = load_augmented_cases(args.augmented, args.category)
        else:
            cases = load_cases(args.category)
        results = read_results(args.results, cases)
    except BfclInputError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        if len(exc.problems) >= MAX_REPORTED_PROBLEMS:
            print(f"error: (stopped after {MAX_REPORTED_PROBLEMS} problems)", file=sys.stderr)
        return 2
    scored = score_file(cases, results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as out:
        for result_id, verdict in scored:
            line = {
                "id": result_id,
                "valid": verdict.valid,
                "error": verdict.error,
                "error_type": verdict.error_type,
            }
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    valid = sum(verdict.valid for _, verdict in scored)
    print(
        f"{args.category}: accuracy {valid / len(scored):.4f} ({valid} of {len(scored)} "
        f"results valid) against {cases.source}"
    )
    missing = len(cases.cases) - len(scored)
    if missing:
        print(f"note: {missing} of the {len(cases.cases)} cases have no result")
    errors = Counter(verdict.error_type for _, verdict in scored if not verdict.valid)
    for error_type, count in errors.most_common():
        print(f"  {count:>6}  {error_type}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
