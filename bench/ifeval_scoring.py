"""IFEval scoring speed: 541 responses, strict and loose, beside the reference's way of doing it.

Figure: CPU seconds (``time.process_time``, one core: scoring is single-threaded) to score
Google's published GPT-4 responses to all 541 prompts (the ``gpt4`` records of
tests/training_app/evals/data/ifeval_reference_verdicts.jsonl.gz), strict and loose, with
``training_app.evals.ifeval.score``; median of 3 rounds, each with empty memos
(``clear_caches``) so every text is measured afresh. The models (Punkt, langdetect's
profiles) are loaded in a warm-up first; that one-time load is printed on its own.
Target: <= 2 s.

Baselines in the same run:
- *reference loop*: the same checkers driven the way the reference's evaluation drives them
  (checkers built anew for each mode, all eight loose variants checked, nothing memoised);
- *reference itself*: lm-eval 0.4.13's ``test_instruction_following_strict``/``_loose`` on
  the same responses, timed inside the reference venv (scripts/ifeval_reference) when that
  venv exists under var/ (it is a developer tool; skipped otherwise).
"""

from __future__ import annotations

import gzip
import json
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from training_app.evals.ifeval import InputExample, clear_caches, load_prompts, score
from training_app.evals.ifeval.text import detect_language, sentence_tokenizer

ROOT = Path(__file__).resolve().parent.parent
VERDICTS = ROOT / "tests" / "training_app" / "evals" / "data" / "ifeval_reference_verdicts.jsonl.gz"
REFERENCE_PYTHON = ROOT / "var" / "ifeval-reference-venv" / "bin" / "python"
TARGET_SECONDS = 2.0

_REFERENCE_TIMER = """
import gzip, json, statistics, sys, time
sys.path.insert(0, sys.argv[1] + "/scripts/ifeval_reference")
from reference_verdicts import import_reference
utils, _, _ = import_reference()
examples = {}
for line in open(sys.argv[1] + "/training_app/evals/ifeval/data/input_data.jsonl"):
    e = json.loads(line)
    examples[e["key"]] = utils.InputExample(
        key=e["key"], instruction_id_list=e["instruction_id_list"], prompt=e["prompt"],
        kwargs=e["kwargs"])
pairs = [(examples[r["key"]], r["response"]) for r in map(json.loads, gzip.open(sys.argv[2], "rt"))
         if r["kind"] == "verdict" and r["source"] == "gpt4"]
rounds = []
for _ in range(int(sys.argv[3]) + 1):
    start = time.process_time()
    for inp, response in pairs:
        utils.test_instruction_following_strict(inp, response)
        utils.test_instruction_following_loose(inp, response)
    rounds.append(time.process_time() - start)
print(json.dumps({"responses": len(pairs), "seconds": statistics.median(rounds[1:])}))
"""


def gpt4_responses() -> dict[str, str]:
    """Prompt text -> Google's GPT-4 response, for all 541 prompts."""
    prompts = {inp.key: inp.prompt for inp in load_prompts()}
    with gzip.open(VERDICTS, "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    return {
        prompts[r["key"]]: r["response"]
        for r in records
        if r["kind"] == "verdict" and r["source"] == "gpt4"
    }


def _all_eight(response: str) -> list[str]:
    """The reference's eight loose variants, repeats included."""
    r = response.split("\n")
    first, last, both = ("\n".join(part).strip() for part in (r[1:], r[:-1], r[1:-1]))
    variants = [response, first, last, both]
    return [*variants[:1], response.replace("*", ""), *variants[1:]] + [
        v.replace("*", "") for v in (first, last, both)
    ]


def reference_loop(inputs: list[InputExample], responses: dict[str, str]) -> None:
    """The reference's evaluation order on the port's checkers, without the port's
    shortcuts: checkers built per mode, every loose variant tried, nothing memoised."""
    for inp in inputs:
        response = responses[inp.prompt]
        for checker in inp.build_instructions():
            clear_caches()
            _ = bool(response.strip()) and checker.check_following(response)
        variants = _all_eight(response)
        for checker in inp.build_instructions():
            for variant in variants:
                clear_caches()
                if variant.strip() and checker.check_following(variant):
                    break


def _seconds(fn: Any, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        clear_caches()
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def reference_seconds(rounds: int) -> dict[str, Any] | None:
    if not REFERENCE_PYTHON.exists():
        return None
    done = subprocess.run(
        [str(REFERENCE_PYTHON), "-c", _REFERENCE_TIMER, str(ROOT), str(VERDICTS), str(rounds)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run(rounds: int = 3) -> dict[str, float]:
    inputs = list(load_prompts())
    responses = gpt4_responses()
    assert len(responses) == len(inputs) == 541

    start = time.process_time()
    sentence_tokenizer()
    detect_language("The models load once per process.")
    load_seconds = time.process_time() - start

    port = _seconds(lambda: score(inputs, responses), rounds)
    loop = _seconds(lambda: reference_loop(inputs, responses), rounds)
    reference = reference_seconds(rounds)

    print(
        f"541 GPT-4 responses, strict + loose, CPU time, median of {rounds} rounds, memos emptied "
        "each round"
    )
    print(f"{'port: score()':<44} {port:>6.2f} s   ({541 / port:>5.0f} responses/s)")
    print(f"{'baseline: reference loop on the port':<44} {loop:>6.2f} s   ({loop / port:.1f}x)")
    if reference is None:
        print(f"{'baseline: lm-eval reference itself':<44}  (no var/ifeval-reference-venv)")
    else:
        ref = float(reference["seconds"])
        print(f"{'baseline: lm-eval reference itself':<44} {ref:>6.2f} s   ({ref / port:.1f}x)")
    print(f"{'one-time model load (Punkt, langdetect)':<44} {load_seconds:>6.2f} s")
    verdict = "meets" if port <= TARGET_SECONDS else "MISSES"
    print(f"{verdict} the {TARGET_SECONDS:.0f} s target")
    figures = {"port_seconds": port, "reference_loop_seconds": loop, "load_seconds": load_seconds}
    if reference is not None:
        figures["reference_seconds"] = float(reference["seconds"])
    return figures


if __name__ == "__main__":
    run()
