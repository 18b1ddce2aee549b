"""metric_readout bundles the modules consistently, and is fast from sufficient statistics."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from experiments_app.stats.cuped import cuped_effect
from experiments_app.stats.mean_effects import arm_mean, fieller_relative_lift, welch_difference
from experiments_app.stats.ratio_metrics import ratio_absolute_lift, ratio_relative_lift
from experiments_app.stats.readout import adjusted_p_values, metric_readout, srm_check
from experiments_app.stats.samples import SampleStats
from experiments_app.stats.sequential import sequential_effect
from experiments_app.stats.simulation import simulate_experiment

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
