"""How many recorded reference verdicts a different Punkt model would change (project venv).

    .venv/bin/python scripts/ifeval_reference/punkt_alternatives.py

Scores every recorded response of tests/training_app/evals/data/ifeval_reference_verdicts
.jsonl.gz with the project's scorer twice: with the Punkt model shipped in the package, and
with NLTK's Punkt *without data* (``PunktSentenceTokenizer()``: no learned abbreviations,
collocations or sentence starters), the replacement left if the shipped model had to go. It
prints, per source of responses, how many instruction verdicts (strict and loose) differ from
the reference's. Sentence counting (length_constraints:number_sentences) and word tokens
(change_case:capital_word_frequency) are the only checks that read Punkt.
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from nltk.tokenize.punkt import PunktSentenceTokenizer  # noqa: E402

from training_app.evals.ifeval import clear_caches, load_prompts, score_response, text  # noqa: E402

VERDICTS = ROOT / "tests" / "training_app" / "evals" / "data" / "ifeval_reference_verdicts.jsonl.gz"


def differences(records: list[dict], random_draw: dict[int, list[int]]) -> tuple[Counter, Counter]:
    prompts = {p.key: p for p in load_prompts()}
    differ: Counter = Counter()
    total: Counter = Counter()
    for record in records:
        strict, loose = score_response(prompts[record["key"]], record["response"])
        source = "hand" if record["source"] == "hand" else "gpt4 (+ edits)"
        for index in range(len(record["strict"])):
            if index in random_draw[record["key"]]:
                continue
            for mode, mine, ref in (
                ("strict", strict.follow_instruction_list[index], record["strict"][index]),
                ("loose", loose.follow_instruction_list[index], record["loose"][index]),
            ):
                total[source, mode] += 1
                differ[source, mode] += mine != ref
    return differ, total


def main() -> int:
    with gzip.open(VERDICTS, "rt", encoding="utf-8") as handle:
        lines = [json.loads(line) for line in handle]
    records = [line for line in lines if line["kind"] == "verdict"]
    random_draw = {line["key"]: line["random_draw"] for line in lines if line["kind"] == "prompt"}
    shipped, total = differences(records, random_draw)
    original = text.sentence_tokenizer
    text.sentence_tokenizer.cache_clear()
    text.sentence_tokenizer = lambda: _NO_DATA  # type: ignore[assignment]
    clear_caches()
    try:
        no_data, _ = differences(records, random_draw)
    finally:
        text.sentence_tokenizer = original
        clear_caches()
    for (source, mode), count in sorted(total.items()):
        print(
            f"{source:<15} {mode:<6} {count:>5} verdicts   differ with shipped model "
            f"{shipped[source, mode]:>3}   with data-free Punkt {no_data[source, mode]:>3}"
        )
    return 0


_NO_DATA = PunktSentenceTokenizer()

if __name__ == "__main__":
    sys.exit(main())
