"""What a QA run page shows: the run's summary (score with interval, components, checks,
latency) and the paired comparison of two runs on the same items.

Input is the per-item results (``qa_runner.QAItemResult``, or the same read back with
``QAItemResult.from_dict``); the statistics are ``eval_stats``'. Scores are fractions in
[0, 1] here; ``BootstrapEstimate.scaled(100)`` gives percentage points.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from training_app.evals.eval_stats import (
    DEFAULT_B,
    DEFAULT_CONFIDENCE,
    BootstrapEstimate,
    McNemarResult,
    PairedDifference,
    bootstrap_mean,
    mcnemar_exact,
    paired_bootstrap,
)
from training_app.evals.qa_runner import QAItemResult
from training_app.evals.qa_scoring import COMPONENTS


@dataclass(frozen=True)
class QARunSummary:
    """``score``: the pass rate (resampling base items, so an item's variants move
    together); ``components``: the mean of each reward component; ``check_pass_rates``: per
    check, the share of items it was applied to that passed it (``judge`` only when a judge
    ran); ``failed_checks``: per required check, how many items failed it."""

    n: int
    passed: int
    score: BootstrapEstimate
    components: Mapping[str, BootstrapEstimate]
    check_pass_rates: Mapping[str, float]
    failed_checks: Mapping[str, int]
    infrastructure_errors: int
    latency_p50_s: float
    latency_p95_s: float
    prompt_tokens: int
    completion_tokens: int


def summarize_qa_results(
    results: Sequence[QAItemResult],
    *,
    b: int = DEFAULT_B,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> QARunSummary:
    clusters = [r.base_id for r in results]

    def estimate(values: list[float]) -> BootstrapEstimate:
        return bootstrap_mean(values, clusters=clusters, b=b, seed=seed, confidence=confidence)

    applied: dict[str, list[bool]] = {}
    failed: dict[str, int] = {}
    for result in results:
        for check in result.checks:
            applied.setdefault(check.name, []).append(check.passed)
            if check.required and not check.passed:
                failed[check.name] = failed.get(check.name, 0) + 1
    latencies = np.array([r.latency_s for r in results], dtype=float)
    return QARunSummary(
        n=len(results),
        passed=sum(r.passed for r in results),
        score=estimate([float(r.passed) for r in results]),
        components={
            name: estimate([float(getattr(r.scores, name)) for r in results]) for name in COMPONENTS
        },
        check_pass_rates={name: sum(v) / len(v) for name, v in applied.items()},
        failed_checks=failed,
        infrastructure_errors=sum(bool(r.infrastructure_error) for r in results),
        latency_p50_s=float(np.quantile(latencies, 0.5)) if len(latencies) else float("nan"),
        latency_p95_s=float(np.quantile(latencies, 0.95)) if len(latencies) else float("nan"),
        prompt_tokens=sum(r.prompt_tokens for r in results),
        completion_tokens=sum(r.completion_tokens for r in results),
    )


@dataclass(frozen=True)
class QARunComparison:
    """Run B against run A on the same items: the pass-rate difference (B - A) with a paired
    bootstrap interval and p-value, the exact McNemar test on pass/fail, and the paired
    difference of each component."""

    pass_rate: PairedDifference
    mcnemar: McNemarResult
    components: Mapping[str, PairedDifference]


def compare_qa_results(
    a: Sequence[QAItemResult],
    b: Sequence[QAItemResult],
    *,
    resamples: int = DEFAULT_B,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    allow_unmatched: bool = False,
) -> QARunComparison:
    """Raises ``eval_stats.PairingError`` when the runs scored different items, unless
    ``allow_unmatched`` (then the common items are compared)."""

    def by_item(results: Sequence[QAItemResult], value: str) -> dict[str, float]:
        if value == "passed":
            return {r.item_id: float(r.passed) for r in results}
        return {r.item_id: float(getattr(r.scores, value)) for r in results}

    def paired(value: str) -> PairedDifference:
        return paired_bootstrap(
            by_item(a, value),
            by_item(b, value),
            resamples=resamples,
            seed=seed,
            confidence=confidence,
            allow_unmatched=allow_unmatched,
        )

    return QARunComparison(
        pass_rate=paired("passed"),
        mcnemar=mcnemar_exact(
            {r.item_id: r.passed for r in a},
            {r.item_id: r.passed for r in b},
            allow_unmatched=allow_unmatched,
        ),
        components={name: paired(name) for name in COMPONENTS},
    )
