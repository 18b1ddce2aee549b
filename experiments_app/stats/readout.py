"""One metric's full readout from rollup sufficient statistics, plus the SRM check.

This is the entry point the Django readout page calls. It takes only :class:`SampleStats`
(never raw rows), so it costs microseconds to milliseconds whatever the traffic; everything
scales with the number of days, not of units.

What ``kind`` to use (see docs/STATISTICS.md for the full table):

* randomization unit = UV, metric per UV  -> ``kind="mean"`` (Welch on per-UV values);
* unit = room or room-day, metric per UV  -> ``kind="ratio"`` (cluster ratio estimator,
  delta-method variance; x = UVs in the unit).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from experiments_app.stats.cuped import CupedResult, cuped_effect, cuped_ratio_effect
from experiments_app.stats.daily import ArmPair, DailyAnalysis, daily_analysis
from experiments_app.stats.estimators import MetricKind, arm_estimates
from experiments_app.stats.mean_effects import (
    ArmEstimate,
    Effect,
    absolute_lift,
    fieller_relative_lift,
    relative_lift,
)
from experiments_app.stats.multiple_testing import Correction, adjust_p_values
from experiments_app.stats.power import MdeResult, minimum_detectable_effect
from experiments_app.stats.samples import SampleStats
from experiments_app.stats.sequential import SequentialResult, sequential_effect
from experiments_app.stats.srm import SRM_THRESHOLD, SrmResult, srm_test


@dataclass(frozen=True, slots=True)
class MetricReadout:
    """Unadjusted effects always; CUPED, sequential and daily parts when requested.

    ``headline_*`` is what the page leads with: the CUPED effect when CUPED ran (it has the
    narrower interval for the same estimand), else the unadjusted one. ``sequential`` and the
    cumulative CS band use the headline estimator.
    """

    kind: MetricKind
    alpha: float
    absolute: Effect
    relative: Effect
    relative_fieller: Effect
    cuped: CupedResult | None
    sequential: SequentialResult | None
    daily: DailyAnalysis | None
    mde: MdeResult | None

    @property
    def headline_absolute(self) -> Effect:
        return self.cuped.absolute if self.cuped is not None else self.absolute

    @property
    def headline_relative(self) -> Effect:
        return self.cuped.relative if self.cuped is not None else self.relative


def _pooled_unit_variance(control: ArmEstimate, treatment: ArmEstimate) -> float:
    """Within-arm pooled per-unit variance of the estimator's influence term."""
    if control.n < 2 or treatment.n < 2:
        return math.nan
    unit_c, unit_t = control.variance * control.n, treatment.variance * treatment.n
    return ((control.n - 1) * unit_c + (treatment.n - 1) * unit_t) / (control.n + treatment.n - 2)


def metric_readout(
    control: SampleStats,
    treatment: SampleStats,
    *,
    kind: MetricKind = "mean",
    cuped: bool = False,
    sequential: bool = False,
    alpha: float = 0.05,
    planned_units: int | None = None,
    daily: Sequence[ArmPair] | None = None,
    cumulative: Sequence[ArmPair] | None = None,
    power: float = 0.8,
    cumulative_cs_units: int | None = None,
) -> MetricReadout:
    """Effects, intervals, p-values (and optionally CUPED, CS, daily series, MDE) for a metric.

    ``planned_units`` (total randomization units the experiment is planned to reach) is
    required with ``sequential=True``: the CS tuning must be fixed before looking at data.
    ``daily``: per-day (control, treatment) stats of that day's units; ``cumulative``:
    stats of all units up to each day (see :mod:`experiments_app.stats.daily`). The
    cumulative series always carries the always-valid CS when it can be tuned: to
    ``planned_units`` with ``sequential=True``, else to ``cumulative_cs_units`` (the readout
    passes the units so far: a CS for the chart, whose tuning depends on the sample size
    only, never on outcomes). With ``sequential=True`` and a cumulative series, the headline
    CS is the series' last point: running-minimum p-value, running-intersection interval.
    """
    if sequential and planned_units is None:
        raise ValueError("sequential=True needs planned_units (total units planned, both arms)")
    if cuped and not (control.has_covariate and treatment.has_covariate):
        raise ValueError("cuped=True needs the pre-period covariate sums (sum_c, sum_c2, sum_yc)")

    plain_c, plain_t, method = arm_estimates(control, treatment, kind=kind, cuped=False)
    absolute = absolute_lift(plain_c, plain_t, alpha=alpha, method=method)
    relative = relative_lift(plain_c, plain_t, alpha=alpha, method=f"{method}-delta")
    fieller = fieller_relative_lift(plain_c, plain_t, alpha=alpha)

    cuped_result: CupedResult | None = None
    head_c, head_t = plain_c, plain_t
    if cuped:
        effect = cuped_effect if kind == "mean" else cuped_ratio_effect
        cuped_result = effect(control, treatment, alpha=alpha)
        head_c, head_t = cuped_result.control, cuped_result.treatment

    seq = (
        sequential_effect(head_c, head_t, planned_units=planned_units, alpha=alpha)
        if sequential and planned_units is not None
        else None
    )

    daily_result = None
    if daily is not None or cumulative is not None:
        daily_result = daily_analysis(
            daily or (),
            cumulative,
            kind=kind,
            cuped=cuped,
            alpha=alpha,
            planned_units=planned_units if sequential else cumulative_cs_units,
        )
        last = daily_result.cumulative[-1].sequential if daily_result.cumulative else None
        if seq is not None and last is not None:
            seq = last

    variance = _pooled_unit_variance(head_c, head_t)
    mde = (
        minimum_detectable_effect(
            variance=variance,
            n_control=head_c.n,
            n_treatment=head_t.n,
            alpha=alpha,
            power=power,
            baseline_mean=plain_c.estimate,
        )
        if variance > 0 and math.isfinite(variance)
        else None
    )
    return MetricReadout(
        kind=kind,
        alpha=alpha,
        absolute=absolute,
        relative=relative,
        relative_fieller=fieller,
        cuped=cuped_result,
        sequential=seq,
        daily=daily_result,
        mde=mde,
    )


def srm_check(
    observed: Mapping[str, int],
    weights: Mapping[str, float],
    *,
    threshold: float = SRM_THRESHOLD,
) -> SrmResult:
    """SRM banner input: unit counts per arm vs configured weights (flag at p < 0.001)."""
    return srm_test(observed, weights, threshold=threshold)


def adjusted_p_values(
    readouts: Mapping[str, MetricReadout], *, method: Correction = "holm"
) -> dict[str, float]:
    """Holm / BH across metrics on the headline relative effects; undefined ones stay NaN."""
    names = [n for n, r in readouts.items() if math.isfinite(r.headline_relative.p_value)]
    adjusted = adjust_p_values([readouts[n].headline_relative.p_value for n in names], method)
    out = {name: math.nan for name in readouts}
    out.update({n: float(p) for n, p in zip(names, adjusted, strict=True)})
    return out
