"""The report's comparison table from per-run summaries (pure: the Django layer feeds rows).

Rows are models (Base, Fixed-Harness SFT, HAT, a reference model, ...); columns, in order:

| column key | heading | value |
|---|---|---|
| ``live_stream_qa`` | Live-Stream QA | pass rate on the Live-Stream QA set |
| ``harness_variant_qa`` | Harness-Variant QA | pass rate pooled over T1 and T2 items |
| ``harness_variant_t1`` | HV T1 | pass rate on T1 |
| ``harness_variant_t2`` | HV T2 | pass rate on T2 |
| ``t1_t2_gap`` | T1/T2 gap | \\|T1 - T2\\| (interval and p-value of T1 - T2, paired by base item) |
| ``ifeval_prompt`` | IFEval prompt-level | prompt-level accuracy (strict, unless fed loose) |
| ``bfcl`` | BFCL | function-call accuracy |
| ``bfcl_heldout`` | BFCL held-out schemas | the same on a held-out-augmented BFCL set |

Every cell is in percentage points with a percentile bootstrap interval (``eval_stats``),
computed from the run's per-item scores in [0, 1] (a Harness-Variant item's pooled and gap
values resample whole base items). A run may instead bring a precomputed ``cell`` (e.g. a
BFCL overall score its scorer defines); then that cell is shown as given. A model with no
run for a column gets an empty cell; the pooled Harness-Variant cell and the gap need both a
T1 and a T2 run.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, get_args

from training_app.evals.eval_stats import (
    DEFAULT_B,
    DEFAULT_CONFIDENCE,
    bootstrap_mean,
    variant_gap,
)

Benchmark = Literal[
    "live_stream_qa",
    "harness_variant_t1",
    "harness_variant_t2",
    "ifeval_prompt",
    "bfcl",
    "bfcl_heldout",
]
BENCHMARKS: Final[tuple[str, ...]] = get_args(Benchmark)
COLUMNS: Final[tuple[tuple[str, str], ...]] = (
    ("live_stream_qa", "Live-Stream QA"),
    ("harness_variant_qa", "Harness-Variant QA"),
    ("harness_variant_t1", "HV T1"),
    ("harness_variant_t2", "HV T2"),
    ("t1_t2_gap", "T1/T2 gap"),
    ("ifeval_prompt", "IFEval prompt-level"),
    ("bfcl", "BFCL"),
    ("bfcl_heldout", "BFCL held-out schemas"),
)
# The report's rows, in its order (other models follow in the order their runs came).
REPORT_ROWS: Final[tuple[str, ...]] = ("Base", "Fixed-Harness SFT", "HAT")


class ScoreTableError(ValueError):
    """Runs that cannot form one table (e.g. two runs for one model and benchmark)."""


@dataclass(frozen=True)
class ScoreCell:
    """A score in percentage points with its interval; ``p_value`` only for the gap."""

    estimate: float
    ci_low: float
    ci_high: float
    n: int
    p_value: float | None = None

    def display(self, digits: int = 1) -> str:
        if not math.isfinite(self.estimate):
            return "n/a"
        if not (math.isfinite(self.ci_low) and math.isfinite(self.ci_high)):
            return f"{self.estimate:.{digits}f}"
        return f"{self.estimate:.{digits}f} [{self.ci_low:.{digits}f}, {self.ci_high:.{digits}f}]"


@dataclass(frozen=True)
class RunSummary:
    """One finished run, as the table needs it.

    ``model``: the row label; ``benchmark``: one of ``BENCHMARKS``; ``item_scores``: item id
    -> score in [0, 1] (1/0 for passed/failed); ``base_ids``: item id -> base item id for
    Harness-Variant runs (pairs T1 with T2 and clusters an item's variants); ``cell``: a
    precomputed cell in percentage points, used instead of ``item_scores``; ``run_id``: the
    caller's reference, carried into errors.
    """

    model: str
    benchmark: Benchmark
    item_scores: Mapping[str, float] = field(default_factory=dict)
    base_ids: Mapping[str, str] = field(default_factory=dict)
    cell: ScoreCell | None = None
    run_id: str = ""

    def __post_init__(self) -> None:
        if self.benchmark not in BENCHMARKS:
            raise ScoreTableError(
                f"run {self.run_id or self.model}: benchmark must be one of "
                f"{', '.join(BENCHMARKS)}, got {self.benchmark!r}"
            )
        if self.cell is None and not self.item_scores:
            raise ScoreTableError(
                f"run {self.run_id or self.model} ({self.benchmark}): give item_scores or a cell"
            )
        bad = [k for k, v in self.item_scores.items() if not 0.0 <= float(v) <= 1.0]
        if bad:
            raise ScoreTableError(
                f"run {self.run_id or self.model}: item scores must be in [0, 1] "
                f"({', '.join(bad[:3])})"
            )


@dataclass(frozen=True)
class ScoreRow:
    model: str
    cells: Mapping[str, ScoreCell | None]


@dataclass(frozen=True)
class ScoreTable:
    rows: tuple[ScoreRow, ...]
    confidence: float
    b: int
    seed: int

    @property
    def columns(self) -> tuple[tuple[str, str], ...]:
        return COLUMNS

    def row(self, model: str) -> ScoreRow:
        for row in self.rows:
            if row.model == model:
                return row
        raise KeyError(f"no row for model {model!r}")

    def to_csv(self) -> str:
        """One line per model: for every column its estimate, interval bounds and n (and the
        gap's p-value), in percentage points with 2 decimals; empty where there is no run."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        heading = ["model"]
        for key, _title in COLUMNS:
            heading += [key, f"{key}_ci_low", f"{key}_ci_high", f"{key}_n"]
            if key == "t1_t2_gap":
                heading.append(f"{key}_p_value")
        writer.writerow(heading)
        for row in self.rows:
            line: list[str] = [row.model]
            for key, _title in COLUMNS:
                cell = row.cells.get(key)
                if cell is None:
                    line += ["", "", "", ""]
                else:
                    line += [
                        _num(cell.estimate),
                        _num(cell.ci_low),
                        _num(cell.ci_high),
                        str(cell.n),
                    ]
                if key == "t1_t2_gap":
                    line.append(
                        "" if cell is None or cell.p_value is None else f"{cell.p_value:.4f}"
                    )
            writer.writerow(line)
        return out.getvalue()

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON and charts."""
        return {
            "columns": [{"key": k, "title": t} for k, t in COLUMNS],
            "confidence": self.confidence,
            "b": self.b,
            "seed": self.seed,
            "rows": [
                {
                    "model": row.model,
                    "cells": {
                        key: None
                        if cell is None
                        else {
                            "estimate": cell.estimate,
                            "ci_low": cell.ci_low,
                            "ci_high": cell.ci_high,
                            "n": cell.n,
                            "p_value": cell.p_value,
                        }
                        for key, cell in row.cells.items()
                    },
                }
                for row in self.rows
            ],
        }


def _num(value: float) -> str:
    return f"{value:.2f}" if math.isfinite(value) else ""


def _cell(run: RunSummary, *, b: int, seed: int, confidence: float) -> ScoreCell:
    if run.cell is not None:
        return run.cell
    keys = list(run.item_scores)
    clusters = [run.base_ids.get(k, k) for k in keys] if run.base_ids else None
    estimate = bootstrap_mean(
        [float(run.item_scores[k]) for k in keys],
        clusters=clusters,
        b=b,
        seed=seed,
        confidence=confidence,
    ).scaled(100)
    return ScoreCell(estimate.estimate, estimate.ci_low, estimate.ci_high, estimate.n)


def _pooled(
    t1: RunSummary, t2: RunSummary, *, b: int, seed: int, confidence: float
) -> ScoreCell | None:
    if not t1.item_scores or not t2.item_scores:
        return None
    values: list[float] = []
    clusters: list[str] = []
    for run in (t1, t2):
        for key, value in run.item_scores.items():
            values.append(float(value))
            clusters.append(run.base_ids.get(key, key))
    estimate = bootstrap_mean(
        values, clusters=clusters, b=b, seed=seed, confidence=confidence
    ).scaled(100)
    return ScoreCell(estimate.estimate, estimate.ci_low, estimate.ci_high, estimate.n)


def _gap(
    t1: RunSummary, t2: RunSummary, *, b: int, seed: int, confidence: float
) -> ScoreCell | None:
    if t1.item_scores and t2.item_scores:
        gap = variant_gap(
            t1.item_scores,
            t2.item_scores,
            t1_base_ids=t1.base_ids,
            t2_base_ids=t2.base_ids,
            resamples=b,
            seed=seed,
            confidence=confidence,
        ).scaled(100)
        return ScoreCell(abs(gap.estimate), gap.ci_low, gap.ci_high, gap.n, gap.p_value)
    if t1.cell is not None and t2.cell is not None:
        nan = math.nan
        return ScoreCell(
            abs(t1.cell.estimate - t2.cell.estimate), nan, nan, min(t1.cell.n, t2.cell.n)
        )
    return None


def build_score_table(
    runs: Sequence[RunSummary],
    *,
    models: Sequence[str] | None = None,
    b: int = DEFAULT_B,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> ScoreTable:
    """The table of ``runs`` (at most one per model and benchmark). Row order: ``models``
    when given (a model with no runs gets an empty row), else the report's rows first, then
    the other models in the order their runs appear.

    The gap cell's estimate is \\|T1 - T2\\|; its interval and p-value are those of the signed
    difference T1 - T2 (an interval for an absolute value would be biased away from 0).
    """
    by_model: dict[str, dict[str, RunSummary]] = {}
    for run in runs:
        known = by_model.setdefault(run.model, {})
        if run.benchmark in known:
            first = known[run.benchmark].run_id or "an earlier run"
            raise ScoreTableError(
                f"model {run.model!r} has two {run.benchmark} runs ({first} and "
                f"{run.run_id or 'another'}); pick one per model and benchmark"
            )
        known[run.benchmark] = run
    if models is not None:
        order = list(dict.fromkeys(models))
    else:
        order = [m for m in REPORT_ROWS if m in by_model]
        order += [m for m in by_model if m not in order]
    rows = []
    for model in order:
        model_runs = by_model.get(model, {})
        cells: dict[str, ScoreCell | None] = {key: None for key, _title in COLUMNS}
        for benchmark, run in model_runs.items():
            cells[benchmark] = _cell(run, b=b, seed=seed, confidence=confidence)
        t1 = model_runs.get("harness_variant_t1")
        t2 = model_runs.get("harness_variant_t2")
        if t1 is not None and t2 is not None:
            cells["harness_variant_qa"] = _pooled(t1, t2, b=b, seed=seed, confidence=confidence)
            cells["t1_t2_gap"] = _gap(t1, t2, b=b, seed=seed, confidence=confidence)
        rows.append(ScoreRow(model, cells))
    return ScoreTable(tuple(rows), confidence, b, seed)
