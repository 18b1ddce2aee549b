"""Per-day effects, Cochran's Q and the cumulative series.

* Cochran's Q hand computed (1e-9 relative); with 3 days (df = 2) the chi-square tail is
  exp(-Q/2), so the p-value is checked in closed form too.
* Per-day and cumulative effects equal Welch on the raw arrays of that day / cutoff (1e-9).
* Q's calibration: over 300 simulated 14-day series with a constant +20% relative lift and strong
  day-of-week seasonality, Q on the relative scale rejects at 5% in 2-9% of series (binomial
  SE 1.3%); on the absolute scale the seasonality alone makes it reject far more often,
  which is why relative is the default.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from experiments_app.stats.daily import (
    cochran_q,
    cumulative_series,
    daily_analysis,
    per_day_effects,
    running_totals,
)
from experiments_app.stats.mean_effects import welch_difference
from experiments_app.stats.samples import SampleStats

REL = 1e-9


def test_cochran_q_hand_computed() -> None:
    # w = 1/se^2 = [2500, 1111.11, 625]; pooled = 309.7222/4236.1111 = 0.0731148
    # Q = 2500*(0.0268852)^2 + 1111.11*(-0.0531148)^2 + 625*(-0.0131148)^2 = 5.0491803
    h = cochran_q([0.10, 0.02, 0.06], [0.02, 0.03, 0.04])
    assert h.pooled_estimate == pytest.approx(309.72222222 / 4236.11111111, rel=1e-8)
    assert h.q == pytest.approx(5.049180327868853, rel=REL)
    assert h.df == 2
    assert h.p_value == pytest.approx(math.exp(-h.q / 2), rel=REL)
    assert h.i_squared == pytest.approx((h.q - 2) / h.q, rel=REL)
    assert h.pooled_std_error == pytest.approx(1 / math.sqrt(4236.11111111), rel=1e-8)


def test_cochran_q_drops_undefined_days_and_needs_two() -> None:
    h = cochran_q([0.1, math.nan, 0.05], [0.02, 0.02, 0.0])
    assert h.df == 0 and math.isnan(h.q)
    assert cochran_q([0.1, 0.1], [0.02, 0.03]).i_squared == 0.0


def _days(
    rng: np.random.Generator, lift: float, n_days: int = 14, n: int = 400
) -> list[tuple[np.ndarray, np.ndarray]]:
    season = 1 + 0.5 * np.cos(2 * np.pi * np.arange(n_days) / 7)
    out = []
    for d in range(n_days):
        control = season[d] * rng.gamma(2.0, 5.0, n)
        treatment = (1 + lift) * season[d] * rng.gamma(2.0, 5.0, n // 4)
        out.append((control, treatment))
    return out


def test_per_day_and_cumulative_effects_equal_welch_on_the_raw_arrays(
    rng: np.random.Generator,
) -> None:
    raw = _days(rng, 0.05, n_days=5)
    days = [(SampleStats.from_arrays(c), SampleStats.from_arrays(t)) for c, t in raw]
    effects, _ = per_day_effects(days, kind="mean")
    for (c, t), effect in zip(raw, effects, strict=True):
        ref = welch_difference(SampleStats.from_arrays(c), SampleStats.from_arrays(t))
        assert effect.absolute.ci_low == pytest.approx(ref.ci_low, rel=REL)
        assert effect.relative.estimate == pytest.approx(t.mean() / c.mean() - 1, rel=REL)
    # Days hold disjoint units here, so running totals are the cumulative stats.
    cumulative = running_totals(days)
    points = cumulative_series(cumulative, planned_units=5 * 500)
    for d, point in enumerate(points):
        c = np.concatenate([raw[i][0] for i in range(d + 1)])
        t = np.concatenate([raw[i][1] for i in range(d + 1)])
        ref = welch_difference(SampleStats.from_arrays(c), SampleStats.from_arrays(t))
        assert point.absolute.estimate == pytest.approx(ref.estimate, rel=REL)
        assert point.absolute.ci_high == pytest.approx(ref.ci_high, rel=REL)
        assert point.sequential is not None
        assert point.sequential.absolute.ci_high > point.absolute.ci_high


def test_q_is_calibrated_on_the_relative_scale_under_seasonality() -> None:
    rng = np.random.default_rng(99)
    rejections = {"relative": 0, "absolute": 0}
    runs = 300
    for _ in range(runs):
        raw = _days(rng, 0.2, n=1600)
        days = [(SampleStats.from_arrays(c), SampleStats.from_arrays(t)) for c, t in raw]
        for scale in rejections:
            _, h = per_day_effects(days, scale=scale)  # type: ignore[arg-type]
            rejections[scale] += h.p_value < 0.05
    assert 0.02 <= rejections["relative"] / runs <= 0.09
    assert rejections["absolute"] / runs > 0.2


def test_daily_analysis_bundles_days_heterogeneity_and_holm(rng: np.random.Generator) -> None:
    days = [(SampleStats.from_arrays(c), SampleStats.from_arrays(t)) for c, t in _days(rng, 0.0)]
    analysis = daily_analysis(days, running_totals(days))
    assert len(analysis.days) == len(analysis.cumulative) == 14
    assert analysis.heterogeneity.df == 13
    for day in analysis.days:
        assert day.p_holm >= day.relative.p_value
    assert all(point.sequential is None for point in analysis.cumulative)


def test_day_relative_effects_are_log_ratio_intervals_above_minus_100_percent(
    rng: np.random.Generator,
) -> None:
    # given heavy-tailed GMV-like days: a day without any buyer in treatment, a day with one
    # big buyer, and ordinary days
    control = rng.lognormal(3, 1.5, 2000) * (rng.random(2000) < 0.03)
    no_buyer = np.zeros(500)
    one_buyer = np.zeros(500)
    one_buyer[0] = control.mean() * one_buyer.size  # the same mean as control, from one UV
    ordinary = rng.lognormal(3, 1.5, 500) * (rng.random(500) < 0.03)
    raw = [(control, no_buyer), (control, one_buyer), (control, ordinary)]
    days = [(SampleStats.from_arrays(c), SampleStats.from_arrays(t)) for c, t in raw]
    # when the per-day effects are computed
    effects, heterogeneity = per_day_effects(days)
    # then a day whose treatment mean is 0 has no relative effect (not "-100%, p ~ 0")
    assert math.isnan(effects[0].relative.estimate) and math.isnan(effects[0].p_holm)
    # and the others are exp(log ratio +- t * SE_log) - 1: never below -100%
    for (c, t), effect in zip(raw[1:], effects[1:], strict=True):
        log_ratio = math.log(t.mean() / c.mean())
        se = math.sqrt(
            t.var(ddof=1) / t.size / t.mean() ** 2 + c.var(ddof=1) / c.size / c.mean() ** 2
        )
        q = effect.relative.ci_high
        assert effect.relative.estimate == pytest.approx(math.expm1(log_ratio), rel=REL)
        assert effect.relative.std_error == pytest.approx(se, rel=1e-9)
        assert -1 < effect.relative.ci_low < effect.relative.estimate < q
    # the one-buyer day is wide, not "significant": its SE on the log scale is about 1
    assert effects[1].relative.std_error > 0.9 and effects[1].relative.p_value > 0.5
    # and Q compares the defined days' log ratios
    assert heterogeneity.df == 1


def test_cumulative_cs_is_a_running_intersection(rng: np.random.Generator) -> None:
    raw = _days(rng, 0.05, n_days=6)
    days = [(SampleStats.from_arrays(c), SampleStats.from_arrays(t)) for c, t in raw]
    points = cumulative_series(running_totals(days), planned_units=6 * 500)
    for k, point in enumerate(points):
        assert point.sequential is not None
        own = [p.sequential.relative for p in points[: k + 1] if p.sequential is not None]
        assert point.sequential.relative.p_value <= own[0].p_value
        assert point.sequential.relative.ci_low > -1
    widths = [
        p.sequential.relative.ci_high - p.sequential.relative.ci_low for p in points if p.sequential
    ]
    assert widths == sorted(widths, reverse=True)  # an intersection only narrows
