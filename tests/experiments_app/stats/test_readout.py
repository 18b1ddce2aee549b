"""metric_readout bundles the modules consistently, and is fast from sufficient statistics."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower

from experiments_app.stats.cuped import cuped_effect
from experiments_app.stats.mean_effects import arm_mean, fieller_relative_lift, welch_difference
from experiments_app.stats.ratio_metrics import ratio_absolute_lift, ratio_relative_lift
from experiments_app.stats.readout import adjusted_p_values, metric_readout, srm_check
from experiments_app.stats.samples import SampleStats
from experiments_app.stats.sequential import sequential_effect
from experiments_app.stats.simulation import simulate_experiment
from tests.experiments_app.stats.conftest import zero_inflated_lognormal

REL = 1e-12


@pytest.fixture(scope="module")
def uv_experiment():  # type: ignore[no-untyped-def]
    return simulate_experiment(n_uvs=20_000, unit="uv", seed=3)


def test_mean_readout_is_the_module_results(uv_experiment) -> None:  # type: ignore[no-untyped-def]
    control, treatment = uv_experiment.stats("gmv")
    r = metric_readout(
        control, treatment, kind="mean", cuped=True, sequential=True, planned_units=30_000
    )
    welch = welch_difference(control, treatment)
    assert r.absolute == welch
    assert r.relative_fieller == fieller_relative_lift(arm_mean(control), arm_mean(treatment))
    assert r.cuped == cuped_effect(control, treatment)
    assert r.headline_absolute == r.cuped.absolute
    assert r.sequential == sequential_effect(
        r.cuped.control, r.cuped.treatment, planned_units=30_000
    )
    assert r.mde is not None and r.mde.mde_absolute > 0
    assert r.daily is None


def test_ratio_readout_uses_the_cluster_estimator() -> None:
    sim = simulate_experiment(n_uvs=20_000, unit="room", seed=4, model=None)
    control, treatment = sim.stats("views")
    r = metric_readout(control, treatment, kind="ratio")
    assert r.absolute == ratio_absolute_lift(control, treatment)
    assert r.relative == ratio_relative_lift(control, treatment)
    assert r.absolute.method == "ratio" and r.cuped is None and r.sequential is None


def test_readout_rejects_underspecified_requests() -> None:
    s = SampleStats.from_arrays([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="planned_units"):
        metric_readout(s, s, sequential=True)
    with pytest.raises(ValueError, match="covariate"):
        metric_readout(s, s, cuped=True)


def test_multiple_metrics_are_adjusted_like_statsmodels(uv_experiment) -> None:  # type: ignore[no-untyped-def]
    readouts = {m: metric_readout(*uv_experiment.stats(m), cuped=True) for m in ("gmv", "views")}
    raw = [readouts[m].headline_relative.p_value for m in ("gmv", "views")]
    for method, ref in (("holm", "holm"), ("bh", "fdr_bh")):
        adjusted = adjusted_p_values(readouts, method=method)  # type: ignore[arg-type]
        expected = multipletests(raw, method=ref)[1]
        assert [adjusted["gmv"], adjusted["views"]] == pytest.approx(expected, rel=REL)


def test_srm_banner_catches_lost_treatment_units() -> None:
    sim = simulate_experiment(n_uvs=200_000, unit="uv", treatment_loss=0.05, seed=8)
    result = srm_check(sim.units().counts(), sim.weights)
    assert result.flagged and "Sample ratio mismatch" in result.message
    clean = simulate_experiment(n_uvs=200_000, unit="uv", seed=8)
    assert not srm_check(clean.units().counts(), clean.weights).flagged


def test_full_readout_from_rollups_is_well_under_a_second(uv_experiment) -> None:  # type: ignore[no-untyped-def]
    # The readout only touches sums, so its cost does not depend on the traffic size; the
    # benchmark (bench/readout.py) times the same call on stats of 1.58M + 395K UVs.
    inputs = {
        m: (uv_experiment.stats(m), uv_experiment.daily_stats(m), uv_experiment.cumulative_stats(m))
        for m in ("gmv", "views")
    }
    start = time.perf_counter()
    for totals, daily, cumulative in inputs.values():
        metric_readout(
            *totals, kind="mean", cuped=True, sequential=True, planned_units=2_000_000,
            daily=daily, cumulative=cumulative,
        )  # fmt: skip
    srm_check(uv_experiment.units().counts(), uv_experiment.weights)
    assert time.perf_counter() - start < 1.0


def test_readout_on_an_empty_day_renders_nan_instead_of_failing() -> None:
    empty = SampleStats(n=0, sum_y=0.0, sum_y2=0.0, sum_c=0.0, sum_c2=0.0, sum_yc=0.0)
    one = SampleStats.from_arrays(np.array([1.0, 0.0]), c=np.array([0.0, 1.0]))
    r = metric_readout(empty, one, cuped=True)
    assert math.isnan(r.absolute.estimate) and r.mde is None


# --- the readout's MDE: scale and variance, against hand computations ----------------------
# Reference: statsmodels' NormalIndPower (effect size in SDs of the per-unit variance s**2
# pooled over the arms), times s; and the closed form (z_{1-a/2} + z_{power}) * SE with
# SE = s * sqrt(1/n_c + 1/n_t). Tolerance 1e-4 relative (statsmodels' solver stops at power
# 0.80004); the closed form ignores the far tail and agrees to 1e-5.
Z_SUM = float(stats.norm.ppf(0.975) + stats.norm.ppf(0.8))


def _pooled(values_c: np.ndarray, values_t: np.ndarray) -> float:
    nc, nt = values_c.size, values_t.size
    return float(
        ((nc - 1) * values_c.var(ddof=1) + (nt - 1) * values_t.var(ddof=1)) / (nc + nt - 2)
    )


def _normal_ind_power_mde(variance: float, n_c: int, n_t: int) -> float:
    d = NormalIndPower().solve_power(
        effect_size=None, nobs1=n_c, ratio=n_t / n_c, alpha=0.05, power=0.8
    )
    return float(d) * math.sqrt(variance)


def test_mde_is_relative_to_the_control_mean_from_the_per_uv_variance(rng) -> None:  # type: ignore[no-untyped-def]
    # given heavy-tailed GMV per UV, 80/20
    y_c = zero_inflated_lognormal(rng, 8_000)
    y_t = zero_inflated_lognormal(rng, 2_000, scale=1.05)
    # when
    r = metric_readout(SampleStats.from_arrays(y_c), SampleStats.from_arrays(y_t))
    # then the MDE is the two-sample MDE of the pooled per-UV variance, over the control mean
    variance = _pooled(y_c, y_t)
    se = math.sqrt(variance * (1 / 8_000 + 1 / 2_000))
    assert r.mde is not None
    assert r.mde.mde_absolute == pytest.approx(
        _normal_ind_power_mde(variance, 8_000, 2_000), rel=1e-4
    )
    assert r.mde.mde_absolute == pytest.approx(Z_SUM * se, rel=1e-5)
    assert r.mde.mde_relative == pytest.approx(Z_SUM * se / y_c.mean(), rel=1e-5)


def test_mde_and_relative_interval_share_one_scale(rng) -> None:  # type: ignore[no-untyped-def]
    # given two arms with the same data (relative lift 0, equal variances)
    y = zero_inflated_lognormal(rng, 5_000)
    s = SampleStats.from_arrays(y)
    # when
    r = metric_readout(s, s)
    # then the relative interval is +-t * SE/mean (Welch df = 2(n - 1)) and the MDE is
    # (z + z_power) * SE/mean with the same SE/mean: about 1.43x the interval's half-width
    t = float(stats.t.ppf(0.975, 2 * (5_000 - 1)))
    se_relative = math.sqrt(2 * y.var(ddof=1) / 5_000) / y.mean()
    half_width = r.relative.ci_high
    assert half_width == pytest.approx(t * se_relative, rel=1e-9)
    assert r.mde is not None
    assert r.mde.mde_relative == pytest.approx(Z_SUM * se_relative, rel=1e-5)
    assert r.mde.mde_relative / half_width == pytest.approx(Z_SUM / t, rel=1e-5)


def test_mde_of_a_ratio_metric_uses_the_cluster_variance() -> None:
    # given room-randomized GMV per UV (the UVs of a room share its audience effect)
    sim = simulate_experiment(n_uvs=30_000, unit="room", seed=12)
    units = sim.units()
    control, treatment = units.arm_stats("gmv", ratio=True, covariate=False)
    # when
    r = metric_readout(control, treatment, kind="ratio")
    # then the variance is that of the linearized ratio per room, (y - R x) / mean(x), pooled;
    # n counts rooms, not UVs
    linearized = []
    for arm in (0, 1):
        keep = units.arm == arm
        y, x = units.gmv[keep], units.uvs[keep]
        linearized.append((y - y.sum() / x.sum() * x) / x.mean())
    variance = _pooled(*linearized)
    n_c, n_t = linearized[0].size, linearized[1].size
    assert r.mde is not None and (r.mde.n_control, r.mde.n_treatment) == (n_c, n_t)
    assert n_c + n_t <= sim.model.rooms
    assert r.mde.mde_absolute == pytest.approx(_normal_ind_power_mde(variance, n_c, n_t), rel=1e-4)
    control_ratio = units.gmv[units.arm == 0].sum() / units.uvs[units.arm == 0].sum()
    assert r.mde.mde_relative == pytest.approx(r.mde.mde_absolute / control_ratio, rel=1e-12)


def test_mde_after_cuped_uses_the_adjusted_variance(rng) -> None:  # type: ignore[no-untyped-def]
    # given outcomes that their pre-period predicts well
    c_c, c_t = rng.gamma(2.0, 5.0, 6_000), rng.gamma(2.0, 5.0, 1_500)
    y_c = 0.8 * c_c + zero_inflated_lognormal(rng, 6_000, scale=0.2)
    y_t = 0.8 * c_t + zero_inflated_lognormal(rng, 1_500, scale=0.2)
    # when
    r = metric_readout(
        SampleStats.from_arrays(y_c, c=c_c), SampleStats.from_arrays(y_t, c=c_t), cuped=True
    )
    # then the MDE uses the variance of y - theta * c (theta: pooled within-arm slope) and the
    # unadjusted control mean as its base
    theta = ((y_c.size - 1) * np.cov(y_c, c_c)[0, 1] + (y_t.size - 1) * np.cov(y_t, c_t)[0, 1]) / (
        (c_c.size - 1) * c_c.var(ddof=1) + (c_t.size - 1) * c_t.var(ddof=1)
    )
    variance = _pooled(y_c - theta * c_c, y_t - theta * c_t)
    assert r.mde is not None
    assert r.mde.mde_absolute == pytest.approx(
        _normal_ind_power_mde(variance, 6_000, 1_500), rel=1e-4
    )
    assert r.mde.mde_relative == pytest.approx(r.mde.mde_absolute / y_c.mean(), rel=1e-12)
    assert variance < _pooled(y_c, y_t) / 2  # CUPED did shrink it
