"""The reference IFEval verdicts: run INSIDE the reference venv (make_venv.sh).

    var/ifeval-reference-venv/bin/python scripts/ifeval_reference/reference_verdicts.py \
        --responses var/ifeval-reference/responses.jsonl \
        --out tests/training_app/evals/data/ifeval_reference_verdicts.jsonl.gz

Scores every line of ``--responses`` (``{"case", "prompt", "response", ...}``; other fields
are copied through) with lm-eval 0.4.13's ``lm_eval.tasks.ifeval.utils``
``test_instruction_following_strict`` and ``test_instruction_following_loose``, unmodified,
against the prompts of ``--input-data`` (default: the project's shipped copy). This file
imports nothing of the project.

Only ``lm_eval/tasks/ifeval`` is imported: ``lm_eval.tasks`` is registered as a bare package
first, so its ``__init__`` (the task manager: datasets, evaluate, ...) never runs, and
``nltk.download`` is replaced by a function that fails, so the Punkt data must be the copy
make_venv.sh installed. langdetect is seeded (``DetectorFactory.seed = 0``, as langdetect
documents) so the language verdicts are reproducible.

Where the reference draws a random argument (a letter that is not a-z in
``keywords:letter_frequency``), the draw is detected by a recording stand-in for its
``random`` module, the instruction index is listed in the prompt's ``random_draw`` and the
verdicts are computed with ``random.seed(0)`` before each response (so the file is
reproducible, but those verdicts mean nothing).

Output: gzipped JSONL. ``{"kind": "meta", ...}``; one ``{"kind": "prompt", "key", "args",
"random_draw"}`` per prompt (``args``: the reference's ``get_instruction_args()`` per
instruction after building it from the prompt's kwargs); one ``{"kind": "verdict", "case",
"key", "response", "strict", "loose", ...}`` per response line.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.metadata
import json
import random
import sys
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_INPUT = ROOT / "training_app" / "evals" / "ifeval" / "data" / "input_data.jsonl"


def _no_download(*args: Any, **kwargs: Any) -> bool:
    raise RuntimeError(f"nltk.download{args} called: the punkt_tab data is not installed")


def import_reference() -> tuple[Any, Any, Any]:
    """(utils, instructions_registry, instructions) of lm_eval.tasks.ifeval."""
    import langdetect
    import lm_eval
    import nltk

    nltk.download = _no_download
    tasks = types.ModuleType("lm_eval.tasks")
    tasks.__path__ = [str(Path(lm_eval.__file__).parent / "tasks")]
    sys.modules["lm_eval.tasks"] = tasks
    langdetect.DetectorFactory.seed = 0
    from lm_eval.tasks.ifeval import instructions, instructions_registry, utils

    return utils, instructions_registry, instructions


class RecordingRandom:
    """Stands in for the ``random`` module inside the reference's instructions while their
    arguments are built: notes every draw, then draws from a seeded generator."""

    def __init__(self) -> None:
        self.draws = 0
        self._random = random.Random(0)

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._random, name)

        def draw(*args: Any, **kwargs: Any) -> Any:
            self.draws += 1
            return attribute(*args, **kwargs)

        return draw


def prompt_record(example: dict[str, Any], registry: Any, instructions: Any) -> dict[str, Any]:
    """The reference's arguments for each instruction of a prompt, built as its evaluation
    builds them, and which of them it draws at random."""
    from lm_eval.tasks.ifeval import instructions_util

    args: list[Any] = []
    random_draw: list[int] = []
    real_random = instructions.random
    try:
        for index, instruction_id in enumerate(example["instruction_id_list"]):
            recorder = RecordingRandom()
            instructions.random = recorder
            instructions_util.random = recorder
            instruction = registry.INSTRUCTION_DICT[instruction_id](instruction_id)
            kwargs = {k: v for k, v in example["kwargs"][index].items() if v}
            instruction.build_description(**kwargs)
            args.append(instruction.get_instruction_args())
            if recorder.draws:
                random_draw.append(index)
    finally:
        instructions.random = real_random
        instructions_util.random = real_random
    return {"kind": "prompt", "key": example["key"], "args": args, "random_draw": random_draw}


def self_check() -> int:
    _, registry, _ = import_reference()
    from lm_eval.tasks.ifeval import instructions_util

    assert instructions_util.count_sentences("Dr. Smith arrived. He sat down.") == 2
    assert len(registry.INSTRUCTION_DICT) == 25, len(registry.INSTRUCTION_DICT)
    checker = registry.INSTRUCTION_DICT["language:response_language"]("x")
    checker.build_description(language="de")
    german = "Das ist ein kurzer deutscher Satz über das Wetter in Berlin."
    assert all(checker.check_following(german) for _ in range(5))
    print("lm-eval", importlib.metadata.version("lm_eval"), "ifeval reference ready")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--input-data", type=Path, default=DEFAULT_INPUT)
    parser.add_argument("--responses", type=Path, help="{case, prompt, response} JSONL lines")
    parser.add_argument("--out", type=Path, help="verdicts, gzipped JSONL")
    parser.add_argument("--self-check", action="store_true", help="check the venv and exit")
    args = parser.parse_args(argv)
    if args.self_check:
        return self_check()
    if args.responses is None or args.out is None:
        parser.error("--responses and --out are required")

    utils, registry, instructions = import_reference()
    examples = [json.loads(line) for line in args.input_data.open(encoding="utf-8")]
    by_prompt = {example["prompt"]: example for example in examples}
    meta = {
        "kind": "meta",
        "reference": "lm_eval.tasks.ifeval.utils (lm-eval "
        + importlib.metadata.version("lm_eval")
        + ")",
        "nltk": importlib.metadata.version("nltk"),
        "langdetect": importlib.metadata.version("langdetect"),
        "langdetect_seed": 0,
        "input_data": args.input_data.name,
        "responses": args.responses.name,
    }
    lines = [meta]
    lines += [prompt_record(example, registry, instructions) for example in examples]
    counts = {"responses": 0, "instructions": 0, "strict_followed": 0, "loose_followed": 0}
    for line in args.responses.open(encoding="utf-8"):
        record = json.loads(line)
        example = by_prompt[record["prompt"]]
        inp = utils.InputExample(
            key=example["key"],
            instruction_id_list=example["instruction_id_list"],
            prompt=example["prompt"],
            kwargs=example["kwargs"],
        )
        random.seed(0)
        strict = utils.test_instruction_following_strict(inp, record["response"])
        random.seed(0)
        loose = utils.test_instruction_following_loose(inp, record["response"])
        extra = {k: v for k, v in record.items() if k not in ("prompt", "response", "case")}
        lines.append(
            {
                "kind": "verdict",
                "case": record["case"],
                "key": example["key"],
                "response": record["response"],
                "strict": strict.follow_instruction_list,
                "loose": loose.follow_instruction_list,
                **extra,
            }
        )
        counts["responses"] += 1
        counts["instructions"] += len(strict.follow_instruction_list)
        counts["strict_followed"] += sum(strict.follow_instruction_list)
        counts["loose_followed"] += sum(loose.follow_instruction_list)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(args.out, "wb", mtime=0) as out:
        for item in lines:
            out.write((json.dumps(item, ensure_ascii=False) + "\n").encode())
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
