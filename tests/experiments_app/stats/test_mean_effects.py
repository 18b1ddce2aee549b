"""Welch, delta-method and Fieller effects against independent references.

References and tolerances:
* Welch: scipy.stats.ttest_ind(equal_var=False) and statsmodels CompareMeans on the raw
  per-unit arrays - estimate, SE, df, p and CI to 1e-9 relative (same formula, different code).
* Delta-method relative lift: a hand-computed case (1e-9) and a bootstrap of the ratio of
  means on skewed data (SE within 10%: 4000 resamples have ~1.1% Monte-Carlo error, the delta
  method is first-order).
* Fieller: numpy.roots of the quadratic written out in the test (1e-9), and the defining
  property that the endpoints solve (m_t - r m_c)**2 = q**2 (v_t + r**2 v_c).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

from experiments_app.stats.mean_effects import (
    ArmEstimate,
    absolute_lift,
    arm_mean,
    fieller_relative_lift,
    fieller_set,
    relative_lift,
    welch_difference,
)
from experiments_app.stats.samples import SampleStats
from tests.experiments_app.stats.conftest import zero_inflated_lognormal

REL = 1e-9
Z975 = 1.959963984540054


def test_welch_matches_scipy_and_statsmodels_on_raw_data(rng: np.random.Generator) -> None:
    # given skewed per-UV values with unequal sizes and variances (an 80/20 split)
    control = zero_inflated_lognormal(rng, 800)
    treatment = zero_inflated_lognormal(rng, 200, scale=1.3)
    # when
    effect = welch_difference(
        SampleStats.from_arrays(control), SampleStats.from_arrays(treatment), alpha=0.05
    )
    # then: scipy
    ref = sps.ttest_ind(treatment, control, equal_var=False)
    ci = ref.confidence_interval(0.95)
    assert effect.estimate == pytest.approx(treatment.mean() - control.mean(), rel=REL)
    assert effect.df == pytest.approx(ref.df, rel=REL)
    assert effect.p_value == pytest.approx(ref.pvalue, rel=REL)
    assert effect.ci_low == pytest.approx(ci.low, rel=REL)
    assert effect.ci_high == pytest.approx(ci.high, rel=REL)
    # and statsmodels
    cm = CompareMeans(DescrStatsW(treatment), DescrStatsW(control))
    low, high = cm.tconfint_diff(alpha=0.05, usevar="unequal")
    _, p_sm, df_sm = cm.ttest_ind(usevar="unequal")
    assert (effect.ci_low, effect.ci_high) == pytest.approx((low, high), rel=REL)
    assert effect.p_value == pytest.approx(p_sm, rel=REL)
    assert effect.df == pytest.approx(df_sm, rel=REL)
    assert effect.std_error == pytest.approx(cm.std_meandiff_separatevar, rel=REL)
    assert (effect.control_n, effect.treatment_n) == (800, 200)


def test_welch_at_alpha_10_percent_matches_scipy(rng: np.random.Generator) -> None:
    c, t = rng.normal(0, 1, 30), rng.normal(0.5, 3, 12)
    effect = welch_difference(SampleStats.from_arrays(c), SampleStats.from_arrays(t), alpha=0.1)
    ci = sps.ttest_ind(t, c, equal_var=False).confidence_interval(0.9)
    assert (effect.ci_low, effect.ci_high) == pytest.approx((ci.low, ci.high), rel=REL)


def test_delta_relative_lift_hand_computed() -> None:
    # m_c = 10, m_t = 12, Var(m_c) = 0.64, Var(m_t) = 1; huge n so the quantile is normal.
    # Var(r) = 1/10**2 + (12/10)**2 * 0.64/10**2 = 0.019216 -> SE = 0.1386218...
    control, treatment = ArmEstimate(10.0, 0.64, 10**9), ArmEstimate(12.0, 1.0, 10**9)
    effect = relative_lift(control, treatment, alpha=0.05)
    se = math.sqrt(0.019216)
    assert effect.estimate == pytest.approx(0.2, rel=REL)
    assert effect.std_error == pytest.approx(se, rel=REL)
    assert effect.ci_low == pytest.approx(0.2 - Z975 * se, rel=1e-7)
    assert effect.ci_high == pytest.approx(0.2 + Z975 * se, rel=1e-7)
    assert effect.p_value == pytest.approx(2 * sps.norm.sf(0.2 / se), rel=1e-7)


def test_log_ratio_relative_lift_hand_computed() -> None:
    # Var(log r) = 1/12**2 + 0.64/10**2 = 0.0133444...; interval exp(log 1.2 +- z se) - 1
    control, treatment = ArmEstimate(10.0, 0.64, 10**9), ArmEstimate(12.0, 1.0, 10**9)
    effect = relative_lift(control, treatment, scale="log")
    se = math.sqrt(1 / 144 + 0.0064)
    assert effect.estimate == pytest.approx(0.2, rel=REL)
    assert effect.ci_low == pytest.approx(1.2 * math.exp(-Z975 * se) - 1, rel=1e-7)
    assert effect.ci_high == pytest.approx(1.2 * math.exp(Z975 * se) - 1, rel=1e-7)


def test_delta_se_agrees_with_a_bootstrap_of_the_ratio(rng: np.random.Generator) -> None:
    control = zero_inflated_lognormal(rng, 3000)
    treatment = zero_inflated_lognormal(rng, 1500, scale=1.05)
    effect = relative_lift(
        arm_mean(SampleStats.from_arrays(control)), arm_mean(SampleStats.from_arrays(treatment))
    )
    boot_rng = np.random.default_rng(7)
    b = 4000
    mc = control[boot_rng.integers(0, control.size, (b, control.size))].mean(axis=1)
    mt = treatment[boot_rng.integers(0, treatment.size, (b, treatment.size))].mean(axis=1)
    boot_se = np.std(mt / mc - 1, ddof=1)
    assert effect.std_error == pytest.approx(boot_se, rel=0.10)


def _fieller_by_hand(a: float, b: float, va: float, vb: float, q: float) -> np.ndarray:
    # (a - r b)^2 - q^2 (va + r^2 vb) = 0  <=>  (b^2 - q^2 vb) r^2 - 2ab r + (a^2 - q^2 va) = 0
    return np.sort(np.roots([b * b - q * q * vb, -2 * a * b, a * a - q * q * va]).real)


def test_fieller_bounded_case_hand_computed() -> None:
    control, treatment = ArmEstimate(10.0, 0.64, 10**9), ArmEstimate(12.0, 1.0, 10**9)
    fs = fieller_set(control, treatment, alpha=0.05)
    low, high = _fieller_by_hand(12.0, 10.0, 1.0, 0.64, Z975)
    assert fs.kind == "bounded"
    assert (fs.low, fs.high) == pytest.approx((low, high), rel=1e-7)
    # Both endpoints solve the defining equation.
    for r in (fs.low, fs.high):
        assert (12 - r * 10) ** 2 == pytest.approx(Z975**2 * (1 + r * r * 0.64), rel=1e-6)
    # By hand: q**2 = 3.841459, A = 100 - 0.64 q**2 = 97.541466,
    # disc/4 = q**2 (144 * 0.64 + 100 - 0.64 q**2) = 728.73037, sqrt = 26.995006,
    # ratio in [(120 - 26.995006)/A, (120 + 26.995006)/A] = [0.953492, 1.507000].
    assert fs.low == pytest.approx(0.953492, abs=1e-6)
    assert fs.high == pytest.approx(1.507000, abs=1e-6)
    effect = fieller_relative_lift(control, treatment, alpha=0.05)
    assert effect.bounded
    assert (effect.ci_low, effect.ci_high) == pytest.approx((fs.low - 1, fs.high - 1), rel=REL)


def test_fieller_p_value_is_the_welch_p_value_and_agrees_with_the_set(
    rng: np.random.Generator,
) -> None:
    c = arm_mean(SampleStats.from_arrays(zero_inflated_lognormal(rng, 400)))
    t = arm_mean(SampleStats.from_arrays(zero_inflated_lognormal(rng, 100, scale=1.4)))
    effect = fieller_relative_lift(c, t)
    assert effect.p_value == pytest.approx(absolute_lift(c, t).p_value, rel=REL)
    assert fieller_set(c, t).contains(1.0) == (effect.p_value >= 0.05)


def test_fieller_unbounded_cases_are_explicit() -> None:
    # Control mean not distinguishable from zero, treatment clearly non-zero -> two rays.
    exclusive = fieller_set(ArmEstimate(1.0, 1.0, 10**9), ArmEstimate(10.0, 1.0, 10**9))
    assert exclusive.kind == "exclusive"
    assert exclusive.contains(-1e6) and exclusive.contains(1e6)
    assert not exclusive.contains(exclusive.low + (exclusive.high - exclusive.low) / 2)
    # Both means indistinguishable from zero -> the whole line.
    everything = fieller_set(ArmEstimate(0.5, 1.0, 10**9), ArmEstimate(0.5, 1.0, 10**9))
    assert everything.kind == "unbounded"
    effect = fieller_relative_lift(ArmEstimate(1.0, 1.0, 10**9), ArmEstimate(10.0, 1.0, 10**9))
    assert not effect.bounded
    assert (effect.ci_low, effect.ci_high) == (-math.inf, math.inf)


def test_degenerate_inputs_give_nan_not_exceptions() -> None:
    empty = SampleStats(n=0, sum_y=0.0, sum_y2=0.0)
    some = SampleStats.from_arrays([1.0, 2.0, 3.0])
    assert not welch_difference(empty, some).is_defined
    zero_control = arm_mean(SampleStats.from_arrays([0.0, 0.0, 0.0]))
    assert not relative_lift(zero_control, arm_mean(some)).is_defined
    constant = SampleStats.from_arrays([2.0, 2.0, 2.0])
    exact = welch_difference(constant, constant)
    assert (exact.estimate, exact.ci_low, exact.ci_high, exact.p_value) == (0.0, 0.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="alpha"):
        welch_difference(some, some, alpha=1.5)
