"""Score IFEval responses produced anywhere, like the reference's ``evaluation_main``.

    python -m training_app.evals.ifeval --input-data FILE --responses FILE --out DIR

``--input-data``: the prompts as ``input_data.jsonl`` lines (default: the 541 shipped with
this package). ``--responses``: ``{"prompt": ..., "response": ...}`` lines, one per prompt.
Writes ``DIR/eval_results_strict.jsonl`` and ``DIR/eval_results_loose.jsonl`` (the
reference's per-prompt lines) and prints the four accuracies. Exit status 2, with the file,
line and field named, when an input cannot be used; nothing is written then.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from training_app.evals.ifeval.evaluation import Accuracies, IFEvalResult, score
from training_app.evals.ifeval.records import (
    InputDataError,
    load_prompts,
    read_input_data,
    read_responses,
)

STRICT_FILE = "eval_results_strict.jsonl"
LOOSE_FILE = "eval_results_loose.jsonl"


def report(accuracies: Accuracies) -> str:
    return "\n".join(
        [
            f"IFEval: {accuracies.prompts} prompts, {accuracies.instructions} instructions",
            f"prompt-level strict accuracy:      {accuracies.prompt_level_strict:.4f}",
            f"instruction-level strict accuracy: {accuracies.instruction_level_strict:.4f}",
            f"prompt-level loose accuracy:       {accuracies.prompt_level_loose:.4f}",
            f"instruction-level loose accuracy:  {accuracies.instruction_level_loose:.4f}",
        ]
    )


def write_results(result: IFEvalResult, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, outputs in ((STRICT_FILE, result.strict), (LOOSE_FILE, result.loose)):
        with (out / name).open("w", encoding="utf-8") as f:
            for output in outputs:
                f.write(output.to_json_line() + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m training_app.evals.ifeval",
        description="Score IFEval responses (strict and loose), as Google's "
        "instruction_following_eval does.",
    )
    parser.add_argument(
        "--input-data",
        type=Path,
        help="prompts, input_data.jsonl format (default: the 541 shipped prompts)",
    )
    parser.add_argument(
        "--responses", type=Path, required=True, help='{"prompt", "response"} JSONL lines'
    )
    parser.add_argument("--out", type=Path, required=True, help="directory for the result files")
    parser.add_argument(
        "--allow-missing",
        action="store_true",
        help="score only the prompts that have a response (default: every prompt must have one)",
    )
    args = parser.parse_args(argv)

    try:
        inputs = load_prompts() if args.input_data is None else read_input_data(args.input_data)
        responses = read_responses(args.responses, inputs)
    except InputDataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2

    missing = [inp for inp in inputs if inp.prompt not in responses]
    if missing and not args.allow_missing:
        print(
            f"error: {args.responses}: no response for {len(missing)} of {len(inputs)} prompts "
            f"(first: key {missing[0].key}); pass --allow-missing to score only the answered ones",
            file=sys.stderr,
        )
        return 2
    answered = [inp for inp in inputs if inp.prompt in responses]
    if not answered:
        print(f"error: {args.responses}: no responses", file=sys.stderr)
        return 2

    result = score(answered, responses)
    write_results(result, args.out)
    print(report(result.accuracies))
    if missing:
        print(f"({len(missing)} prompts without a response were not scored)")
    print(f"wrote {args.out / STRICT_FILE} and {args.out / LOOSE_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
