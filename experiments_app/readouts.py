"""The experiment readout, computed from the rollups' sufficient statistics.

Reads ``ArmDayStats`` (a few rows per arm and day), turns them into
:class:`experiments_app.stats.samples.SampleStats` and calls the pure statistics package:
``metric_readout`` per (metric, treatment arm vs control) with CUPED, the per-day effects with
Cochran's Q and the cumulative series; ``srm_check`` on unit counts; Holm across the
comparisons. Guardrails come from the experiment's live replies. Nothing here scans events,
so the readout costs milliseconds whatever the traffic.

Phases: units belong to the cohort of the phase in which they were first assigned. Cohorts
with identical weights are pooled (disjoint units, same assignment probabilities); cohorts
with other weights are analysed separately - pooling them would weight the arms' cohorts
differently and could bias the comparison (Simpson's paradox). ``phase=N`` picks the group
that holds phase N; the default is the current phase's group.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from django.db import connection
from django.db.models import Count, Q, Sum

from experiments_app.models import (
    ArmDayStats,
    Experiment,
    ExperimentArm,
    ExperimentPhase,
    ExperimentRollup,
    LiveReply,
)
from experiments_app.services import GUARDRAIL_METRICS, percent
from experiments_app.stats.readout import (
    MetricReadout,
    adjusted_p_values,
    metric_readout,
    srm_check,
)
from experiments_app.stats.samples import SampleStats
from experiments_app.stats.srm import SrmResult

METRIC_LABELS = dict(Experiment.Metric.choices)
# Which way is better, per metric: the page colours a significant lift by whether it helps
# (green) or hurts (red), not by significance alone. Both outcome metrics are "more is
# better"; the guardrails (latency, fallback and hook-block rates, tokens) are all "less is
# better", which is how ``guardrail_results`` reads a breach (treatment above control).
HIGHER_IS_BETTER = {metric.value: True for metric in Experiment.Metric}
_SUM_FIELDS = (
    "sum_y",
    "sum_y2",
    "sum_x",
    "sum_x2",
    "sum_xy",
    "sum_c",
    "sum_c2",
    "sum_yc",
    "sum_xc",
)


@dataclass(frozen=True)
class PhaseGroup:
    """Phases whose cohorts share one set of weights (pooled in one analysis)."""

    numbers: tuple[int, ...]
    weights: dict[int, int]  # arm id -> share out of 10,000
    phase_ids: tuple[int, ...]

    @property
    def label(self) -> str:
        numbers = ", ".join(str(n) for n in self.numbers)
        return f"phase{'s' if len(self.numbers) > 1 else ''} {numbers}"


@dataclass(frozen=True)
class Comparison:
    arm: ExperimentArm
    readout: MetricReadout
    p_holm: float


@dataclass(frozen=True)
class MetricResult:
    metric: str
    label: str
    primary: bool
    control_mean: float
    comparisons: tuple[Comparison, ...]
    higher_is_better: bool = True


@dataclass(frozen=True)
class ArmCount:
    arm: ExperimentArm
    weight: int
    units: int
    uvs: float


@dataclass(frozen=True)
class GuardrailValue:
    arm: ExperimentArm
    replies: int
    value: float


@dataclass(frozen=True)
class GuardrailResult:
    metric: str
    label: str
    tolerance: float
    values: tuple[GuardrailValue, ...]
    breaches: tuple[str, ...]  # banner lines; empty when within tolerance

    @property
    def breached(self) -> bool:
        return bool(self.breaches)


@dataclass
class Readout:
    experiment: Experiment
    arms: list[ExperimentArm]
    group: PhaseGroup | None
    groups: list[PhaseGroup]
    phases: list[ExperimentPhase]
    kind: str
    days: list[date] = field(default_factory=list)
    counts: list[ArmCount] = field(default_factory=list)
    srm: SrmResult | None = None
    metrics: list[MetricResult] = field(default_factory=list)
    guardrails: list[GuardrailResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    refreshed_at: Any = None  # when the rollups last changed this experiment's numbers
    checked_at: Any = None  # when the rollup runner last ran over it (None: not since start)

    @property
    def control(self) -> ExperimentArm:
        return self.arms[0]

    @property
    def has_data(self) -> bool:
        return bool(self.days) and sum(c.units for c in self.counts) > 0


def phase_groups(phases: Sequence[ExperimentPhase]) -> list[PhaseGroup]:
    groups: dict[tuple[tuple[str, int], ...], list[ExperimentPhase]] = {}
    for phase in phases:
        key = tuple(sorted((k, int(v)) for k, v in phase.weights.items()))
        groups.setdefault(key, []).append(phase)
    out = [
        PhaseGroup(
            numbers=tuple(p.number for p in members),
            weights={int(k): v for k, v in key},
            phase_ids=tuple(p.pk for p in members),
        )
        for key, members in groups.items()
    ]
    return sorted(out, key=lambda g: g.numbers[0])


def _stats(values: dict[str, float], n: int, kind: str, cuped: bool) -> SampleStats:
    fields_: dict[str, Any] = {"n": n, "sum_y": values["sum_y"], "sum_y2": values["sum_y2"]}
    if kind == "ratio":
        fields_.update(sum_x=values["sum_x"], sum_x2=values["sum_x2"], sum_xy=values["sum_xy"])
    if cuped:
        fields_.update(sum_c=values["sum_c"], sum_c2=values["sum_c2"], sum_yc=values["sum_yc"])
        if kind == "ratio":
            fields_["sum_xc"] = values["sum_xc"]
    return SampleStats(**fields_)


class _Sums:
    """ArmDayStats rows of the analysed cohorts, merged over phases (disjoint units)."""

    def __init__(self, rows: Sequence[ArmDayStats]) -> None:
        self.n: dict[tuple[str, date, int, str], int] = defaultdict(int)
        self.sums: dict[tuple[str, date, int, str], dict[str, float]] = defaultdict(
            lambda: dict.fromkeys(_SUM_FIELDS, 0.0)
        )
        for row in rows:
            key = (row.scope, row.day, row.arm_id, row.metric)
            self.n[key] += row.n
            target = self.sums[key]
            for name in _SUM_FIELDS:
                target[name] += getattr(row, name)

    def stats(
        self, scope: str, day: date, arm_id: int, metric: str, kind: str, cuped: bool
    ) -> SampleStats:
        key = (scope, day, arm_id, metric)
        return _stats(self.sums[key], self.n.get(key, 0), kind, cuped)

    def days(self, scope: str) -> list[date]:
        return sorted({key[1] for key in self.n if key[0] == scope})


def experiment_readout(*, experiment: Experiment, phase: int | None = None) -> Readout:
    """The readout of ``experiment`` (the cohort group of phase ``phase``, default: current)."""
    arms = list(
        ExperimentArm.objects.filter(experiment=experiment)
        .select_related("harness_version__harness", "endpoint")
        .defer("harness_version__content")
        .order_by("position")
    )
    phases = list(ExperimentPhase.objects.filter(experiment=experiment).order_by("number"))
    groups = phase_groups(phases)
    kind = experiment.metric_kind
    readout = Readout(
        experiment=experiment, arms=arms, group=None, groups=groups, phases=phases, kind=kind
    )
    rollup = ExperimentRollup.objects.filter(experiment=experiment).first()
    readout.refreshed_at = rollup.refreshed_at if rollup else None
    readout.checked_at = rollup.checked_at if rollup else None
    if not groups or len(arms) < 2:
        readout.notes.append("No data yet: the experiment has not started.")
        return readout
    wanted = phase if phase is not None else phases[-1].number
    group = next((g for g in groups if wanted in g.numbers), groups[-1])
    readout.group = group
    readout.notes += _phase_notes(experiment, phases, groups, group)
    sums = _Sums(
        list(ArmDayStats.objects.filter(experiment_id=experiment.pk, phase_id__in=group.phase_ids))
    )
    cumulative_days = sums.days("cumulative")
    if not cumulative_days:
        readout.notes.append("No exposures rolled up yet for these phases.")
        readout.guardrails = guardrail_results(experiment, arms)
        return readout
    assert experiment.started_at is not None
    start = experiment.started_at.date()
    last = cumulative_days[-1]
    days = [start + timedelta(days=i) for i in range((last - start).days + 1)]
    readout.days = days
    cuped = experiment.cuped
    control = arms[0]
    readout.counts = [
        ArmCount(
            arm=arm,
            weight=group.weights.get(arm.pk, 0),
            units=sums.n.get(("cumulative", last, arm.pk, "gmv"), 0),
            uvs=sums.sums[("cumulative", last, arm.pk, "gmv")]["sum_x"],
        )
        for arm in arms
    ]
    observed = {c.arm.name: c.units for c in readout.counts}
    if sum(observed.values()) > 0 and all(c.weight > 0 for c in readout.counts):
        readout.srm = srm_check(observed, {c.arm.name: c.weight for c in readout.counts})
    planned = experiment.planned_units if experiment.sequential else None
    metric_names = [experiment.primary_metric, *experiment.secondary_metrics]
    readouts: dict[str, MetricReadout] = {}
    for metric in metric_names:
        for arm in arms[1:]:
            daily = [
                (
                    sums.stats("daily", d, control.pk, metric, kind, cuped),
                    sums.stats("daily", d, arm.pk, metric, kind, cuped),
                )
                for d in days
            ]
            cumulative = [
                (
                    sums.stats("cumulative", d, control.pk, metric, kind, cuped),
                    sums.stats("cumulative", d, arm.pk, metric, kind, cuped),
                )
                for d in days
            ]
            readouts[f"{metric}|{arm.pk}"] = metric_readout(
                cumulative[-1][0],
                cumulative[-1][1],
                kind="mean" if kind == "mean" else "ratio",
                cuped=cuped,
                sequential=planned is not None,
                alpha=experiment.alpha,
                planned_units=planned,
                daily=daily,
                cumulative=cumulative,
                cumulative_cs_units=cumulative[-1][0].n + cumulative[-1][1].n,
            )
    holm = adjusted_p_values(readouts, method="holm")
    for metric in metric_names:
        comparisons = tuple(
            Comparison(arm, readouts[f"{metric}|{arm.pk}"], holm[f"{metric}|{arm.pk}"])
            for arm in arms[1:]
        )
        readout.metrics.append(
            MetricResult(
                metric=metric,
                label=METRIC_LABELS.get(metric, metric),
                primary=metric == experiment.primary_metric,
                control_mean=comparisons[0].readout.absolute.control_mean,
                comparisons=comparisons,
                higher_is_better=HIGHER_IS_BETTER.get(metric, True),
            )
        )
    if Experiment.Metric.GMV_CAPPED in metric_names:
        readout.notes.append(_gmv_cap_note(rollup.gmv_cap if rollup else None))
    readout.guardrails = guardrail_results(experiment, arms)
    return readout


def _gmv_cap_note(cap: float | None) -> str:
    if cap is None:
        return (
            "Capped GMV: no cap could be set (no GMV among the rooms' UVs in the 14 days before "
            "the start), so it equals uncapped GMV here."
        )
    return (
        f"Capped GMV: each UV's GMV counts at most {cap:,.2f}, the 99th percentile of per-UV "
        "GMV in the rooms' 14 days before the start (the same cap for every arm, fixed before "
        "any outcome). It estimates the effect on capped GMV: it tames the heavy tail that "
        "makes uncapped intervals too short, and attenuates an effect carried by big spenders."
    )


def _phase_notes(
    experiment: Experiment,
    phases: Sequence[ExperimentPhase],
    groups: Sequence[PhaseGroup],
    group: PhaseGroup,
) -> list[str]:
    notes = []
    for phase in phases:
        when = phase.started_at.strftime("%Y-%m-%d %H:%M UTC")
        notes.append(f"Phase {phase.number} from {when}: {phase.note}.")
    if len(groups) > 1:
        others = [g.label for g in groups if g is not group]
        notes.append(
            f"This readout analyses the units first assigned in {group.label} (weights "
            + " / ".join(percent(w) for w in group.weights.values())
            + f"). Units of {', '.join(others)} had other weights and are analysed separately: "
            "pooling cohorts with different weights could bias the comparison."
        )
    elif len(phases) > 1:
        notes.append(
            f"All phases share the same weights: their cohorts are pooled ({group.label})."
        )
    if experiment.unit == Experiment.Unit.UV:
        notes.append(
            "Randomized by UV: replies are broadcast to the whole room, so viewers also see the "
            "other arm's replies; the measured effect is diluted toward zero."
        )
    elif experiment.unit == Experiment.Unit.ROOM_DAY:
        notes.append(
            "Randomized by room-day: metrics are per daily UV (ratio estimator over room-days); "
            "the analysis assumes no carry-over from one day's arm to the next."
        )
    else:
        notes.append(
            "Randomized by room: metrics are per UV with the cluster ratio estimator; the "
            "interval is driven by the number of rooms, not of viewers."
        )
    return notes


# --- guardrails ------------------------------------------------------------------------------


def guardrail_values(experiment: Experiment) -> dict[int, dict[str, float | int]]:
    """Per arm id: replies, p95 latency (ms), fallback rate, hook-block rate, tokens per UV."""
    replies = LiveReply.objects.filter(
        experiment=experiment, status=LiveReply.Status.DONE, experiment_arm__isnull=False
    )
    out: dict[int, dict[str, float | int]] = {}
    for row in replies.values("experiment_arm_id").annotate(
        replies=Count("id"),
        fallbacks=Count("id", filter=Q(fallback=True)),
        blocked=Count("id", filter=Q(hook_blocked=True)),
        tokens=Sum("prompt_tokens") + Sum("completion_tokens"),
        uvs=Count("uv_id", distinct=True),
    ):
        n = int(row["replies"])
        out[int(row["experiment_arm_id"])] = {
            "replies": n,
            "fallback_rate": row["fallbacks"] / n if n else math.nan,
            "hook_block_rate": row["blocked"] / n if n else math.nan,
            "tokens_per_uv": (row["tokens"] or 0) / row["uvs"] if row["uvs"] else math.nan,
            "latency_p95_ms": math.nan,
        }
    for arm_id, p95 in _latency_p95(experiment).items():
        if arm_id in out:
            out[arm_id]["latency_p95_ms"] = p95
    return out


def _latency_p95(experiment: Experiment) -> dict[int, float]:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT experiment_arm_id, percentile_cont(0.95) WITHIN GROUP "
                f"(ORDER BY latency_ms) FROM {LiveReply._meta.db_table} "
                "WHERE experiment_id = %s AND status = 'done' AND latency_ms IS NOT NULL "
                "AND experiment_arm_id IS NOT NULL GROUP BY experiment_arm_id",
                [experiment.pk],
            )
            return {int(arm): float(p95) for arm, p95 in cursor.fetchall()}
    values: dict[int, list[float]] = defaultdict(list)
    for arm, latency in LiveReply.objects.filter(
        experiment=experiment, status=LiveReply.Status.DONE, latency_ms__isnull=False
    ).values_list("experiment_arm_id", "latency_ms"):
        if arm is not None and latency is not None:
            values[int(arm)].append(float(latency))
    return {arm: _percentile(sorted(v), 0.95) for arm, v in values.items()}


def _percentile(ordered: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (PostgreSQL's percentile_cont)."""
    if not ordered:
        return math.nan
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def guardrail_results(
    experiment: Experiment, arms: Sequence[ExperimentArm]
) -> list[GuardrailResult]:
    if not experiment.guardrails:
        return []
    values = guardrail_values(experiment)
    control = arms[0]
    results = []
    for guard in experiment.guardrails:
        metric = guard["metric"]
        tolerance = float(guard["tolerance"])
        per_arm = tuple(
            GuardrailValue(
                arm,
                int(values.get(arm.pk, {}).get("replies", 0)),
                float(values.get(arm.pk, {}).get(metric, math.nan)),
            )
            for arm in arms
        )
        base = per_arm[0].value
        breaches = []
        for item in per_arm[1:]:
            if not (math.isfinite(base) and math.isfinite(item.value)):
                continue
            limit = base * (1 + tolerance) if base > 0 else tolerance
            if item.value > limit:
                change = f"{item.value / base - 1:+.1%}" if base > 0 else "from 0"
                breaches.append(
                    f"{GUARDRAIL_METRICS[metric]}: {item.arm.name} {_fmt(metric, item.value)} vs "
                    f"{control.name} {_fmt(metric, base)} ({change}; tolerance +{tolerance:.0%})"
                )
        results.append(
            GuardrailResult(metric, GUARDRAIL_METRICS[metric], tolerance, per_arm, tuple(breaches))
        )
    return results


def _fmt(metric: str, value: float) -> str:
    if metric == "latency_p95_ms":
        return f"{value / 1000:.2f} s"
    if metric.endswith("_rate"):
        return f"{value:.1%}"
    return f"{value:.0f}"
