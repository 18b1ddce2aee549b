"""simulate_traffic -> ingestion -> rollups -> readout recovers, to 1e-9 relative, the numbers
the statistics package computes directly on the simulated per-unit data.

The reference side never touches the database: it aggregates the simulation's UV-day rows per
randomization unit with numpy (amounts in cents, as they were sent), builds SampleStats from
the arrays, and calls ``metric_readout`` itself.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from experiments_app.readouts import experiment_readout
from experiments_app.stats.mean_effects import Effect
from experiments_app.stats.readout import MetricReadout, metric_readout, srm_check
from experiments_app.stats.samples import SampleStats
from experiments_app.traffic_simulation import TrafficPlan, simulate_traffic
from tests.factories import RoomFactory

pytestmark = pytest.mark.django_db
RTOL = 1e-9


def _unit_stats(plan: TrafficPlan, mask: np.ndarray, metric: str, *, daily: bool, ratio: bool):  # type: ignore[no-untyped-def]
    """(control, treatment) SampleStats over the units of the masked UV-day rows."""
    rows = plan.sim.uv_days()
    unit = plan.row_unit[mask]
    uv = rows.uv[mask]
    y_row = plan.gmv_cents[mask] / 100 if metric == "gmv" else rows.views[mask]
    pre_gmv, pre_views = plan.sim.pre_period()
    pre = np.rint(pre_gmv * 100) / 100 if metric == "gmv" else pre_views
    units, inverse = np.unique(unit, return_inverse=True)
    y = np.bincount(inverse, weights=y_row, minlength=units.size)
    if daily:  # each row is a distinct UV active that day
        x = np.bincount(inverse, minlength=units.size).astype(float)
        c = np.bincount(inverse, weights=pre[uv], minlength=units.size)
    else:  # distinct UVs of the unit so far
        pairs = np.unique(np.stack([inverse, uv]), axis=1)
        x = np.bincount(pairs[0], minlength=units.size).astype(float)
        c = np.bincount(pairs[0], weights=pre[pairs[1]], minlength=units.size)
    arm = plan.unit_arm_index[units]
    out = []
    for a in (0, 1):
        keep = arm == a
        out.append(SampleStats.from_arrays(y[keep], x=x[keep] if ratio else None, c=c[keep]))
    return out[0], out[1]


def _reference(plan: TrafficPlan, metric: str, ratio: bool) -> MetricReadout:
    rows = plan.sim.uv_days()
    covered = plan.unit_arm_index[plan.row_unit] >= 0
    days = range(plan.days)
    daily = [
        _unit_stats(plan, covered & (rows.day == d), metric, daily=True, ratio=ratio) for d in days
    ]
    cumulative = [
        _unit_stats(plan, covered & (rows.day <= d), metric, daily=False, ratio=ratio) for d in days
    ]
    return metric_readout(
        *cumulative[-1],
        kind="ratio" if ratio else "mean",
        cuped=True,
        daily=daily,
        cumulative=cumulative,
    )


def _same(ours: Effect, ref: Effect) -> None:
    for name in ("estimate", "ci_low", "ci_high", "p_value", "std_error", "control_mean"):
        a, b = getattr(ours, name), getattr(ref, name)
        assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=RTOL), name
    assert (ours.control_n, ours.treatment_n) == (ref.control_n, ref.treatment_n)


@pytest.mark.parametrize(
    ("unit", "rooms", "uvs"), [("uv", 1, 3000), ("room_day", 6, 3000), ("room", 12, 4000)]
)
def test_readout_from_rollups_equals_stats_on_simulated_units(  # type: ignore[no-untyped-def]
    unit, rooms, uvs, published_room, merchant, make_experiment
):
    # given a running experiment with simulated traffic sent through ingestion and rollups
    all_rooms = [published_room] + [
        RoomFactory(owner=merchant, name=f"Room {i}") for i in range(rooms - 1)
    ]
    experiment = make_experiment(
        all_rooms, unit=unit, weights=(5000, 5000), secondary_metrics=["views"]
    )
    summary = simulate_traffic(experiment=experiment, uvs=uvs, days=5, lift=0.2, seed=11)
    assert summary.rejected == 0 and summary.duplicate == 0
    # when the readout is computed from the rollups
    readout = experiment_readout(experiment=experiment)
    # then every number equals the reference computed on the per-unit arrays
    ratio = unit != "uv"
    assert readout.kind == ("ratio" if ratio else "mean")
    assert len(readout.days) == 5
    for result in readout.metrics:
        ours = result.comparisons[0].readout
        ref = _reference(summary.plan, result.metric, ratio)
        _same(ours.absolute, ref.absolute)
        _same(ours.relative, ref.relative)
        assert ours.cuped is not None and ref.cuped is not None
        _same(ours.cuped.absolute, ref.cuped.absolute)
        _same(ours.cuped.relative, ref.cuped.relative)
        assert ours.cuped.theta == pytest.approx(ref.cuped.theta, rel=RTOL)
        assert ours.daily is not None and ref.daily is not None
        for mine, theirs in zip(ours.daily.days, ref.daily.days, strict=True):
            _same(mine.relative, theirs.relative)
        for mine_c, theirs_c in zip(ours.daily.cumulative, ref.daily.cumulative, strict=True):
            _same(mine_c.relative, theirs_c.relative)
        assert ours.daily.heterogeneity.q == pytest.approx(ref.daily.heterogeneity.q, rel=RTOL)
    # and the SRM check counts randomization units
    control, treatment = _reference(summary.plan, "gmv", ratio).absolute.control_n, None
    treatment = _reference(summary.plan, "gmv", ratio).absolute.treatment_n
    assert [c.units for c in readout.counts] == [control, treatment]
    expected = srm_check({"c": control, "t": treatment}, {"c": 1, "t": 1})
    assert readout.srm is not None
    assert readout.srm.p_value == pytest.approx(expected.p_value, rel=RTOL)
