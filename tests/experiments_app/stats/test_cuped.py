"""CUPED against statsmodels OLS and a bootstrap.

* Plain CUPED: with the within-arm pooled theta, the adjusted difference IS the treatment
  coefficient of OLS y ~ 1 + T + c (Frisch-Waugh) - equal to 1e-9 relative, theta equal to
  the OLS slope to 1e-9. The CUPED SE (per-arm residual variances, Welch-style) is compared
  with the OLS HC2 robust SE: within 3% (they differ by the O(1/n) estimation error of theta
  and HC2 leverage terms).
* Variance reduction: close to the within-arm squared correlation (within 0.02 absolute).
* Ratio CUPED: with x = 1 it equals plain CUPED (1e-9); on clustered data its SE agrees with
  a cluster bootstrap that re-estimates theta in every resample (within 10%).
"""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from experiments_app.stats.cuped import cuped_effect, cuped_ratio_effect, cuped_theta
from experiments_app.stats.mean_effects import welch_difference
from experiments_app.stats.samples import SampleStats

REL = 1e-9


def _arm(rng: np.random.Generator, n: int, lift: float) -> tuple[np.ndarray, np.ndarray]:
    """Pre-period GMV c and in-experiment GMV y sharing a per-UV propensity."""
    propensity = rng.gamma(0.5, 2.0, n)
    c = rng.poisson(3 * propensity) * rng.lognormal(2.0, 0.5, n)
    y = (1 + lift) * rng.poisson(3 * propensity) * rng.lognormal(2.0, 0.5, n)
    return y, c


def test_cuped_equals_the_ols_treatment_coefficient(rng: np.random.Generator) -> None:
    y_c, c_c = _arm(rng, 4000, 0.0)
    y_t, c_t = _arm(rng, 1000, 0.05)
    result = cuped_effect(SampleStats.from_arrays(y_c, c=c_c), SampleStats.from_arrays(y_t, c=c_t))
    y = np.concatenate([y_c, y_t])
    treated = np.concatenate([np.zeros(y_c.size), np.ones(y_t.size)])
    design = np.column_stack([np.ones_like(y), treated, np.concatenate([c_c, c_t])])
    fit = sm.OLS(y, design).fit(cov_type="HC2")
    assert result.absolute.method == "cuped"
    assert result.absolute.estimate == pytest.approx(fit.params[1], rel=REL)
    assert result.theta == pytest.approx(fit.params[2], rel=REL)
    assert result.absolute.std_error == pytest.approx(fit.bse[1], rel=0.03)


def test_variance_reduction_matches_the_squared_correlation(rng: np.random.Generator) -> None:
    y_c, c_c = _arm(rng, 5000, 0.0)
    y_t, c_t = _arm(rng, 5000, 0.0)
    control, treatment = SampleStats.from_arrays(y_c, c=c_c), SampleStats.from_arrays(y_t, c=c_t)
    result = cuped_effect(control, treatment)
    within_r2 = np.mean([np.corrcoef(y_c, c_c)[0, 1] ** 2, np.corrcoef(y_t, c_t)[0, 1] ** 2])
    assert result.variance_reduction > 0.1
    assert result.variance_reduction == pytest.approx(within_r2, abs=0.02)
    plain = welch_difference(control, treatment)
    assert result.absolute.std_error == pytest.approx(
        plain.std_error * np.sqrt(1 - result.variance_reduction), rel=REL
    )
    assert cuped_theta(control, treatment) == pytest.approx(result.theta, rel=REL)


def test_ratio_cuped_with_unit_clusters_equals_plain_cuped(rng: np.random.Generator) -> None:
    y_c, c_c = _arm(rng, 2000, 0.0)
    y_t, c_t = _arm(rng, 500, 0.05)
    ones_c, ones_t = np.ones_like(y_c), np.ones_like(y_t)
    plain = cuped_effect(SampleStats.from_arrays(y_c, c=c_c), SampleStats.from_arrays(y_t, c=c_t))
    ratio = cuped_ratio_effect(
        SampleStats.from_arrays(y_c, x=ones_c, c=c_c),
        SampleStats.from_arrays(y_t, x=ones_t, c=c_t),
    )
    assert ratio.absolute.estimate == pytest.approx(plain.absolute.estimate, rel=REL)
    assert ratio.absolute.std_error == pytest.approx(plain.absolute.std_error, rel=1e-8)
    assert ratio.theta == pytest.approx(plain.theta, rel=1e-8)


def _clusters(rng: np.random.Generator, n: int, lift: float) -> tuple[np.ndarray, ...]:
    x = rng.integers(1, 40, n).astype(float)
    room = rng.gamma(3.0, 1 / 3.0, n)
    c = rng.poisson(2 * x * room) * rng.lognormal(2.0, 0.4, n)
    y = (1 + lift) * rng.poisson(2 * x * room) * rng.lognormal(2.0, 0.4, n)
    return y, x, c


def test_ratio_cuped_se_agrees_with_a_cluster_bootstrap(rng: np.random.Generator) -> None:
    y_c, x_c, c_c = _clusters(rng, 400, 0.0)
    y_t, x_t, c_t = _clusters(rng, 200, 0.05)
    result = cuped_ratio_effect(
        SampleStats.from_arrays(y_c, x=x_c, c=c_c), SampleStats.from_arrays(y_t, x=x_t, c=c_t)
    )
    assert result.variance_reduction > 0.2
    boot = np.random.default_rng(5)
    estimates = []
    for _ in range(1000):
        i = boot.integers(0, y_c.size, y_c.size)
        j = boot.integers(0, y_t.size, y_t.size)
        r = cuped_ratio_effect(
            SampleStats.from_arrays(y_c[i], x=x_c[i], c=c_c[i]),
            SampleStats.from_arrays(y_t[j], x=x_t[j], c=c_t[j]),
        )
        estimates.append(r.absolute.estimate)
    assert result.absolute.std_error == pytest.approx(np.std(estimates, ddof=1), rel=0.10)


def test_cuped_needs_the_covariate() -> None:
    s = SampleStats.from_arrays([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="pre-period covariate"):
        cuped_effect(s, s)
