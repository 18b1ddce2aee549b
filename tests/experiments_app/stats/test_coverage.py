"""Interval coverage of the known true lift over repeated simulated experiments.

200 experiments per design from the realistic generator (default TrafficModel: ~2.5% buyers,
heavy-tailed GMV with coefficient of variation ~14, 80/20 split, 14 days), +4.334% true lift
on GMV.

* UV randomization, 40K UVs: Welch absolute (primary), delta-method relative and CUPED
  relative on GMV per UV.
* Room-day randomization, 150 rooms x 14 days (~2,100 room-days), 40K UVs: cluster ratio
  estimator absolute (primary), relative, and CUPED on the ratio.

Acceptance bands for a 95% interval: the primary interval of each design must land in 92-98%
(about +-2 binomial SEs at 200 runs, as the issue asks). The two secondary intervals per design
get +-3 SEs (90.5-99%): six checks at +-2 SEs would fail by chance about a quarter of the time
even for exact intervals. Measured over 2,000 runs at these sizes (SE 0.5%): UV GMV Welch
93.6%, delta 93.1%, CUPED delta 92.9%; room-day ratio 94.6%, delta 93.3%, CUPED delta 94.1%.
The slight under-coverage is the heavy tail (~200 buyers in the treatment arm), not the
variance: the reported SEs match the simulated SDs within 2%. At 10K UVs it grows (Welch
91.9%, delta 88.8%, Fieller 92.3%); see docs/STATISTICS.md.
"""

from __future__ import annotations

import numpy as np
import pytest

from experiments_app.rollups import GMV_CAP_PERCENTILE
from experiments_app.stats.readout import metric_readout
from experiments_app.stats.samples import SampleStats
from experiments_app.stats.simulation import (
    SimulatedExperiment,
    TrafficModel,
    Unit,
    simulate_experiment,
)

RUNS = 200
BANDS = {"absolute": (0.92, 0.98), "relative": (0.905, 0.99), "cuped_relative": (0.905, 0.99)}


def _coverage(unit: Unit, model: TrafficModel, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    hits = {"absolute": 0, "relative": 0, "cuped_relative": 0}
    for _ in range(RUNS):
        sim = simulate_experiment(n_uvs=40_000, unit=unit, model=model, seed=rng)
        readout = metric_readout(*sim.stats("gmv"), kind=sim.kind, cuped=True)
        truth_abs, truth_rel = sim.truth.gmv_absolute, sim.truth.gmv_relative
        hits["absolute"] += readout.absolute.ci_low <= truth_abs <= readout.absolute.ci_high
        hits["relative"] += readout.relative.ci_low <= truth_rel <= readout.relative.ci_high
        assert readout.cuped is not None
        cuped = readout.cuped.relative
        hits["cuped_relative"] += cuped.ci_low <= truth_rel <= cuped.ci_high
    return {name: count / RUNS for name, count in hits.items()}


@pytest.mark.slow
def test_welch_and_delta_cover_the_true_lift_at_uv_randomization() -> None:
    coverage = _coverage("uv", TrafficModel(), seed=101)
    print(f"UV randomization coverage over {RUNS} runs: {coverage}")
    for name, value in coverage.items():
        low, high = BANDS[name]
        assert low <= value <= high, (name, value)


@pytest.mark.slow
def test_cluster_ratio_covers_the_true_lift_at_room_day_randomization() -> None:
    coverage = _coverage("room_day", TrafficModel(rooms=150), seed=202)
    print(f"room-day randomization coverage over {RUNS} runs: {coverage}")
    for name, value in coverage.items():
        low, high = BANDS[name]
        assert low <= value <= high, (name, value)


CAPPED_RUNS = 1000
CAPPED_UVS = 12_000  # the demo's size: ~2,400 treated UVs, ~60 treated buyers


def _capped_stats(sim: SimulatedExperiment) -> tuple[SampleStats, SampleStats]:
    """The rollup's capped GMV: each UV's GMV and pre-period GMV winsorized at the 99th
    percentile of per-UV pre-period GMV over the UVs active in the pre-period
    (experiments_app.rollups.gmv_cap, checked against this formula in test_rollups)."""
    units = sim.units()
    pre_gmv, pre_views = sim.pre_period()
    cap = np.percentile(pre_gmv[(pre_gmv > 0) | (pre_views > 0)], GMV_CAP_PERCENTILE)
    y, c = np.minimum(units.gmv, cap), np.minimum(units.pre_gmv, cap)
    control, treatment = (units.arm == arm for arm in (0, 1))
    return (
        SampleStats.from_arrays(y[control], c=c[control]),
        SampleStats.from_arrays(y[treatment], c=c[treatment]),
    )


@pytest.mark.slow
def test_capped_gmv_covers_where_uncapped_gmv_does_not() -> None:
    # A/A at the demo's size (true lift 0 for both metrics, whatever the cap): the uncapped
    # relative interval covers ~90% (the heavy tail), capped GMV's the nominal 95%, and it is
    # narrower. 1,000 runs: SE 0.7%. Measured (this seed): uncapped 90.1%, CUPED 91.4%; capped
    # 94.0%, CUPED 94.7%; capped intervals 24% narrower.
    rng = np.random.default_rng(303)
    hits = {"relative": 0, "cuped": 0, "capped": 0, "capped_cuped": 0}
    widths: dict[str, list[float]] = {"relative": [], "capped": []}
    for _ in range(CAPPED_RUNS):
        sim = simulate_experiment(n_uvs=CAPPED_UVS, gmv_lift=0.0, seed=rng)
        for name, stats in (("relative", sim.stats("gmv")), ("capped", _capped_stats(sim))):
            readout = metric_readout(*stats, kind="mean", cuped=True)
            assert readout.cuped is not None
            hits[name] += readout.relative.ci_low <= 0.0 <= readout.relative.ci_high
            cuped = readout.cuped.relative
            hits[f"{name}_cuped" if name == "capped" else "cuped"] += (
                cuped.ci_low <= 0.0 <= cuped.ci_high
            )
            widths[name].append(readout.relative.ci_high - readout.relative.ci_low)
    coverage = {name: count / CAPPED_RUNS for name, count in hits.items()}
    narrower = 1 - float(np.median(widths["capped"]) / np.median(widths["relative"]))
    print(
        f"A/A coverage at {CAPPED_UVS} UVs over {CAPPED_RUNS} runs: {coverage}; "
        f"capped intervals {narrower:.0%} narrower"
    )
    assert coverage["relative"] < 0.93  # the problem capping solves, at this size
    assert 0.93 <= coverage["capped"] <= 0.97
    assert 0.93 <= coverage["capped_cuped"] <= 0.97
    assert narrower > 0.1
