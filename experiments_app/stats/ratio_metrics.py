"""Per-UV metrics when the randomization unit is a cluster (a room, or a room-day).

Why: a host's reply is broadcast to the whole room, so the experiment randomizes rooms or
room-days, and the UVs inside one unit share the treatment *and* the room's audience. Treating
those UVs as independent draws (a per-UV Welch test) understates the variance, often badly.
The estimand is still "GMV per UV", estimated by the ratio of arm totals

    R = sum_i y_i / sum_i x_i        (y = a unit's GMV, x = its UVs)

whose variance, by the delta method on the cluster-level means (i = randomization units),
is

    Var(R) ~ (var_y - 2 R cov_xy + R**2 var_x) / (n * mean_x**2),

with ddof=1 sample moments over the n units. That is the sandwich (HC1) variance of the
weighted mean of y_i/x_i with weights x_i, i.e. of a cluster-robust analysis of the UV-level
data. At room-day randomization, x counts the UVs active that day, so R is per daily UV.
At UV randomization x = 1 and R reduces to the plain mean with variance s**2/n.
"""

from __future__ import annotations

import math

from experiments_app.stats.mean_effects import (
    ArmEstimate,
    Effect,
    absolute_lift,
    relative_lift,
)
from experiments_app.stats.samples import SampleStats


def arm_ratio(stats: SampleStats) -> ArmEstimate:
    """R = sum_y/sum_x with its delta-method variance (NaN when n < 2 or sum_x == 0)."""
    sum_x = stats.sum_x
    if sum_x is None:
        raise ValueError("a ratio metric needs sum_x, sum_x2 and sum_xy (x = UVs per unit)")
    if stats.n < 2 or sum_x <= 0.0:
        return ArmEstimate(math.nan, math.nan, stats.n)
    ratio = stats.sum_y / sum_x
    mean_x = sum_x / stats.n
    linearized_var = stats.var_y - 2.0 * ratio * stats.cov_xy + ratio * ratio * stats.var_x
    # Rounding can push a near-zero variance just below 0 (e.g. y proportional to x).
    variance = max(linearized_var, 0.0) / (stats.n * mean_x * mean_x)
    return ArmEstimate(ratio, variance, stats.n)


def ratio_unit_variance(stats: SampleStats) -> float:
    """Per-unit variance of the linearized ratio, n * Var(R) (what power calculations need)."""
    arm = arm_ratio(stats)
    return arm.variance * arm.n


def ratio_absolute_lift(
    control: SampleStats, treatment: SampleStats, *, alpha: float = 0.05
) -> Effect:
    """R_t - R_c with the delta-method SE and Welch df over randomization units."""
    return absolute_lift(arm_ratio(control), arm_ratio(treatment), alpha=alpha, method="ratio")


def ratio_relative_lift(
    control: SampleStats, treatment: SampleStats, *, alpha: float = 0.05
) -> Effect:
    """R_t/R_c - 1: delta method again on two independent ratio estimators."""
    return relative_lift(
        arm_ratio(control), arm_ratio(treatment), alpha=alpha, method="ratio-delta"
    )
