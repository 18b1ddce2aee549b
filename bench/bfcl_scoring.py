"""BFCL scoring throughput: 1,000 model outputs scored by ``training_app.evals.bfcl``.

Figure: CPU seconds (``time.process_time``, one process, one core) to score 1,000 results
with ``score_result``, decoding included, median of 5 rounds after a warm-up. The results are
real strings of Python calls from the recorded reference outputs
(``tests/training_app/evals/data/bfcl_official_outputs.jsonl.gz``), 100 per single-turn
category, spread evenly over each category's outputs (right and wrong ones, prose, fenced
text, wrong types, extra calls, ...). Target: <= 2 s.

Baselines measured in the same run: ``ast.parse`` alone on the same 1,000 strings (the
floor of any Python-syntax decoder), the scorer's decoding alone, and, when the reference
venv exists (``scripts/bfcl_reference/make_venv.sh``), BFCL's own eval runner functions
(``_evaluate_single_ast_entry`` / ``_evaluate_single_relevance_entry`` with the prompting
handler, bfcl-eval 2026.3.23) on the same 1,000 results, timed the same way inside that venv.
"""

from __future__ import annotations

import ast
import gzip
import json
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from training_app.evals.bfcl import CATEGORIES, load_cases, score_result
from training_app.evals.bfcl.decode import DecodeError, decode_python_calls

ROOT = Path(__file__).resolve().parent.parent
OUTPUTS = ROOT / "tests" / "training_app" / "evals" / "data" / "bfcl_official_outputs.jsonl.gz"
REFERENCE_PYTHON = ROOT / "var" / "bfcl-reference-venv" / "bin" / "python"
TARGET_SECONDS = 2.0
PER_CATEGORY = 100
ROUNDS = 5

# Item = (category, functions, ground truth, result string)
Item = tuple[str, list[dict[str, Any]], list[dict[str, Any]], str]


@cache
def benchmark_items() -> list[Item]:
    """100 string outputs per category from the recorded reference outputs (original cases),
    taken at an even stride through each category's outputs."""
    by_category: dict[str, list[tuple[str, str]]] = {c: [] for c in CATEGORIES}
    with gzip.open(OUTPUTS, "rt", encoding="utf-8") as handle:
        for line in handle:
            item = json.loads(line)
            if item["kind"] == "case" and item["set"] == "original":
                by_category[item["category"]] += [
                    (item["case_id"], result)
                    for kind, result, *_ in item["outputs"]
                    if isinstance(result, str) and not kind.startswith("probe:")
                ]
    items: list[Item] = []
    for category, outputs in by_category.items():
        cases = load_cases(category).cases
        stride = len(outputs) / PER_CATEGORY
        for index in range(PER_CATEGORY):
            case_id, result = outputs[int(index * stride)]
            case = cases[case_id]
            items.append((category, case.functions, case.ground_truth, result))
    return items


def _cpu_seconds(fn: Callable[[], object], rounds: int = ROUNDS) -> float:
    fn()  # warm-up
    samples = []
    for _ in range(rounds):
        start = time.process_time()
        fn()
        samples.append(time.process_time() - start)
    return statistics.median(samples)


def score_all(items: list[Item]) -> int:
    return sum(score_result(*item).valid for item in items)


def decode_all(items: list[Item]) -> int:
    decoded = 0
    for _category, _functions, _truth, result in items:
        try:
            decode_python_calls(result)
            decoded += 1
        except DecodeError:
            pass
    return decoded


def parse_all(items: list[Item]) -> int:
    parsed = 0
    for *_, result in items:
        try:
            ast.parse("[" + result.strip("`\n ") + "]", mode="eval")
            parsed += 1
        except SyntaxError:
            pass
    return parsed


# Runs inside the reference venv: BFCL's runner functions on the same items, CPU time.
_OFFICIAL_TIMER = r"""
import json, statistics, sys, time
from bfcl_eval.constants.enums import Language, ReturnFormat
from bfcl_eval.eval_checker.eval_runner import (
    _evaluate_single_ast_entry, _evaluate_single_relevance_entry, get_handler)
items = json.load(open(sys.argv[1]))
handler = get_handler("Qwen/Qwen3-8B")
def run():
    valid = 0
    for category, functions, truth, result in items:
        prompt = {"id": "x", "function": functions}
        if "irrelevance" in category:
            entry = _evaluate_single_relevance_entry(
                handler, "x", result, prompt, "Qwen_Qwen3-8B", category)
        else:
            entry = _evaluate_single_ast_entry(
                handler, "x", result, truth, prompt, "Qwen_Qwen3-8B", category,
                language=Language.PYTHON, return_format=ReturnFormat.PYTHON,
                has_tool_call_tag=False)
        valid += entry["valid"]
    return valid
valid = run()
samples = []
for _ in range(int(sys.argv[2])):
    start = time.process_time(); run(); samples.append(time.process_time() - start)
print(json.dumps({"seconds": statistics.median(samples), "valid": valid}))
"""


def official_seconds(items: list[Item]) -> tuple[float, int] | None:
    """(CPU seconds, valid count) of BFCL's runner on ``items``, or None without the venv."""
    if not REFERENCE_PYTHON.exists():
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(items, handle)
    try:
        run = subprocess.run(
            [str(REFERENCE_PYTHON), "-c", _OFFICIAL_TIMER, handle.name, str(ROUNDS)],
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
        )
    finally:
        Path(handle.name).unlink()
    measured = json.loads(run.stdout.strip().splitlines()[-1])
    return float(measured["seconds"]), int(measured["valid"])


def run() -> dict[str, float]:
    items = benchmark_items()
    valid = score_all(items)
    scorer = _cpu_seconds(lambda: score_all(items))
    decode = _cpu_seconds(lambda: decode_all(items))
    parse = _cpu_seconds(lambda: parse_all(items))
    print(
        f"{len(items):,} BFCL results ({PER_CATEGORY} per category x {len(CATEGORIES)}, "
        f"{valid} valid), CPU time, median of {ROUNDS} rounds"
    )
    print(
        f"{'score_result (decode + AST rule)':<44} {scorer:>7.3f} s  (target <= {TARGET_SECONDS} s)"
    )
    print(f"{'baseline: decode_python_calls alone':<44} {decode:>7.3f} s")
    print(f"{'baseline: ast.parse alone (parser floor)':<44} {parse:>7.3f} s")
    figures = {"seconds": scorer, "decode_seconds": decode, "parse_seconds": parse}
    official = official_seconds(items)
    if official is None:
        print(f"baseline: BFCL's own runner skipped ({REFERENCE_PYTHON} not built)")
    else:
        seconds, official_valid = official
        print(
            f"{'baseline: BFCL eval runner (bfcl-eval venv)':<44} {seconds:>7.3f} s  "
            f"({official_valid} valid; the scorer {scorer / seconds:.2f}x its time)"
        )
        figures["official_seconds"] = seconds
        if official_valid != valid:
            print(f"WARNING: BFCL found {official_valid} valid, the scorer {valid}")
    verdict = "meets" if scorer <= TARGET_SECONDS else "MISSES"
    print(f"{verdict} the {TARGET_SECONDS} s target")
    return figures


if __name__ == "__main__":
    run()
