"""Cluster ratio estimator (room / room-day randomization) against independent references.

* statsmodels WLS of y_i/x_i on a constant with weights x_i, HC1 sandwich SE: the same
  estimator by a different route - estimate and SE to 1e-9 relative per arm.
* statsmodels OLS on the UV-level rows with cluster-robust (room) SEs: the analysis a
  statistician would run on raw data - lift equal to 1e-9, SE within 2% (statsmodels applies a
  global G/(G-1) * (N-1)/(N-K) correction where the delta method uses n_a/(n_a-1) per arm).
* A cluster bootstrap (resampling rooms) of R_t - R_c: SE within 10% (3000 resamples).
* The naive per-UV Welch SE is much smaller - the leak the cluster analysis prevents.
"""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from experiments_app.stats.mean_effects import welch_difference
from experiments_app.stats.ratio_metrics import (
    arm_ratio,
    ratio_absolute_lift,
    ratio_relative_lift,
    ratio_unit_variance,
)
from experiments_app.stats.samples import SampleStats

REL = 1e-9


def _rooms(
    rng: np.random.Generator, n_rooms: int, lift: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """UV-level GMV with a shared room effect; returns (room id per UV, GMV per UV, sizes)."""
    sizes = rng.integers(1, 60, n_rooms)
    room_effect = rng.gamma(2.0, 0.5, n_rooms)
    room = np.repeat(np.arange(n_rooms), sizes)
    buys = rng.random(room.size) < 0.2 * room_effect[room]
    gmv = np.where(buys, (1 + lift) * rng.lognormal(3.0, 0.7, room.size), 0.0)
    return room, gmv, sizes


def _cluster_totals(room: np.ndarray, gmv: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    return np.bincount(room, weights=gmv, minlength=sizes.size)


@pytest.fixture
def experiment(rng: np.random.Generator) -> dict[str, np.ndarray]:
    room_c, gmv_c, size_c = _rooms(rng, 300, 0.0)
    room_t, gmv_t, size_t = _rooms(rng, 120, 0.05)
    return {
        "room_c": room_c, "gmv_c": gmv_c, "size_c": size_c.astype(float),
        "room_t": room_t, "gmv_t": gmv_t, "size_t": size_t.astype(float),
        "y_c": _cluster_totals(room_c, gmv_c, size_c),
        "y_t": _cluster_totals(room_t, gmv_t, size_t),
    }  # fmt: skip


def test_arm_ratio_equals_wls_with_hc1_sandwich(experiment: dict[str, np.ndarray]) -> None:
    y, x = experiment["y_c"], experiment["size_c"]
    arm = arm_ratio(SampleStats.from_arrays(y, x=x))
    fit = sm.WLS(y / x, np.ones_like(x), weights=x).fit(cov_type="HC1")
    assert arm.estimate == pytest.approx(y.sum() / x.sum(), rel=REL)
    assert arm.estimate == pytest.approx(fit.params[0], rel=REL)
    assert arm.std_error == pytest.approx(fit.bse[0], rel=REL)


def test_lift_matches_uv_level_ols_with_cluster_robust_se(
    experiment: dict[str, np.ndarray],
) -> None:
    e = experiment
    effect = ratio_absolute_lift(
        SampleStats.from_arrays(e["y_c"], x=e["size_c"]),
        SampleStats.from_arrays(e["y_t"], x=e["size_t"]),
    )
    # UV-level rows: GMV ~ 1 + T, clustered by room (treatment rooms get distinct ids).
    gmv = np.concatenate([e["gmv_c"], e["gmv_t"]])
    treated = np.concatenate([np.zeros(e["gmv_c"].size), np.ones(e["gmv_t"].size)])
    groups = np.concatenate([e["room_c"], e["room_t"] + e["size_c"].size])
    fit = sm.OLS(gmv, sm.add_constant(treated)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    assert effect.estimate == pytest.approx(fit.params[1], rel=REL)
    assert effect.std_error == pytest.approx(fit.bse[1], rel=0.02)
    # Per-UV Welch pretends the UVs are independent and understates the SE.
    naive = welch_difference(
        SampleStats.from_arrays(e["gmv_c"]), SampleStats.from_arrays(e["gmv_t"])
    )
    assert naive.std_error < 0.8 * effect.std_error


def test_delta_se_agrees_with_a_cluster_bootstrap(experiment: dict[str, np.ndarray]) -> None:
    e = experiment
    control = SampleStats.from_arrays(e["y_c"], x=e["size_c"])
    treatment = SampleStats.from_arrays(e["y_t"], x=e["size_t"])
    absolute = ratio_absolute_lift(control, treatment)
    relative = ratio_relative_lift(control, treatment)
    boot = np.random.default_rng(11)
    b = 3000

    def resampled_ratio(y: np.ndarray, x: np.ndarray) -> np.ndarray:
        idx = boot.integers(0, y.size, (b, y.size))
        return y[idx].sum(axis=1) / x[idx].sum(axis=1)

    r_c = resampled_ratio(e["y_c"], e["size_c"])
    r_t = resampled_ratio(e["y_t"], e["size_t"])
    assert absolute.std_error == pytest.approx(np.std(r_t - r_c, ddof=1), rel=0.10)
    assert relative.std_error == pytest.approx(np.std(r_t / r_c - 1, ddof=1), rel=0.10)


def test_unit_size_one_reduces_to_the_plain_mean(rng: np.random.Generator) -> None:
    y = rng.gamma(1.0, 2.0, 400)
    arm = arm_ratio(SampleStats.from_arrays(y, x=np.ones_like(y)))
    assert arm.estimate == pytest.approx(y.mean(), rel=REL)
    assert arm.variance == pytest.approx(np.var(y, ddof=1) / y.size, rel=1e-8)
    assert ratio_unit_variance(SampleStats.from_arrays(y, x=np.ones_like(y))) == pytest.approx(
        np.var(y, ddof=1), rel=1e-8
    )


def test_ratio_needs_the_denominator_sums() -> None:
    with pytest.raises(ValueError, match="sum_x"):
        arm_ratio(SampleStats.from_arrays([1.0, 2.0]))
