"""The BFCL v4 single-turn categories, shipped with the project (Apache-2.0, see LICENSE and
README.md here; refreshed from the ``bfcl-eval`` wheel by ``refresh.py``).

``load_category(name)`` returns ``(cases, answers)``: the question records in file order and
the possible answers by case id (empty for the irrelevance categories, whose gold is "no
call").
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, Final

DATA_DIR: Final = Path(__file__).resolve().parent
CATEGORIES: Final[tuple[str, ...]] = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "irrelevance",
    "live_irrelevance",
)
# Categories whose correct answer is to call no function at all.
NO_CALL_CATEGORIES: Final = frozenset({"irrelevance", "live_irrelevance"})


def _read_lines(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_category(
    name: str, data_dir: Path = DATA_DIR
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    if name not in CATEGORIES:
        raise ValueError(f"unknown BFCL category {name!r}; categories: {', '.join(CATEGORIES)}")
    cases = _read_lines(data_dir / f"BFCL_v4_{name}.json.gz")
    answers: dict[str, dict[str, Any]] = {}
    if name not in NO_CALL_CATEGORIES:
        answers = {
            str(a["id"]): a
            for a in _read_lines(data_dir / "possible_answer" / f"BFCL_v4_{name}.json.gz")
        }
    return cases, answers
