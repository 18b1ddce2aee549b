"""Power / MDE / sample size against statsmodels.stats.power.

* Normal MDE: statsmodels' NormalIndPower.power evaluated at our MDE gives the requested
  power to 1e-9; NormalIndPower.solve_power agrees to 1e-4 relative (its root finder stops
  early: its own answer has power 0.80004). Sample size vs solve_power: 1e-6 relative.
* t MDE vs TTestIndPower (noncentral t, df = n1 + n2 - 2): 1e-6 relative.
* The textbook closed form (z_{1-a/2} + z_{power}) * SE is within 1e-5 of the exact MDE.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.power import NormalIndPower, TTestIndPower

from experiments_app.stats.power import (
    achieved_power,
    minimum_detectable_effect,
    required_sample_size,
    unit_variance,
)
from experiments_app.stats.samples import SampleStats

SIGMA2 = 34.0**2  # GMV per UV, as observed at full scale in the simulation


def test_mde_at_the_published_split_matches_normal_ind_power() -> None:
    mde = minimum_detectable_effect(
        variance=SIGMA2, n_control=1_580_000, n_treatment=395_000, baseline_mean=3.0
    )
    d = NormalIndPower().solve_power(
        nobs1=1_580_000, ratio=395_000 / 1_580_000, alpha=0.05, power=0.8
    )
    power_at_mde = NormalIndPower().power(
        effect_size=mde.mde_absolute / 34.0, nobs1=1_580_000, ratio=0.25, alpha=0.05
    )
    assert power_at_mde == pytest.approx(0.8, abs=1e-9)
    assert mde.mde_absolute == pytest.approx(d * 34.0, rel=1e-4)
    assert mde.mde_relative == pytest.approx(mde.mde_absolute / 3.0, rel=1e-12)
    se = 34.0 * math.sqrt(1 / 1_580_000 + 1 / 395_000)
    assert mde.mde_absolute == pytest.approx((1.959964 + 0.841621) * se, rel=1e-5)


def test_t_mde_matches_ttest_ind_power_for_small_samples() -> None:
    mde = minimum_detectable_effect(
        variance=4.0, n_control=20, n_treatment=10, alpha=0.05, power=0.9, distribution="t"
    )
    d = TTestIndPower().solve_power(nobs1=20, ratio=0.5, alpha=0.05, power=0.9)
    assert mde.mde_absolute == pytest.approx(d * 2.0, rel=1e-6)


@pytest.mark.parametrize("distribution", ["normal", "t"])
def test_achieved_power_matches_statsmodels(distribution: str) -> None:
    ref = NormalIndPower() if distribution == "normal" else TTestIndPower()
    expected = ref.power(effect_size=0.3, nobs1=80, alpha=0.05, ratio=0.25)
    got = achieved_power(
        effect=0.3 * 1.5, variance=1.5**2, n_control=80, n_treatment=20,
        distribution=distribution,  # type: ignore[arg-type]
    )  # fmt: skip
    assert got == pytest.approx(expected, rel=1e-6)


def test_required_sample_size_matches_normal_ind_power() -> None:
    plan = required_sample_size(variance=SIGMA2, mde=0.04334 * 3.0, treatment_share=0.2)
    nobs1 = NormalIndPower().solve_power(
        effect_size=0.04334 * 3.0 / 34.0, ratio=0.25, alpha=0.05, power=0.8
    )
    assert plan.n_total_exact * 0.8 == pytest.approx(nobs1, rel=1e-6)
    assert plan.n_control == math.ceil(plan.n_total_exact * 0.8)
    # Round trip: the planned sizes detect the MDE with at least the requested power.
    assert achieved_power(
        effect=0.04334 * 3.0, variance=SIGMA2,
        n_control=plan.n_control, n_treatment=plan.n_treatment,
    ) >= 0.8  # fmt: skip


def test_unit_variance_for_mean_and_ratio(rng: np.random.Generator) -> None:
    y = rng.gamma(1.0, 2.0, 300)
    assert unit_variance(SampleStats.from_arrays(y)) == pytest.approx(np.var(y, ddof=1))
    x = rng.integers(1, 20, 300).astype(float)
    s = SampleStats.from_arrays(y * x, x=x)
    r = s.sum_y / (s.sum_x or 1.0)
    expected = np.var(y * x - r * x, ddof=1) / x.mean() ** 2
    assert unit_variance(s, kind="ratio") == pytest.approx(expected, rel=1e-8)


def test_invalid_inputs_are_rejected() -> None:
    with pytest.raises(ValueError, match="power"):
        minimum_detectable_effect(variance=1.0, n_control=10, n_treatment=10, power=0.01)
    with pytest.raises(ValueError, match="variance"):
        minimum_detectable_effect(variance=0.0, n_control=10, n_treatment=10)
    with pytest.raises(ValueError, match="treatment_share"):
        required_sample_size(variance=1.0, mde=0.1, treatment_share=1.0)
