"""Which per-arm estimator a (metric kind, CUPED) pair uses - the one place that decides.

The readout, the per-day series and the cumulative series must all use the same estimator,
or a daily chart would disagree with the headline number beside it.
"""

from __future__ import annotations

from typing import Literal

from experiments_app.stats.cuped import cuped_effect, cuped_ratio_effect
from experiments_app.stats.mean_effects import ArmEstimate, arm_mean
from experiments_app.stats.ratio_metrics import arm_ratio
from experiments_app.stats.samples import SampleStats

MetricKind = Literal["mean", "ratio"]


def arm_estimates(
    control: SampleStats,
    treatment: SampleStats,
    *,
    kind: MetricKind,
    cuped: bool,
    alpha: float = 0.05,
) -> tuple[ArmEstimate, ArmEstimate, str]:
    """(control, treatment, method name) for the chosen estimator.

    ``kind="mean"``: per-unit mean (randomization unit = UV). ``kind="ratio"``: cluster ratio
    estimator sum_y/sum_x (unit = room or room-day). ``cuped`` swaps in the adjusted arms.
    """
    if kind == "mean":
        if cuped:
            result = cuped_effect(control, treatment, alpha=alpha)
            return result.control, result.treatment, "cuped"
        return arm_mean(control), arm_mean(treatment), "welch"
    if kind == "ratio":
        if cuped:
            result = cuped_ratio_effect(control, treatment, alpha=alpha)
            return result.control, result.treatment, "cuped-ratio"
        return arm_ratio(control), arm_ratio(treatment), "ratio"
    raise ValueError(f"kind must be 'mean' or 'ratio', got {kind!r}")
