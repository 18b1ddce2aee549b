"""The cases a BFCL result is scored against: the shipped BFCL v4 data, or an HSA-augmented
set written by ``python -m harness_app.hsa.bfcl_augment`` (one JSON record per line:
``id``, ``category``, ``function``, ``ground_truth``, ``valid``, ``problems``, ...; a record
the augmentation refused has ``valid: false`` and no functions, and cannot be scored)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from harness_app.harness.json_limits import JsonLimitError, json_loads_bounded
from harness_app.hsa.bfcl_data import CATEGORIES, NO_CALL_CATEGORIES, load_category

# A JSON line longer than this is refused (a BFCL case or result is a few kilobytes).
MAX_LINE_BYTES: Final = 1 << 20
MAX_JSON_DEPTH: Final = 64
# At most this many input problems are listed before giving up.
MAX_REPORTED_PROBLEMS: Final = 20


class BfclInputError(ValueError):
    """Input that cannot be scored; ``problems`` name the file, line and field of each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class BfclCase:
    """What scoring needs of one case: its functions and its possible answer (``[]`` for
    the irrelevance categories)."""

    id: str
    category: str
    functions: list[dict[str, Any]]
    ground_truth: list[dict[str, Any]]


@dataclass
class CaseSet:
    """The scorable cases of one category by id, and the ids of records the augmentation
    refused (named as such when a result refers to one)."""

    category: str
    cases: dict[str, BfclCase]
    refused: dict[str, str] = field(default_factory=dict)
    source: str = "the shipped BFCL v4 data"


def load_cases(category: str) -> CaseSet:
    """Every case of ``category`` from the shipped BFCL v4 data."""
    cases, answers = load_category(category)
    loaded = {}
    for case in cases:
        case_id = str(case["id"])
        truth = answers[case_id]["ground_truth"] if category not in NO_CALL_CATEGORIES else []
        loaded[case_id] = BfclCase(case_id, category, case["function"], truth)
    return CaseSet(category, loaded)


def json_lines(path: Path, what: str, problems: list[str]) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for every non-blank line. A line too long, not JSON or
    nested too deeply ends the reading, its problem (naming the line) added to ``problems``:
    nothing after it can be trusted to be where it should be."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        problems.append(f"{what} {path}: cannot be read ({exc.strerror})")
        return
    with handle:
        for number, raw in enumerate(handle, start=1):
            where = f"{what} {path} line {number}"
            if len(raw) > MAX_LINE_BYTES:
                problems.append(
                    f"{where}: {len(raw):,} bytes; a line may hold at most {MAX_LINE_BYTES:,}"
                )
                return
            if not raw.strip():
                continue
            try:
                value = json_loads_bounded(raw, max_depth=MAX_JSON_DEPTH, refuse_nul=False)
            except JsonLimitError as exc:
                place = f"field '{exc.path}'" if exc.path else "the line"
                problems.append(f"{where}: {place} is {exc.message}")
                return
            except UnicodeDecodeError as exc:
                problems.append(f"{where}: not UTF-8 ({exc.reason})")
                return
            except json.JSONDecodeError as exc:
                problems.append(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})")
                return
            yield number, value


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), "a number" if isinstance(value, int | float) else "null"
    )


def _record_problems(record: Mapping[str, Any], category: str) -> list[str]:
    """What keeps a record of ``category`` marked valid from being scored."""
    problems = []
    functions = record.get("function")
    if not isinstance(functions, list) or not all(
        isinstance(f, dict) and isinstance(f.get("name"), str) for f in functions
    ):
        problems.append("field 'function' must be an array of function docs, each with a 'name'")
    truth = record.get("ground_truth")
    if not isinstance(truth, list) or not all(
        isinstance(call, dict) and len(call) == 1 and isinstance(next(iter(call.values())), dict)
        for call in truth
    ):
        problems.append(
            "field 'ground_truth' must be an array of {function_name: {parameter: [values]}}"
        )
    elif category not in NO_CALL_CATEGORIES and not truth:
        problems.append(f"field 'ground_truth' is empty, but a {category} case wants a call")
    return problems


def load_augmented_cases(path: Path, category: str) -> CaseSet:
    """The records of ``category`` in an augmented set; records of other categories are
    skipped. ``BfclInputError`` names every malformed line and field."""
    problems: list[str] = []
    cases: dict[str, BfclCase] = {}
    refused: dict[str, str] = {}
    first_line: dict[str, int] = {}
    categories_seen: set[str] = set()
    for number, record in json_lines(path, "augmented set", problems):
        where = f"augmented set {path} line {number}"
        if len(problems) >= MAX_REPORTED_PROBLEMS:
            break
        if not isinstance(record, dict):
            problems.append(f"{where}: expected a JSON object, got {_type_name(record)}")
            continue
        record_id, record_category = record.get("id"), record.get("category")
        if not isinstance(record_id, str) or not record_id:
            problems.append(f"{where}: field 'id' must be a non-empty string")
            continue
        if record_category not in CATEGORIES:
            problems.append(
                f"{where}: field 'category' is {record_category!r}; one of "
                f"{', '.join(CATEGORIES)} is expected"
            )
            continue
        categories_seen.add(record_category)
        if record_category != category:
            continue
        if record_id in first_line:
            problems.append(
                f"{where}: field 'id': duplicate id {record_id!r} (first on line "
                f"{first_line[record_id]})"
            )
            continue
        first_line[record_id] = number
        valid = record.get("valid")
        if not isinstance(valid, bool):
            problems.append(f"{where}: field 'valid' must be true or false")
            continue
        if not valid:
            reasons = record.get("problems")
            refused[record_id] = "; ".join(map(str, reasons)) if isinstance(reasons, list) else ""
            continue
        found = _record_problems(record, category)
        if found:
            problems += [f"{where}: {p}" for p in found]
            continue
        cases[record_id] = BfclCase(record_id, category, record["function"], record["ground_truth"])
    if problems:
        raise BfclInputError(problems)
    if not cases and not refused:
        present = ", ".join(sorted(categories_seen)) or "none"
        raise BfclInputError(
            [f"augmented set {path}: no record of category {category} (categories: {present})"]
        )
    return CaseSet(category, cases, refused, source=f"the augmented set {path}")
