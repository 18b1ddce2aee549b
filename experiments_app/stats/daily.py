"""Per-day effects, a heterogeneity test across days, and the cumulative lift over time.

Why: the report being improved on showed single significant days. A day's effect on its own
is one of 14 noisy looks; what matters is (a) whether the days disagree more than noise
allows - Cochran's Q - and (b) how the cumulative estimate and its interval settle.

* Per day: the day's units (UV-days, room-days) analysed with the same estimator as the
  headline; day p-values also get a Holm adjustment across days. Relative effects (per day
  and cumulative) are on the log-ratio scale: log(m_t/m_c) with the delta-method SE
  sqrt(v_t/m_t**2 + v_c/m_c**2), exponentiated - the interval never reaches below -100%, and
  a day whose arm mean is not positive (no buyer in an arm) is undefined rather than a
  "-100%" with a near-zero SE (the delta method's SE collapses with the mean: on the demo
  that made one day's Holm p 3e-60 and an inverse-variance pool of the days -91%).
* Cochran's Q (Cochran 1954): with day estimates e_d and standard errors s_d, weights
  w_d = 1/s_d**2, pooled e = sum w_d e_d / sum w_d, Q = sum w_d (e_d - e)**2 ~ chi2(D - 1)
  under homogeneity; I**2 = max(0, (Q - df)/Q) (Higgins & Thompson 2002) is the share of the
  spread beyond noise. Default scale is the relative lift (its log ratio), because
  day-of-week seasonality moves absolute GMV per UV while a multiplicative effect stays
  constant. The pooled estimate serves Q only: the overall effect is the headline (all
  units at once), which the charts draw instead. Caveat: with UV
  randomization a returning UV appears on several days, so day estimates are positively
  correlated and Q is conservative.
* Cumulative: stats of every unit seen up to day d. For UV or room units these must come from
  per-unit running totals (a UV's GMV so far), not from summing per-day stats; only when the
  units are disjoint across days (room-day randomization) is the running merge valid -
  :func:`running_totals` does that.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from scipy import special

from experiments_app.stats.estimators import MetricKind, arm_estimates
from experiments_app.stats.mean_effects import ArmEstimate, Effect, absolute_lift, relative_lift
from experiments_app.stats.multiple_testing import holm
from experiments_app.stats.samples import SampleStats
from experiments_app.stats.sequential import (
    SequentialResult,
    running_sequence,
    sequential_effect,
)

ArmPair = tuple[SampleStats, SampleStats]  # (control, treatment)


@dataclass(frozen=True, slots=True)
class DayEffect:
    day: int
    absolute: Effect
    relative: Effect
    p_holm: float  # the day's p-value (on the heterogeneity scale) adjusted across days


@dataclass(frozen=True, slots=True)
class Heterogeneity:
    scale: Literal["absolute", "relative"]
    pooled_estimate: float
    pooled_std_error: float
    q: float
    df: int
    p_value: float
    i_squared: float


@dataclass(frozen=True, slots=True)
class CumulativePoint:
    day: int
    absolute: Effect
    relative: Effect
    sequential: SequentialResult | None


@dataclass(frozen=True, slots=True)
class DailyAnalysis:
    days: tuple[DayEffect, ...]
    heterogeneity: Heterogeneity
    cumulative: tuple[CumulativePoint, ...]


def cochran_q(
    estimates: Sequence[float], std_errors: Sequence[float], *, scale: str = "relative"
) -> Heterogeneity:
    """Cochran's Q and I**2 over independent estimates (undefined or zero-SE ones dropped)."""
    e = np.asarray(estimates, dtype=np.float64)
    s = np.asarray(std_errors, dtype=np.float64)
    keep = np.isfinite(e) & np.isfinite(s) & (s > 0)
    e, s = e[keep], s[keep]
    scale_name: Literal["absolute", "relative"] = "absolute" if scale == "absolute" else "relative"
    if e.size < 2:
        nan = math.nan
        return Heterogeneity(scale_name, nan, nan, nan, 0, nan, nan)
    w = 1.0 / (s * s)
    pooled = float(np.sum(w * e) / np.sum(w))
    q = float(np.sum(w * (e - pooled) ** 2))
    df = int(e.size - 1)
    i_squared = max(0.0, (q - df) / q) if q > 0 else 0.0
    return Heterogeneity(
        scale=scale_name,
        pooled_estimate=pooled,
        pooled_std_error=float(1.0 / math.sqrt(np.sum(w))),
        q=q,
        df=df,
        p_value=float(special.chdtrc(df, q)),
        i_squared=i_squared,
    )


