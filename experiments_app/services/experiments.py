"""Writes for experiments: create / edit a draft, start, stop, change the allocation.

Every function validates first and raises :class:`ExperimentConfigError` with field-level
errors before touching the database, inside one transaction, so a refused request changes
nothing. Weights and coverage are integers out of 10,000 (basis points; 80% = 8000).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from experiments_app.assignment import BUCKETS, ranges_overlap
from experiments_app.models import (
    Experiment,
    ExperimentArm,
    ExperimentPhase,
    ExperimentRollup,
)
from experiments_app.routing import invalidate_running_experiments
from experiments_app.selectors.promotion import PromotionReport, promotion_report
from harness_app.models import HarnessVersion, Room
from training_app.models import ModelEndpoint

MAX_ARMS = 8
GUARDRAIL_METRICS = {
    "latency_p95_ms": "p95 reply latency",
    "fallback_rate": "fallback rate",
    "hook_block_rate": "hook-block rate",
    "tokens_per_uv": "tokens per UV",
}
METRICS = tuple(Experiment.Metric.values)


class ExperimentConfigError(Exception):
    """Invalid configuration or state; ``errors`` are (field, message) pairs."""

    def __init__(self, errors: Sequence[tuple[str, str]]) -> None:
        self.errors = list(errors)
        first_field, first_message = self.errors[0] if self.errors else ("", "invalid")
        super().__init__(f"{first_field}: {first_message}" if first_field else first_message)


@dataclass(frozen=True)
class ArmSpec:
    name: str
    kind: str
    harness_version: HarnessVersion
    endpoint: ModelEndpoint
    weight: int


@dataclass(frozen=True)
class ExperimentSpec:
    """Everything an operator configures (creating or editing a draft)."""

    name: str
    rooms: Sequence[Room]
    arms: Sequence[ArmSpec]
    unit: str = Experiment.Unit.UV
    hypothesis: str = ""
    primary_metric: str = Experiment.Metric.GMV
    secondary_metrics: Sequence[str] = ()
    guardrails: Sequence[dict[str, Any]] = ()
    coverage: int = BUCKETS
    layer: str = "default"
    layer_start: int = 0
    layer_end: int = BUCKETS
    cuped: bool = True
    sequential: bool = False
    planned_units: int | None = None
    alpha: float = 0.05


def percent(basis_points: int) -> str:
    """8000 -> '80%', 3333 -> '33.33%'."""
    return f"{basis_points / 100:.2f}".rstrip("0").rstrip(".") + "%"


def validate_spec(spec: ExperimentSpec) -> list[tuple[str, str]]:
    errors: list[tuple[str, str]] = []
    if not spec.name.strip():
        errors.append(("name", "give the experiment a name"))
    if not spec.rooms:
        errors.append(("rooms", "choose at least one room"))
    if spec.unit not in Experiment.Unit.values:
        errors.append(("unit", f"must be one of {', '.join(Experiment.Unit.values)}"))
    if spec.primary_metric not in METRICS:
        errors.append(("primary_metric", f"must be one of {', '.join(METRICS)}"))
    for metric in spec.secondary_metrics:
        if metric not in METRICS:
            errors.append(("secondary_metrics", f"unknown metric {metric!r}"))
        elif metric == spec.primary_metric:
            errors.append(("secondary_metrics", f"{metric!r} is already the primary metric"))
    if spec.unit != Experiment.Unit.UV:
        capped = Experiment.Metric.GMV_CAPPED.value
        if spec.primary_metric == capped:
            errors.append(("primary_metric", f"{capped!r} caps each UV's GMV: UV unit only"))
        if capped in spec.secondary_metrics:
            errors.append(("secondary_metrics", f"{capped!r} caps each UV's GMV: UV unit only"))
    seen_guardrails: set[str] = set()
    for i, guard in enumerate(spec.guardrails):
        metric = str(guard.get("metric"))
        if metric not in GUARDRAIL_METRICS:
            errors.append(
                (f"guardrails[{i}].metric", f"must be one of {', '.join(GUARDRAIL_METRICS)}")
            )
        elif metric in seen_guardrails:
            errors.append((f"guardrails[{i}].metric", f"{metric!r} is listed twice"))
        seen_guardrails.add(metric)
        tolerance = guard.get("tolerance")
        if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or tolerance < 0:
            errors.append(
                (f"guardrails[{i}].tolerance", "a relative increase >= 0, e.g. 0.2 for +20%")
            )
    if not 1 <= spec.coverage <= BUCKETS:
        errors.append(("coverage", "must be between 0.01% and 100%"))
    if not 0 <= spec.layer_start < spec.layer_end <= BUCKETS:
        errors.append(("layer_end", f"the layer range must satisfy 0 <= start < end <= {BUCKETS}"))
    if not 0 < spec.alpha < 0.5:
        errors.append(("alpha", "must be in (0, 0.5)"))
    if spec.sequential and not spec.planned_units:
        errors.append(
            ("planned_units", "sequential intervals need the planned number of units, fixed now")
        )
    errors.extend(_validate_arms(spec))
    return errors


def _validate_arms(spec: ExperimentSpec) -> list[tuple[str, str]]:
    errors: list[tuple[str, str]] = []
    if not 2 <= len(spec.arms) <= MAX_ARMS:
        errors.append(("arms", f"an experiment needs 2 to {MAX_ARMS} arms, got {len(spec.arms)}"))
        return errors
    names = [arm.name for arm in spec.arms]
    room_ids = {room.pk for room in spec.rooms}
    for i, arm in enumerate(spec.arms):
        if names.count(arm.name) > 1:
            errors.append((f"arms[{i}].name", f"arm name {arm.name!r} is used twice"))
        if arm.kind not in ExperimentArm.Kind.values:
            errors.append((f"arms[{i}].kind", "must be 'react' or 'harness'"))
        if not 1 <= arm.weight <= BUCKETS:
            errors.append((f"arms[{i}].weight", "each weight must be between 0.01% and 100%"))
        version_room = arm.harness_version.harness.room_id
        if room_ids and version_room not in room_ids:
            errors.append(
                (
                    f"arms[{i}].harness_version",
                    f"version {arm.harness_version.number} belongs to another room's harness; "
                    "pin a version of one of this experiment's rooms",
                )
            )
    total = sum(arm.weight for arm in spec.arms)
    if total != BUCKETS:
        errors.append(
            (
                "arms",
                f"weights sum to {percent(total)} "
                f"({' + '.join(percent(a.weight) for a in spec.arms)}); they must sum to 100%",
            )
        )
    return errors


def _raise_if(errors: list[tuple[str, str]]) -> None:
    if errors:
        raise ExperimentConfigError(errors)


@transaction.atomic
def experiment_create(*, spec: ExperimentSpec, created_by: Any) -> Experiment:
    _raise_if(validate_spec(spec))
    experiment = Experiment(
        created_by=created_by,
        arm_salt=secrets.token_hex(16),
        coverage_salt=secrets.token_hex(16),
    )
    _apply(experiment, spec)
    return experiment


@transaction.atomic
def experiment_update(*, experiment: Experiment, spec: ExperimentSpec) -> Experiment:
    """Edit a draft (a running experiment changes only through a new phase)."""
    locked = Experiment.objects.select_for_update().get(pk=experiment.pk)
    if locked.status != Experiment.Status.DRAFT:
        raise ExperimentConfigError(
            [("status", f"only drafts can be edited; this experiment is {locked.status}")]
        )
    _raise_if(validate_spec(spec))
    locked.arms.all().delete()
    _apply(locked, spec)
    return locked


def _apply(experiment: Experiment, spec: ExperimentSpec) -> None:
    experiment.name = spec.name.strip()
    experiment.hypothesis = spec.hypothesis
    experiment.unit = spec.unit
    experiment.primary_metric = spec.primary_metric
    experiment.secondary_metrics = list(spec.secondary_metrics)
    experiment.guardrails = [
        {"metric": g["metric"], "tolerance": float(g["tolerance"])} for g in spec.guardrails
    ]
    experiment.coverage = spec.coverage
    experiment.layer = spec.layer
    experiment.layer_start = spec.layer_start
    experiment.layer_end = spec.layer_end
    experiment.cuped = spec.cuped
    experiment.sequential = spec.sequential
    experiment.planned_units = spec.planned_units
    experiment.alpha = spec.alpha
    experiment.save()
    experiment.rooms.set(spec.rooms)
    ExperimentArm.objects.bulk_create(
        ExperimentArm(
            experiment=experiment,
            name=arm.name,
            position=i,
            kind=arm.kind,
            harness_version=arm.harness_version,
            endpoint=arm.endpoint,
            weight=arm.weight,
        )
        for i, arm in enumerate(spec.arms)
    )


@transaction.atomic
def experiment_start(*, experiment: Experiment) -> Experiment:
    """Start a draft: every arm must run a published harness version on an active endpoint,
    a trained checkpoint must pass the promotion gate (``selectors.promotion``), and no other
    running experiment may share a room unless the two are mutually exclusive (same layer and
    unit, disjoint bucket ranges)."""
    locked = Experiment.objects.select_for_update().get(pk=experiment.pk)
    if locked.status != Experiment.Status.DRAFT:
        raise ExperimentConfigError(
            [("status", f"only a draft can be started; this experiment is {locked.status}")]
        )
    rooms = list(Room.objects.select_for_update().filter(experiments=locked).order_by("pk"))
    arms = list(
        locked.arms.select_related("harness_version__harness", "endpoint").order_by("position")
    )
    errors: list[tuple[str, str]] = []
    if not rooms:
        errors.append(("rooms", "choose at least one room"))
    if sum(arm.weight for arm in arms) != BUCKETS:
        errors.append(("arms", "weights must sum to 100%"))
    for arm in arms:
        version = arm.harness_version
        if version.published_at is None:
            errors.append(
                (
                    f"arms[{arm.position}].harness_version",
                    f"arm {arm.name!r} pins version {version.number} of harness "
                    f"{version.harness.name!r}, which was never published; publish it first "
                    "(only published versions may serve live traffic)",
                )
            )
        if not arm.endpoint.is_active:
            errors.append(
                (
                    f"arms[{arm.position}].endpoint",
                    f"arm {arm.name!r} uses endpoint {arm.endpoint.name!r}, which is inactive",
                )
            )
    errors.extend(_promotion_errors(arms, rooms))
    errors.extend(_overlap_errors(locked, rooms))
    _raise_if(errors)
    now = timezone.now()
    locked.status = Experiment.Status.RUNNING
    locked.started_at = now
    locked.save(update_fields=["status", "started_at", "updated_at"])
    ExperimentPhase.objects.create(
        experiment=locked,
        number=1,
        coverage=locked.coverage,
        weights={str(arm.pk): arm.weight for arm in arms},
        note=f"started: {_describe(arms, {a.pk: a.weight for a in arms})}, "
        f"coverage {percent(locked.coverage)}",
        started_at=now,
    )
    ExperimentRollup.objects.update_or_create(
        experiment=locked, defaults={"full_refresh_needed": True}
    )
    transaction.on_commit(invalidate_running_experiments)
    return locked


def _promotion_errors(arms: list[ExperimentArm], rooms: list[Room]) -> list[tuple[str, str]]:
    """A trained checkpoint backs an arm only through the promotion gate (one error per
    failed condition, naming the arm's endpoint)."""
    errors: list[tuple[str, str]] = []
    reports: dict[int, PromotionReport] = {}
    for arm in arms:
        if arm.endpoint_id not in reports:
            reports[arm.endpoint_id] = promotion_report(arm.endpoint, rooms)
        errors.extend(
            (
                f"arms[{arm.position}].endpoint",
                f"arm {arm.name!r}: trained checkpoint {arm.endpoint.name!r} fails the "
                f"promotion gate ({condition.name}): {condition.detail}",
            )
            for condition in reports[arm.endpoint_id].failed
        )
    return errors


def _overlap_errors(experiment: Experiment, rooms: list[Room]) -> list[tuple[str, str]]:
    errors = []
    others = (
        Experiment.objects.filter(status=Experiment.Status.RUNNING, rooms__in=rooms)
        .exclude(pk=experiment.pk)
        .distinct()
        .prefetch_related("rooms")
    )
    for other in others:
        shared = ", ".join(sorted(r.name for r in other.rooms.all() if r in rooms))
        exclusive = (
            other.layer == experiment.layer
            and other.unit == experiment.unit
            and not ranges_overlap(
                (other.layer_start, other.layer_end),
                (experiment.layer_start, experiment.layer_end),
            )
        )
        if not exclusive:
            errors.append(
                (
                    "rooms",
                    f"room(s) {shared} already run experiment {other.name!r} (layer "
                    f"{other.layer!r}, buckets [{other.layer_start}, {other.layer_end}), unit "
                    f"{other.unit}); a reply can come from one arm only, so put both in the same "
                    "layer and unit with disjoint bucket ranges, or stop it first",
                )
            )
    return errors


def _describe(arms: Sequence[ExperimentArm], weights: dict[int, int]) -> str:
    return " / ".join(f"{arm.name} {percent(weights[arm.pk])}" for arm in arms)


@transaction.atomic
def experiment_stop(*, experiment: Experiment) -> Experiment:
    locked = Experiment.objects.select_for_update().get(pk=experiment.pk)
    if locked.status != Experiment.Status.RUNNING:
        raise ExperimentConfigError(
            [("status", f"only a running experiment can be stopped; this one is {locked.status}")]
        )
    now = timezone.now()
    locked.status = Experiment.Status.STOPPED
    locked.stopped_at = now
    locked.save(update_fields=["status", "stopped_at", "updated_at"])
    ExperimentPhase.objects.filter(experiment=locked, ended_at__isnull=True).update(ended_at=now)
    transaction.on_commit(invalidate_running_experiments)
    return locked


@transaction.atomic
def experiment_change_allocation(
    *, experiment: Experiment, weights: dict[str, int] | None = None, coverage: int | None = None
) -> ExperimentPhase:
    """New weights (by arm name) and/or coverage for a running experiment: a new phase.

    Units already assigned keep their arm (sticky); new units follow the new allocation. The
    readout analyses each cohort with its own weights and pools only cohorts whose weights are
    identical, so a weight change never biases the comparison.
    """
    locked = Experiment.objects.select_for_update().get(pk=experiment.pk)
    if locked.status != Experiment.Status.RUNNING:
        raise ExperimentConfigError(
            [("status", "only a running experiment has an allocation to change")]
        )
    arms = list(locked.arms.order_by("position"))
    current = locked.phases.order_by("-number").first()
    assert current is not None  # a running experiment always has a phase
    old_weights = {arm.pk: current.weight_of(arm.pk) for arm in arms}
    new_weights = dict(old_weights)
    errors: list[tuple[str, str]] = []
    if weights is not None:
        by_name = {arm.name: arm for arm in arms}
        unknown = sorted(set(weights) - set(by_name))
        missing = sorted(set(by_name) - set(weights))
        if unknown:
            errors.append(("weights", f"unknown arm(s): {', '.join(unknown)}"))
        if missing:
            errors.append(("weights", f"give a weight for every arm; missing {', '.join(missing)}"))
        for name, value in weights.items():
            if name in by_name:
                if not 1 <= int(value) <= BUCKETS:
                    errors.append((f"weights.{name}", "must be between 0.01% and 100%"))
                new_weights[by_name[name].pk] = int(value)
        total = sum(int(v) for v in weights.values())
        if not errors and total != BUCKETS:
            errors.append(("weights", f"weights sum to {percent(total)}; they must sum to 100%"))
    new_coverage = current.coverage if coverage is None else coverage
    if not 1 <= new_coverage <= BUCKETS:
        errors.append(("coverage", "must be between 0.01% and 100%"))
    if not errors and new_weights == old_weights and new_coverage == current.coverage:
        errors.append(("weights", "nothing changed: the weights and coverage are the current ones"))
    _raise_if(errors)
    now = timezone.now()
    current.ended_at = now
    current.save(update_fields=["ended_at"])
    changes = []
    if new_weights != old_weights:
        changes.append(f"weights {_describe(arms, old_weights)} -> {_describe(arms, new_weights)}")
    if new_coverage != current.coverage:
        changes.append(f"coverage {percent(current.coverage)} -> {percent(new_coverage)}")
    phase = ExperimentPhase.objects.create(
        experiment=locked,
        number=current.number + 1,
        coverage=new_coverage,
        weights={str(pk): w for pk, w in new_weights.items()},
        note="; ".join(changes),
        started_at=now,
    )
    for arm in arms:
        if arm.weight != new_weights[arm.pk]:
            arm.weight = new_weights[arm.pk]
            arm.save(update_fields=["weight"])
    locked.coverage = new_coverage
    locked.save(update_fields=["coverage", "updated_at"])
    transaction.on_commit(invalidate_running_experiments)
    return phase
