"""Persist first assignments (sticky) and log exposures, idempotently.

Two paths share one meaning:

* :func:`assign_and_expose` - one UV on the live reply path. On PostgreSQL it is a single
  statement (insert the assignment if new, read the persisted one, insert the exposure if
  new), so routing through an experiment costs one extra round trip.
* :func:`exposures_log_bulk` - many (room, uv, day) rows at once (traffic simulation, the
  rollups' room-level exposures): the same assignment code, set-based SQL.

The persisted assignment always wins over the freshly computed arm: after a weight change a
unit keeps the arm it was first given.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.db import connection, transaction

from experiments_app.assignment import Allocation, unit_key
from experiments_app.models import Assignment, Experiment, ExperimentArm, ExperimentPhase, Exposure

_ASSIGN_AND_EXPOSE = f"""
WITH new_assignment AS (
    INSERT INTO {Assignment._meta.db_table} (experiment_id, unit_key, arm_id, phase_id, created_at)
    VALUES (%(experiment)s, %(unit)s, %(arm)s, %(phase)s, now())
    ON CONFLICT (experiment_id, unit_key) DO NOTHING
    RETURNING id, arm_id
), chosen AS (
    SELECT id, arm_id FROM new_assignment
    UNION ALL
    SELECT id, arm_id FROM {Assignment._meta.db_table}
    WHERE experiment_id = %(experiment)s AND unit_key = %(unit)s
    LIMIT 1
), exposed AS (
    INSERT INTO {Exposure._meta.db_table}
        (experiment_id, assignment_id, arm_id, room_id, uv_id, day, created_at)
    SELECT %(experiment)s, id, arm_id, %(room)s, %(uv)s, %(day)s, now() FROM chosen
    ON CONFLICT (experiment_id, room_id, uv_id, day) DO NOTHING
)
SELECT arm_id FROM chosen
"""


def assign_and_expose(
    *,
    experiment_id: int,
    unit: str,
    arm_id: int,
    phase_id: int,
    room_id: int,
    uv_id: str,
    day: date,
    create: bool = True,
) -> int | None:
    """The unit's persisted arm id (assigning ``arm_id`` first if it has none and ``create``),
    with the UV's exposure for ``day`` logged once. None: not assigned and not created."""
    if create and connection.vendor == "postgresql":
        params: dict[str, Any] = {
            "experiment": experiment_id,
            "unit": unit,
            "arm": arm_id,
            "phase": phase_id,
            "room": room_id,
            "uv": uv_id,
            "day": day,
        }
        with connection.cursor() as cursor:
            cursor.execute(_ASSIGN_AND_EXPOSE, params)
            row = cursor.fetchone()
        if row is not None:
            return int(row[0])
        # A concurrent first request of the same unit committed after our snapshot: its
        # assignment is visible now; fall through to the portable path.
    with transaction.atomic():
        assignment = (
            Assignment.objects.filter(experiment_id=experiment_id, unit_key=unit)
            .only("id", "arm_id")
            .first()
        )
        if assignment is None:
            if not create:
                return None
            Assignment.objects.bulk_create(
                [
                    Assignment(
                        experiment_id=experiment_id, unit_key=unit, arm_id=arm_id, phase_id=phase_id
                    )
                ],
                ignore_conflicts=True,
            )
            assignment = Assignment.objects.only("id", "arm_id").get(
                experiment_id=experiment_id, unit_key=unit
            )
        Exposure.objects.bulk_create(
            [
                Exposure(
                    experiment_id=experiment_id,
                    assignment_id=assignment.pk,
                    arm_id=assignment.arm_id,
                    room_id=room_id,
                    uv_id=uv_id,
                    day=day,
                )
            ],
            ignore_conflicts=True,
        )
    return assignment.arm_id


@dataclass(frozen=True)
class BulkExposureResult:
    rows: int
    exposed: int  # rows inside the experiment (in the layer range and coverage)
    new_assignments: int
    new_exposures: int


def allocation_of(
    experiment: Experiment, phase: ExperimentPhase, arm_ids: Sequence[int]
) -> Allocation:
    return Allocation(
        arm_salt=experiment.arm_salt,
        coverage_salt=experiment.coverage_salt,
        layer=experiment.layer,
        layer_start=experiment.layer_start,
        layer_end=experiment.layer_end,
        coverage=phase.coverage,
        weights=tuple(phase.weight_of(pk) for pk in arm_ids),
    )


def phase_on(phases: Sequence[ExperimentPhase], day: date) -> ExperimentPhase:
    """The phase whose window holds ``day`` (the latest one that started on or before it)."""
    chosen = phases[0]
    for phase in phases:
        if phase.started_at.date() <= day:
            chosen = phase
    return chosen


