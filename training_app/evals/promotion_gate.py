"""The promotion gate, pure part: may a trained checkpoint back an experiment arm?

Three conditions, each with a reason a person can act on:

- ``ifeval``: the checkpoint's IFEval prompt-level (strict) accuracy is not lower than its
  base model's by more than ``ifeval_margin_points`` at the paired bootstrap's lower bound
  (both runs on the same prompts, paired per prompt): training for the harness must not cost
  general instruction following;
- ``t1_t2_gap``: its pass rates on the two held-out Harness-Variant sets differ by at most
  ``t1_t2_gap_points`` (the report: 0.2 points for HAT, 4.9 for the base model): it survives
  edits from families it never saw, not just one of them;
- ``latency``: in a latency replay through the full reply path, the p95 at every measured
  concurrency is within the room's reply deadline.

Missing evidence is a failed condition that says which run to make. Nothing here imports
Django; ``experiments_app.selectors.promotion`` gathers the evidence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from training_app.evals.eval_stats import paired_bootstrap


@dataclass(frozen=True)
class PromotionThresholds:
    ifeval_margin_points: float = 2.0
    t1_t2_gap_points: float = 2.0
    confidence: float = 0.95
    resamples: int = 2000
    seed: int = 0


@dataclass(frozen=True)
class Condition:
    name: str
    passed: bool
    detail: str


def ifeval_condition(
    base: Mapping[str, bool] | None,
    trained: Mapping[str, bool] | None,
    thresholds: PromotionThresholds,
) -> Condition:
    """``base`` / ``trained``: prompt key -> followed every instruction (strict)."""
    if not trained:
        return Condition("ifeval", False, "no finished IFEval run of this checkpoint")
    if not base:
        return Condition(
            "ifeval", False, "no finished IFEval run of its base model on the same prompts"
        )
    common = sorted(set(base) & set(trained))
    if not common:
        return Condition("ifeval", False, "the two IFEval runs share no prompt")
    diff = paired_bootstrap(
        {k: float(base[k]) for k in common},
        {k: float(trained[k]) for k in common},
        resamples=thresholds.resamples,
        seed=thresholds.seed,
        confidence=thresholds.confidence,
    ).scaled(100.0)
    passed = diff.ci_low >= -thresholds.ifeval_margin_points
    detail = (
        f"prompt-level strict {diff.mean_b:.1f}% vs base {diff.mean_a:.1f}% on {diff.n} prompts: "
        f"{diff.estimate:+.1f} points, {100 * thresholds.confidence:.0f}% lower bound "
        f"{diff.ci_low:+.1f} ({'>=' if passed else '<'} -{thresholds.ifeval_margin_points:g})"
    )
    return Condition("ifeval", passed, detail)


def t1_t2_condition(
    t1_rate: float | None, t2_rate: float | None, thresholds: PromotionThresholds
) -> Condition:
    """Pass rates in points (0-100) on the T1 and T2 sets."""
    missing = [name for name, rate in (("T1", t1_rate), ("T2", t2_rate)) if rate is None]
    if missing:
        return Condition(
            "t1_t2_gap",
            False,
            f"no finished Harness-Variant {' and '.join(missing)} run of this checkpoint",
        )
    assert t1_rate is not None and t2_rate is not None
    gap = abs(t1_rate - t2_rate)
    passed = gap <= thresholds.t1_t2_gap_points
    detail = (
        f"T1 {t1_rate:.1f}% vs T2 {t2_rate:.1f}%: gap {gap:.1f} points "
        f"({'<=' if passed else '>'} {thresholds.t1_t2_gap_points:g})"
    )
    return Condition("t1_t2_gap", passed, detail)


def latency_condition(
    room: str, levels: Sequence[Mapping[str, Any]] | None, deadline_ms: int
) -> Condition:
    """``levels``: a latency report's results (``{concurrency, p95_ms, ...}`` per level)."""
    if not levels:
        return Condition(
            "latency", False, f"no latency replay of this endpoint in room {room!r} yet"
        )
    slow = [
        lvl
        for lvl in levels
        if lvl.get("p95_ms") is None
        or not math.isfinite(float(lvl["p95_ms"]))
        or float(lvl["p95_ms"]) > deadline_ms
    ]
    worst = max(float(lvl.get("p95_ms") or math.inf) for lvl in levels)
    if slow:
        at = ", ".join(f"concurrency {lvl.get('concurrency')}" for lvl in slow)
        return Condition(
            "latency",
            False,
            f"room {room!r}: p95 over the {deadline_ms} ms reply deadline at {at} "
            f"(worst {worst:.0f} ms)",
        )
    return Condition(
        "latency",
        True,
        f"room {room!r}: p95 at most {worst:.0f} ms at every concurrency "
        f"(deadline {deadline_ms} ms)",
    )