def per_day_effects(
    days: Sequence[ArmPair],
    *,
    kind: MetricKind = "mean",
    cuped: bool = False,
    alpha: float = 0.05,
    scale: Literal["absolute", "relative"] = "relative",
) -> tuple[tuple[DayEffect, ...], Heterogeneity]:
    """Each day's effect, plus Cochran's Q across days on ``scale``."""
    absolute: list[Effect] = []
    relative: list[Effect] = []
    for control, treatment in days:
        c, t, method = arm_estimates(control, treatment, kind=kind, cuped=cuped, alpha=alpha)
        absolute.append(absolute_lift(c, t, alpha=alpha, method=method))
        relative.append(_log_relative(c, t, alpha, method))
    on_scale = relative if scale == "relative" else absolute
    # (a relative effect's std_error is on the log scale: Q compares log ratios)
    estimates = [math.log1p(e.estimate) if e.estimate > -1 else math.nan for e in relative]
    heterogeneity = cochran_q(
        estimates if scale == "relative" else [e.estimate for e in absolute],
        [e.std_error for e in on_scale],
        scale=scale,
    )
    p = np.array([e.p_value for e in on_scale])
    defined = np.isfinite(p)
    p_holm = np.full(p.size, math.nan)
    if defined.any():
        p_holm[defined] = holm(p[defined])
    effects = tuple(
        DayEffect(day=i, absolute=a, relative=r, p_holm=float(p_holm[i]))
        for i, (a, r) in enumerate(zip(absolute, relative, strict=True))
    )
    return effects, heterogeneity


def _log_relative(c: ArmEstimate, t: ArmEstimate, alpha: float, method: str) -> Effect:
    return relative_lift(c, t, alpha=alpha, scale="log", method=f"{method}-log")


def running_totals(days: Sequence[ArmPair]) -> list[ArmPair]:
    """Cumulative stats by merging days - valid ONLY when units are disjoint across days."""
    out: list[ArmPair] = []
    for control, treatment in days:
        if out:
            prev_c, prev_t = out[-1]
            out.append((prev_c.merge(control), prev_t.merge(treatment)))
        else:
            out.append((control, treatment))
    return out


def cumulative_series(
    cumulative: Sequence[ArmPair],
    *,
    kind: MetricKind = "mean",
    cuped: bool = False,
    alpha: float = 0.05,
    planned_units: int | None = None,
) -> tuple[CumulativePoint, ...]:
    """Effect at each day's cutoff; with ``planned_units``, also the always-valid CS, as a
    running intersection with running-minimum p-values (see
    :func:`experiments_app.stats.sequential.running_sequence`)."""
    points = []
    for day, (control, treatment) in enumerate(cumulative):
        c, t, method = arm_estimates(control, treatment, kind=kind, cuped=cuped, alpha=alpha)
        seq = (
            sequential_effect(c, t, planned_units=planned_units, alpha=alpha)
            if planned_units is not None
            else None
        )
        points.append(
            CumulativePoint(
                day=day,
                absolute=absolute_lift(c, t, alpha=alpha, method=method),
                relative=_log_relative(c, t, alpha, method),
                sequential=seq,
            )
        )
    looks = [p.sequential for p in points if p.sequential is not None]
    if len(looks) == len(points) and looks:
        points = [
            replace(point, sequential=look)
            for point, look in zip(points, running_sequence(looks), strict=True)
        ]
    return tuple(points)


def daily_analysis(
    days: Sequence[ArmPair],
    cumulative: Sequence[ArmPair] | None = None,
    *,
    kind: MetricKind = "mean",
    cuped: bool = False,
    alpha: float = 0.05,
    planned_units: int | None = None,
) -> DailyAnalysis:
    """Per-day effects + heterogeneity, and the cumulative series when it is supplied."""
    effects, heterogeneity = per_day_effects(days, kind=kind, cuped=cuped, alpha=alpha)
    series = (
        cumulative_series(
            cumulative, kind=kind, cuped=cuped, alpha=alpha, planned_units=planned_units
        )
        if cumulative is not None
        else ()
    )
    return DailyAnalysis(days=effects, heterogeneity=heterogeneity, cumulative=series)
