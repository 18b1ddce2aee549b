"""The traffic generator: its closed-form truth, its shape, and its rollup semantics.

* Closed-form control means vs a 400K-UV simulation: within 4 standard errors.
* Shape: mostly-zero heavy-tailed GMV, zero-inflated views, positive pre/post correlation.
* Rollups: per-day stats of room-days add up to the totals; per-day stats of returning UVs do
  not (sum of squares is not additive within a unit) - the documented caveat.
"""

from __future__ import annotations

import numpy as np
import pytest

from experiments_app.stats.daily import running_totals
from experiments_app.stats.ratio_metrics import arm_ratio
from experiments_app.stats.simulation import TrafficModel, simulate_experiment, true_lift


@pytest.fixture(scope="module")
def big_uv():  # type: ignore[no-untyped-def]
    return simulate_experiment(n_uvs=400_000, unit="uv", treatment_weight=0.5, seed=1)


def test_closed_form_truth_matches_a_large_simulation() -> None:
    # Room effects are switched off (shape -> inf) because with 500 rooms the UV-weighted mean
    # of the realised room effects varies by ~3% run to run - variance the UV-level SE below
    # does not include (the cluster analysis does).
    flat_rooms = TrafficModel(room_effect_shape=1e9)
    sim = simulate_experiment(
        n_uvs=400_000, unit="uv", treatment_weight=0.5, model=flat_rooms, seed=1
    )
    units = sim.units()
    control = units.arm == 0
    for metric, values in (("gmv", units.gmv), ("views", units.views)):
        mean = values[control].mean()
        se = values[control].std(ddof=1) / np.sqrt(control.sum())
        truth = sim.truth.gmv_control_mean if metric == "gmv" else sim.truth.views_control_mean
        assert abs(mean - truth) < 4 * se, metric


def test_room_day_truth_is_per_daily_uv() -> None:
    flat_rooms = TrafficModel(room_effect_shape=1e9)
    sim = simulate_experiment(n_uvs=300_000, unit="room_day", model=flat_rooms, seed=2)
    control, _ = sim.stats("gmv")
    arm = arm_ratio(control)
    assert sim.truth.per == "uv_day"
    assert abs(arm.estimate - sim.truth.gmv_control_mean) < 4 * arm.std_error
    assert true_lift(TrafficModel(), "uv", 0.1, 0.0).gmv_control_mean > sim.truth.gmv_control_mean


def test_shape_is_zero_inflated_heavy_tailed_and_correlated(big_uv) -> None:  # type: ignore[no-untyped-def]
    u = big_uv.units()
    assert (u.gmv == 0).mean() > 0.9
    assert (u.views == 0).mean() > 0.3
    assert u.gmv.std() / u.gmv.mean() > 5
    assert np.corrcoef(u.gmv, u.pre_gmv)[0, 1] > 0.1
    assert np.corrcoef(u.views, u.pre_views)[0, 1] > 0.4
    assert np.all(u.uvs == 1)
    shares = u.counts()
    assert shares["treatment"] / u.arm.size == pytest.approx(0.5, abs=0.005)


def test_room_units_count_rooms_and_their_uvs() -> None:
    sim = simulate_experiment(n_uvs=50_000, unit="room", seed=5)
    units = sim.units()
    assert units.arm.size <= TrafficModel().rooms
    assert units.uvs.sum() == 50_000  # every UV appears once, in its room
    assert sim.kind == "ratio"


def test_room_day_rollups_add_up_and_uv_day_rollups_do_not(big_uv) -> None:  # type: ignore[no-untyped-def]
    sim = simulate_experiment(n_uvs=50_000, unit="room_day", seed=6)
    merged = running_totals(sim.daily_stats("gmv"))[-1]
    direct = sim.stats("gmv")
    for a, b in zip(merged, direct, strict=True):
        assert a.n == b.n
        assert a.sum_y2 == pytest.approx(b.sum_y2, rel=1e-9)
    # UV randomization: a returning UV's days are one unit, so squares do not add up.
    merged_uv = running_totals(big_uv.daily_stats("views"))[-1][0]
    direct_uv = big_uv.stats("views")[0]
    assert merged_uv.sum_y == pytest.approx(direct_uv.sum_y, rel=1e-9)
    assert merged_uv.n > direct_uv.n
    assert merged_uv.sum_y2 < direct_uv.sum_y2


def test_uv_day_rows_add_up_to_the_unit_aggregates() -> None:
    sim = simulate_experiment(n_uvs=30_000, unit="room", seed=7)
    rows = sim.uv_days()
    units = sim.units()
    assert rows.gmv.sum() == pytest.approx(units.gmv.sum(), rel=1e-12)
    assert rows.views.sum() == pytest.approx(units.views.sum(), rel=1e-12)
    # Every row of a room carries that room's arm.
    arm_by_room = {}
    for room, arm in zip(rows.room.tolist(), rows.arm.tolist(), strict=True):
        assert arm_by_room.setdefault(room, arm) == arm
    pre_gmv, _ = sim.pre_period()
    assert pre_gmv.size == 30_000
    assert pre_gmv.sum() == pytest.approx(units.pre_gmv.sum(), rel=1e-12)
