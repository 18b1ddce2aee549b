"""The port of BFCL's prompting messages against the messages bfcl-eval 2026.3.23 itself built
(scripts/bfcl_reference/reference_prompts.py) for 167 cases taken at an even stride from every
single-turn category, including cases whose question brings its own system message."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from harness_app.hsa.bfcl_data import CATEGORIES, load_category
from training_app.evals.bfcl.prompting import PYTHON_HINT, prompting_messages

RECORDED = Path(__file__).parent / "data" / "bfcl_reference_prompts.jsonl.gz"


def test_messages_equal_bfcls_own_for_every_recorded_case() -> None:
    cases = {str(c["id"]): c for category in CATEGORIES for c in load_category(category)[0]}
    with gzip.open(RECORDED, "rt", encoding="utf-8") as handle:
        recorded = [json.loads(line) for line in handle]
    assert len(recorded) == 167
    assert {r["id"].rsplit("_", 1)[0] for r in recorded} >= {"simple_python", "live_irrelevance"}
    own_system = 0
    for record in recorded:
        case = cases[record["id"]]
        own_system += case["question"][0][0]["role"] == "system"
        assert prompting_messages(case["question"][0], case["function"]) == record["messages"]
    assert own_system > 0


def test_the_hint_goes_on_a_copy() -> None:
    functions = [{"name": "f", "description": "Does f.", "parameters": {"properties": {}}}]
    messages = prompting_messages([{"role": "user", "content": "hi"}], functions)
    assert functions[0]["description"] == "Does f."
    assert "Does f." + PYTHON_HINT in messages[0]["content"]
    assert messages[0]["content"].startswith("You are an expert in composing functions.You are")
