"""Which arm answers a viewer.

When a running experiment covers the room and the viewer's unit, the unit's sticky arm (its
first assignment, persisted) answers with the arm's agent kind, pinned harness version and
model endpoint, and the exposure is logged once per (experiment, room, UV, day). Otherwise
the room's serving arm answers with the room's published harness on the room's endpoint.

Running experiments are cached per room for ``HAT_EXPERIMENT_CACHE_S`` seconds (default 5)
and dropped at once in this process when an experiment starts, stops or changes phase; other
processes follow within the TTL. With an experiment running, routing costs one query (the
single-statement assign-and-expose on PostgreSQL); without one, none.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import date

from django.conf import settings
from django.utils import timezone

from experiments_app.assignment import Allocation, unit_key
from harness_app.models import Harness, HarnessVersion, Room
from training_app.models import ModelEndpoint


class NoServingConfig(Exception):
    """The room cannot be served (no published harness, or no active endpoint)."""


@dataclass(frozen=True)
class ArmChoice:
    arm: str  # "harness" | "react"
    version: HarnessVersion
    endpoint: ModelEndpoint
    experiment_id: int | None = None
    experiment_arm_id: int | None = None


@dataclass(frozen=True)
class CachedArm:
    id: int
    name: str
    kind: str
    version: HarnessVersion
    endpoint: ModelEndpoint


@dataclass(frozen=True)
class RunningExperiment:
    id: int
    unit: str
    phase_id: int
    allocation: Allocation
    max_coverage: int  # the widest coverage of any phase so far (sticky units beyond today's)
    arms: tuple[CachedArm, ...]

    def arm_by_id(self, arm_id: int) -> CachedArm | None:
        for arm in self.arms:
            if arm.id == arm_id:
                return arm
        return None


_cache: dict[int, tuple[float, tuple[RunningExperiment, ...]]] = {}
_cache_lock = threading.Lock()


def invalidate_running_experiments() -> None:
    with _cache_lock:
        _cache.clear()


def running_experiments(room_id: int) -> tuple[RunningExperiment, ...]:
    now = time.monotonic()
    with _cache_lock:
        hit = _cache.get(room_id)
    if hit is not None and hit[0] > now:
        return hit[1]
    loaded = _load_running(room_id)
    with _cache_lock:
        _cache[room_id] = (now + settings.HAT_EXPERIMENT_CACHE_S, loaded)
    return loaded


def _load_running(room_id: int) -> tuple[RunningExperiment, ...]:
    from experiments_app.exposures import allocation_of
    from experiments_app.models import Experiment, ExperimentArm, ExperimentPhase

    experiments = list(
        Experiment.objects.filter(status=Experiment.Status.RUNNING, rooms=room_id).order_by(
            "layer_start", "pk"
        )
    )
    if not experiments:
        return ()
    ids = [e.pk for e in experiments]
    arms: dict[int, list[ExperimentArm]] = {pk: [] for pk in ids}
    for arm in (
        ExperimentArm.objects.filter(experiment_id__in=ids)
        .select_related("harness_version", "endpoint")
        .defer("harness_version__content")
        .order_by("experiment_id", "position")
    ):
        arms[arm.experiment_id].append(arm)
    phases: dict[int, list[ExperimentPhase]] = {pk: [] for pk in ids}
    for phase in ExperimentPhase.objects.filter(experiment_id__in=ids).order_by("number"):
        phases[phase.experiment_id].append(phase)
    out = []
    for experiment in experiments:
        if not phases[experiment.pk] or not arms[experiment.pk]:
            continue
        current = phases[experiment.pk][-1]
        arm_ids = [arm.pk for arm in arms[experiment.pk]]
        out.append(
            RunningExperiment(
                id=experiment.pk,
                unit=experiment.unit,
                phase_id=current.pk,
                allocation=allocation_of(experiment, current, arm_ids),
                max_coverage=max(p.coverage for p in phases[experiment.pk]),
                arms=tuple(
                    CachedArm(a.pk, a.name, a.kind, a.harness_version, a.endpoint)
                    for a in arms[experiment.pk]
                ),
            )
        )
    return tuple(out)


def default_endpoint(room: Room) -> ModelEndpoint:
    endpoint = room.reply_endpoint
    if endpoint is None:
        endpoint = ModelEndpoint.objects.filter(name=settings.HAT_DEFAULT_ENDPOINT).first()
    if endpoint is None or not endpoint.is_active:
        raise NoServingConfig("no active model endpoint for this room")
    return endpoint


def experiment_arm(*, room: Room, uv_id: str, day: date | None = None) -> ArmChoice | None:
    """The running experiment's arm for this UV in this room today, exposure logged; None
    when no running experiment covers the UV's unit."""
    from experiments_app.exposures import assign_and_expose

    experiments = running_experiments(room.pk)
    if not experiments:
        return None
    today = day or timezone.now().date()
    for experiment in experiments:
        key = unit_key(experiment.unit, room_id=room.pk, uv_id=uv_id, day=today)
        allocation = experiment.allocation
        if not allocation.in_layer(key):
            continue
        covered = allocation.covered(key)
        if not covered and not (
            experiment.max_coverage > allocation.coverage
            and _bucket_below(experiment, key, experiment.max_coverage)
        ):
            continue
        proposed = experiment.arms[allocation.arm_index(key)].id
        arm_id = assign_and_expose(
            experiment_id=experiment.id,
            unit=key,
            arm_id=proposed,
            phase_id=experiment.phase_id,
            room_id=room.pk,
            uv_id=uv_id,
            day=today,
            create=covered,  # beyond today's coverage only an earlier assignment counts
        )
        if arm_id is None:
            continue
        arm = experiment.arm_by_id(arm_id)
        if arm is None:  # pragma: no cover - arms of a started experiment never change
            continue
        return ArmChoice(arm.kind, arm.version, arm.endpoint, experiment.id, arm.id)
    return None


def _bucket_below(experiment: RunningExperiment, key: str, coverage: int) -> bool:
    from experiments_app.assignment import bucket

    return bucket(experiment.allocation.coverage_salt, key) < coverage


def choose_arm(*, room: Room, uv_id: str) -> ArmChoice:
    choice = experiment_arm(room=room, uv_id=uv_id)
    if choice is not None:
        return choice
    harness = room.harness
    if harness.published_version_id is None:
        raise NoServingConfig("this room has no published harness")
    version: HarnessVersion | None = None
    if Harness.published_version.is_cached(harness):  # type: ignore[attr-defined]
        version = harness.published_version
    if version is None:  # the caller did not select it: load it without its (large) content
        version = HarnessVersion.objects.defer("content").get(pk=harness.published_version_id)
    return ArmChoice(room.serving_arm, version, default_endpoint(room))
