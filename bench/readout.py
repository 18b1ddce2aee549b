"""A/B readout cost at the published traffic (1.58M control + 395K treatment UVs, 14 days).

Figure: ``metric_readout`` for GMV per UV and item-page views per UV, each with Welch, delta
and Fieller relative lift, CUPED, the always-valid CS, 14 per-day effects + Cochran's Q and the
14-point cumulative series, plus the SRM check - all from sufficient statistics, as the rollups
hand them over. The issue's budget is 1 s. A second figure does the same for the cluster ratio
estimator at room-day randomization.
Baseline: the Welch interval alone for the same two metrics, computed the usual way from the
raw per-UV arrays with scipy (what a readout without rollups would have to do on every view).
"""

from __future__ import annotations

import time

from scipy import stats as sps

from bench.timing import measure
from experiments_app.stats.readout import metric_readout, srm_check
from experiments_app.stats.samples import SampleStats
from experiments_app.stats.simulation import Metric, SimulatedExperiment, simulate_experiment

N_UVS = 1_975_000  # 80/20 -> ~1.58M control + ~395K treatment
METRICS: tuple[Metric, ...] = ("gmv", "views")
Pair = tuple[SampleStats, SampleStats]


def _rollups(
    sim: SimulatedExperiment,
) -> dict[Metric, tuple[Pair, list[Pair], list[Pair]]]:
    """(totals, per-day, cumulative) stats per metric: what the rollup tables would hold."""
    ratio = sim.kind == "ratio"
    daily: dict[Metric, list[Pair]] = {m: [] for m in METRICS}
    cumulative: dict[Metric, list[Pair]] = {m: [] for m in METRICS}
    for day in range(sim.model.days):
        on_day, through = sim.on_day(day), sim.through_day(day)
        for m in METRICS:
            daily[m].append(on_day.arm_stats(m, ratio=ratio))
            cumulative[m].append(through.arm_stats(m, ratio=ratio))
    return {m: (cumulative[m][-1], daily[m], cumulative[m]) for m in METRICS}


def _full_readout(sim: SimulatedExperiment, rollups, counts) -> None:  # type: ignore[no-untyped-def]
    for totals, daily, cumulative in rollups.values():
        metric_readout(
            *totals,
            kind=sim.kind,
            cuped=True,
            sequential=True,
            planned_units=sum(counts.values()),
            daily=daily,
            cumulative=cumulative,
        )
    srm_check(counts, sim.weights)


def run() -> None:
    start = time.perf_counter()
    sim = simulate_experiment(n_uvs=N_UVS, unit="uv", seed=2024)
    units = sim.units()
    counts = units.counts()
    rollups = _rollups(sim)
    print(
        f"simulated {counts['control']:,} control + {counts['treatment']:,} treatment UVs, "
        f"14 days, and rolled them up in {time.perf_counter() - start:.1f} s (setup, not timed)"
    )

    raw = {
        m: (getattr(units, m)[units.arm == 0], getattr(units, m)[units.arm == 1]) for m in METRICS
    }

    def scipy_welch_from_raw() -> None:
        for control, treatment in raw.values():
            result = sps.ttest_ind(treatment, control, equal_var=False)
            result.confidence_interval(0.95)

    baseline = measure(
        "baseline: scipy Welch on raw per-UV arrays (2 metrics)",
        scipy_welch_from_raw,
        calls=20,
        warmup=2,
    )
    figure = measure(
        "readout from rollups: 2 metrics, CUPED, CS, 14 days, SRM",
        lambda: _full_readout(sim, rollups, counts),
        calls=50,
        warmup=5,
    )
    print(baseline.line())
    print(figure.line())

    # Same numbers both ways: the rollup readout is not an approximation.
    for m, (control, treatment) in raw.items():
        readout = metric_readout(*rollups[m][0], kind="mean")
        ref = sps.ttest_ind(treatment, control, equal_var=False).confidence_interval(0.95)
        drift = max(
            abs(readout.absolute.ci_low - ref.low), abs(readout.absolute.ci_high - ref.high)
        )
        headline = metric_readout(*rollups[m][0], kind="mean", cuped=True).headline_relative
        print(
            f"{m:>5}: relative lift {headline.estimate:+.3%} "
            f"[{headline.ci_low:+.3%}, {headline.ci_high:+.3%}] (CUPED, true "
            f"{sim.truth.relative(m):+.3%}); Welch CI vs scipy on raw: max |diff| {drift:.1e}"
        )

    start = time.perf_counter()
    clustered = simulate_experiment(n_uvs=N_UVS, unit="room_day", seed=2025)
    cluster_counts = clustered.units().counts()
    cluster_rollups = _rollups(clustered)
    setup_s = time.perf_counter() - start
    ratio_figure = measure(
        "same readout, cluster ratio at room-day units",
        lambda: _full_readout(clustered, cluster_rollups, cluster_counts),
        calls=50,
        warmup=5,
    )
    print(ratio_figure.line())
    print(
        f"room-day run: {cluster_counts['control'] + cluster_counts['treatment']:,} room-days "
        f"for the same {N_UVS:,} UVs (setup {setup_s:.1f} s, not timed)"
    )
    print(
        f"full readout p50 {figure.p50_us / 1e3:.1f} ms vs the 1 s budget; "
        f"{baseline.p50_us / figure.p50_us:.1f}x faster than the scipy-on-raw Welch baseline "
        f"that computes only the two Welch intervals"
    )