def exposures_log_bulk(
    *, experiment: Experiment, rows: Iterable[tuple[int, str, date]]
) -> BulkExposureResult:
    """Assign and expose many (room_id, uv_id, day) rows with the experiment's allocation
    of the phase of each day; rows outside the layer range or coverage are skipped."""
    arms = list(ExperimentArm.objects.filter(experiment=experiment).order_by("position"))
    arm_ids = [arm.pk for arm in arms]
    phases = list(ExperimentPhase.objects.filter(experiment=experiment).order_by("number"))
    if not phases:
        raise ValueError(f"experiment {experiment.pk} was never started: it has no phase")
    allocations = {p.pk: allocation_of(experiment, p, arm_ids) for p in phases}
    max_coverage = max(p.coverage for p in phases)
    units: dict[str, tuple[int, int]] = {}  # unit -> (arm id, phase id) if newly assigned
    exposures: list[tuple[int, str, date, str]] = []
    total = 0
    for room_id, uv_id, day in rows:
        total += 1
        key = unit_key(experiment.unit, room_id=room_id, uv_id=uv_id, day=day)
        if key not in units:
            phase = phase_on(phases, day)
            allocation = allocations[phase.pk]
            index = allocation.assign(key)
            if index is None:
                # Covered by an earlier, wider coverage: sticky if it was assigned then.
                if phase.coverage < max_coverage and allocation.in_layer(key):
                    units[key] = (0, 0)
                else:
                    continue
            else:
                units[key] = (arm_ids[index], phase.pk)
        exposures.append((room_id, uv_id, day, key))
    new_assignments, new_exposures = _write_bulk(experiment.pk, units, exposures)
    return BulkExposureResult(total, len(exposures), new_assignments, new_exposures)


def _write_bulk(
    experiment_id: int,
    units: dict[str, tuple[int, int]],
    exposures: list[tuple[int, str, date, str]],
) -> tuple[int, int]:
    creatable = [(k, arm, phase) for k, (arm, phase) in units.items() if arm]
    if connection.vendor == "postgresql":
        return _write_bulk_postgres(experiment_id, creatable, exposures)
    with transaction.atomic():
        before = Assignment.objects.filter(experiment_id=experiment_id).count()
        Assignment.objects.bulk_create(
            [
                Assignment(experiment_id=experiment_id, unit_key=k, arm_id=arm, phase_id=phase)
                for k, arm, phase in creatable
            ],
            ignore_conflicts=True,
            batch_size=500,
        )
        new_assignments = Assignment.objects.filter(experiment_id=experiment_id).count() - before
        keys = list(units)
        persisted: dict[str, tuple[int, int]] = {}
        for start in range(0, len(keys), 500):
            for pk, key, arm in Assignment.objects.filter(
                experiment_id=experiment_id, unit_key__in=keys[start : start + 500]
            ).values_list("id", "unit_key", "arm_id"):
                persisted[key] = (pk, arm)
        before = Exposure.objects.filter(experiment_id=experiment_id).count()
        Exposure.objects.bulk_create(
            [
                Exposure(
                    experiment_id=experiment_id,
                    assignment_id=persisted[key][0],
                    arm_id=persisted[key][1],
                    room_id=room_id,
                    uv_id=uv_id,
                    day=day,
                )
                for room_id, uv_id, day, key in exposures
                if key in persisted
            ],
            ignore_conflicts=True,
            batch_size=500,
        )
        new_exposures = Exposure.objects.filter(experiment_id=experiment_id).count() - before
    return new_assignments, new_exposures


def _write_bulk_postgres(
    experiment_id: int,
    creatable: list[tuple[str, int, int]],
    exposures: list[tuple[int, str, date, str]],
) -> tuple[int, int]:
    from experiments_app.pg_copy import copy_into_staging

    assignments = Assignment._meta.db_table
    exposure_table = Exposure._meta.db_table
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMP TABLE IF NOT EXISTS assignment_staging "
            "(unit_key text, arm_id bigint, phase_id bigint) ON COMMIT DELETE ROWS"
        )
        cursor.execute(
            "CREATE TEMP TABLE IF NOT EXISTS exposure_staging "
            "(room_id bigint, uv_id text, day date, unit_key text) ON COMMIT DELETE ROWS"
        )
        copy_into_staging(
            cursor, "assignment_staging", ("unit_key", "arm_id", "phase_id"), creatable
        )
        cursor.execute(
            f"INSERT INTO {assignments} (experiment_id, unit_key, arm_id, phase_id, created_at) "
            "SELECT %s, unit_key, arm_id, phase_id, now() FROM assignment_staging "
            "ON CONFLICT (experiment_id, unit_key) DO NOTHING",
            [experiment_id],
        )
        new_assignments = cursor.rowcount
        copy_into_staging(
            cursor, "exposure_staging", ("room_id", "uv_id", "day", "unit_key"), exposures
        )
        cursor.execute(
            f"INSERT INTO {exposure_table} "
            "(experiment_id, assignment_id, arm_id, room_id, uv_id, day, created_at) "
            "SELECT %s, a.id, a.arm_id, s.room_id, s.uv_id, s.day, now() "
            f"FROM exposure_staging s JOIN {assignments} a "
            "ON a.experiment_id = %s AND a.unit_key = s.unit_key "
            "ON CONFLICT (experiment_id, room_id, uv_id, day) DO NOTHING",
            [experiment_id, experiment_id],
        )
        new_exposures = cursor.rowcount
    return new_assignments, new_exposures
