"""Bring the experiment rollups up to date, incrementally and set-based.

One run (:func:`rollups_update`), every step a handful of ``INSERT ... SELECT ... GROUP BY``
statements - never a Python loop over events or UVs:

1. **Events -> UvDay.** New events (id above the watermark, read under the ingestion
   advisory lock so no lower id can still commit) are summed per (room, day, UV) once into a
   scratch table, which is upserted into ``UvDay`` and kept as the run's new UV-days.
2. **Per experiment, what changed**: its new UV-days (rooms and window) and the UV-days of
   exposures logged since the last run. A new experiment, a new phase, new pre-period history
   (covariates change) or a member whose first day moves earlier means a full refresh of that
   experiment instead (every day recomputed from the base tables).
3. **Room audiences** (room and room-day units): every UV active in a covered room-day is
   exposed (the host's replies are broadcast to the room).
4. **Members**: the touched UVs' members staged once; new (unit, UV) pairs from the new
   exposures, with the UV's pre-period GMV and views (the 14 days before the start, same
   rooms) as CUPED covariates. A new member whose first day is in the past (a late
   exposure) touches its UV-days after that day too: they count from its first day.
5. **UnitDay**: the affected unit-days (the units of the changed UV-days, on those days) are
   rewritten: the unit's outcome that day, the UVs active that day with their covariates,
   the UVs joining it that day.
6. **ArmDayStats** per (cohort phase, arm, day): "daily" sums over the affected days'
   unit-days; "cumulative" sums over units of their running totals through each day. Only
   the changed units' running totals move, so the stored cumulative sums are updated by
   their old and new contributions (one scan of those units' unit-days) - per
   docs/STATISTICS.md, per-unit totals are never merged from per-day sums.

Scratch tables hold each step's output (see :func:`_scratch`: unlogged on PostgreSQL, so the
day-sized statements can run in parallel). Timings at full scale: docs/BENCHMARKS.md.

Each experiment's rewrite is one transaction, so a readout never sees half a refresh; if it
fails, the experiment is marked for a full refresh on the next run.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from experiments_app.assignment import unit_key
from experiments_app.exposures import allocation_of, phase_on
from experiments_app.ingestion import EVENTS_LOCK_KEY, FUTURE_TOLERANCE
from experiments_app.models import (
    ArmDayStats,
    Assignment,
    Event,
    Experiment,
    ExperimentArm,
    ExperimentMember,
    ExperimentPhase,
    ExperimentRollup,
    Exposure,
    RollupState,
    UnitDay,
    UvDay,
)

log = logging.getLogger(__name__)

PRE_PERIOD_DAYS = 14
# Exposures are found by creation time; re-reading a short overlap is harmless (the per-day
# rewrite is idempotent) and covers transactions that committed just after the last scan.
EXPOSURE_SCAN_OVERLAP = timedelta(minutes=2)
RUNNER_LOCK_KEY = 0x524F4C4C  # one rollup run at a time (PostgreSQL)
CUMULATIVE_DAYS_PER_QUERY = 20
ROLLUP_WORK_MEM = "256MB"
# GMV and views are always rolled up, capped GMV too when an experiment reads it: each UV's
# GMV winsorized at this percentile of per-UV GMV among the UVs active in the experiment's
# rooms in the pre-period (numpy's linear percentile).
GMV_CAP_PERCENTILE = 99.0

T_EVENT = Event._meta.db_table
T_UVDAY = UvDay._meta.db_table
T_EXPOSURE = Exposure._meta.db_table
T_ASSIGNMENT = Assignment._meta.db_table
T_MEMBER = ExperimentMember._meta.db_table
T_UNITDAY = UnitDay._meta.db_table

# Scratch tables, one per step's output (see _scratch); every run drops them at its end.
NEW_UV_DAYS = "rollup_new_uv_days"  # the run's new events summed per (room, day, UV)
TOUCHED_UV_DAYS = "rollup_touched_uv_days"  # an experiment's changed UV-days
MEMBER_SOURCE = "rollup_member_source"  # first exposure day per (unit, UV) of the run's exposures
KNOWN_MEMBERS = "rollup_known_members"  # the touched UVs' members
NEW_MEMBERS = "rollup_new_members"  # new (unit, UV) pairs with their covariates
PRE_PERIOD = "rollup_pre_period"  # SQLite only: an indexed copy of the pre-period UV-days
ACTIVITY = "rollup_activity"  # one row per (member UV, day) of the affected unit-days
AFFECTED = "rollup_affected_unit_days"  # (unit, day) pairs rewritten (room units)
OLD_UNIT_DAYS = "rollup_old_unit_days"  # the replaced unit-day rows, for the cumulative update
CHANGED = "rollup_changed_units"  # units whose running totals moved
SCRATCH_TABLES = (
    NEW_UV_DAYS,
    TOUCHED_UV_DAYS,
    MEMBER_SOURCE,
    KNOWN_MEMBERS,
    NEW_MEMBERS,
    PRE_PERIOD,
    ACTIVITY,
    AFFECTED,
    OLD_UNIT_DAYS,
    CHANGED,
)


@dataclass
class RollupReport:
    events: int = 0
    uv_days: int = 0
    experiments: dict[int, list[date]] = field(default_factory=dict)
    full_refresh: list[int] = field(default_factory=list)
    seconds: float = 0.0
    skipped: bool = False
    steps: dict[str, float] = field(default_factory=dict)

    def summary(self) -> str:
        if self.skipped:
            return "another rollup run holds the lock; skipped"
        parts = [f"{self.events} new events -> {self.uv_days} UV-day rows"]
        for pk, days in self.experiments.items():
            kind = "full refresh" if pk in self.full_refresh else "incremental"
            parts.append(f"experiment {pk}: {len(days)} day(s), {kind}")
        timing = ", ".join(f"{name} {secs:.2f}" for name, secs in self.steps.items())
        return f"{'; '.join(parts)} in {self.seconds:.2f} s" + (f" ({timing})" if timing else "")


def _in(values: Sequence[Any]) -> str:
    return ", ".join(["%s"] * len(values))


def _execute(sql: str, params: Sequence[Any] = ()) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql, list(params))
        return int(cursor.rowcount)


def _fetch(sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, list(params))
        return list(cursor.fetchall())


def _as_date(value: Any) -> date:
    return value if isinstance(value, date) else date.fromisoformat(str(value))


# --- 1. events -> UvDay -----------------------------------------------------------------------


def _committed_high_watermark() -> int:
    """The highest event id below which no batch can still commit."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            _execute("SELECT pg_advisory_xact_lock(%s)", [EVENTS_LOCK_KEY])
        rows = _fetch(f"SELECT MAX(id) FROM {T_EVENT}")
    return int(rows[0][0] or 0)


def _roll_up_events(state: RollupState, report: RollupReport) -> set[tuple[int, date]]:
    """Upsert the new events' UV-day sums; keep them in a scratch table; return (room, day)."""
    _execute(f"DROP TABLE IF EXISTS {NEW_UV_DAYS}")
    high = _committed_high_watermark()
    low = state.last_event_id
    if high <= low:
        _execute(
            f"CREATE {_scratch()} TABLE {NEW_UV_DAYS} (room_id bigint, day date, "
            "uv_id varchar(128), gmv double precision, views bigint, events bigint)"
        )
        return set()
    started = time.perf_counter()
    with transaction.atomic():
        _tune_session()
        # CREATE TABLE AS (not INSERT ... SELECT): PostgreSQL aggregates it in parallel.
        _execute(
            f"""
            CREATE {_scratch()} TABLE {NEW_UV_DAYS} AS
            SELECT room_id, day, uv_id,
                   CAST(SUM(CASE WHEN type = 'confirmed_receipt' THEN amount
                                 WHEN type = 'refund' THEN -amount ELSE 0 END)
                        AS double precision) AS gmv,
                   SUM(CASE WHEN type = 'item_page_view' THEN 1 ELSE 0 END) AS views,
                   COUNT(*) AS events
            FROM {T_EVENT} WHERE id > %s AND id <= %s
            GROUP BY room_id, day, uv_id
            """,
            [low, high],
        )
        _analyze([NEW_UV_DAYS])
        report.uv_days = _execute(
            f"""
            INSERT INTO {T_UVDAY} (room_id, day, uv_id, gmv, views, events)
            SELECT room_id, day, uv_id, gmv, views, events FROM {NEW_UV_DAYS} WHERE 1 = 1
            ORDER BY uv_id, day
            ON CONFLICT (room_id, day, uv_id) DO UPDATE SET
                gmv = {T_UVDAY}.gmv + excluded.gmv,
                views = {T_UVDAY}.views + excluded.views,
                events = {T_UVDAY}.events + excluded.events
            """
        )
        touched_rows = _fetch(
            f"SELECT room_id, day, SUM(events) FROM {NEW_UV_DAYS} GROUP BY room_id, day"
        )
        report.events = int(sum(int(n) for _, _, n in touched_rows))
        state.last_event_id = high
        state.save(update_fields=["last_event_id", "updated_at"])
    report.steps["events -> UV-days"] = time.perf_counter() - started
    return {(int(room), _as_date(day)) for room, day, _ in touched_rows}


# --- 2. which days of which experiment -----------------------------------------------------


@dataclass(frozen=True)
class Window:
    start: date
    end: date  # inclusive

    @property
    def pre_start(self) -> date:
        return self.start - timedelta(days=PRE_PERIOD_DAYS)

    def days(self) -> list[date]:
        return [self.start + timedelta(days=i) for i in range((self.end - self.start).days + 1)]


def experiment_window(experiment: Experiment, now: datetime | None = None) -> Window:
    assert experiment.started_at is not None
    start = experiment.started_at.date()
    if experiment.stopped_at is not None:
        end = experiment.stopped_at.date()
    else:
        end = ((now or timezone.now()) + FUTURE_TOLERANCE).date()
    return Window(start, max(start, end))


# --- the run ---------------------------------------------------------------------------------


def rollups_update(
    *, full: bool = False, experiment_ids: Sequence[int] | None = None, now: datetime | None = None
) -> RollupReport:
    """Bring every started experiment's rollups up to date (``full``: recompute them all)."""
    started = time.perf_counter()
    report = RollupReport()
    with _runner_lock() as acquired:
        if not acquired:
            report.skipped = True
            return report
        now = now or timezone.now()
        state, _ = RollupState.objects.get_or_create(name="events")
        scan_from = state.exposures_scanned_at
        touched = _roll_up_events(state, report)
        experiments = Experiment.objects.filter(
            status__in=[Experiment.Status.RUNNING, Experiment.Status.STOPPED]
        ).order_by("pk")
        if experiment_ids is not None:
            # The run folds every new event into UvDay and moves the shared exposure scan
            # past every new exposure, but refreshes only these experiments: the others
            # would never see what this run consumed, so they recompute on their next run.
            ExperimentRollup.objects.filter(experiment__in=experiments).exclude(
                experiment_id__in=experiment_ids
            ).update(full_refresh_needed=True)
            experiments = experiments.filter(pk__in=experiment_ids)
        for experiment in experiments:
            rollup, _ = ExperimentRollup.objects.get_or_create(experiment=experiment)
            try:
                days = _refresh_experiment(
                    experiment,
                    rollup,
                    touched=touched,
                    since=scan_from - EXPOSURE_SCAN_OVERLAP if scan_from else None,
                    full=full or rollup.full_refresh_needed,
                    now=now,
                    report=report,
                )
            except Exception:
                # The new events are already folded into UvDay: only a full refresh can
                # bring this experiment back in step.
                ExperimentRollup.objects.filter(pk=rollup.pk).update(full_refresh_needed=True)
                raise
            if days:
                report.experiments[experiment.pk] = days
            ExperimentRollup.objects.filter(pk=rollup.pk).update(checked_at=now)
        state.exposures_scanned_at = now
        state.save(update_fields=["exposures_scanned_at", "updated_at"])
        for table in SCRATCH_TABLES:
            _execute(f"DROP TABLE IF EXISTS {table}")
    report.seconds = time.perf_counter() - started
    log.info("rollups: %s", report.summary())
    return report


class _runner_lock:
    """A session-level try-lock on PostgreSQL; elsewhere (SQLite, one writer) always held."""

    def __enter__(self) -> bool:
        if connection.vendor != "postgresql":
            self.held = True
            return True
        self.held = bool(_fetch("SELECT pg_try_advisory_lock(%s)", [RUNNER_LOCK_KEY])[0][0])
        return self.held

    def __exit__(self, *exc: object) -> None:
        if self.held and connection.vendor == "postgresql":
            _fetch("SELECT pg_advisory_unlock(%s)", [RUNNER_LOCK_KEY])


def _refresh_experiment(
    experiment: Experiment,
    rollup: ExperimentRollup,
    *,
    touched: set[tuple[int, date]],
    since: datetime | None,
    full: bool,
    now: datetime,
    report: RollupReport,
) -> list[date]:
    window = experiment_window(experiment, now)
    room_ids = sorted(experiment.rooms.values_list("pk", flat=True))
    rooms = set(room_ids)
    if since is None or any(
        room in rooms and window.pre_start <= day < window.start for room, day in touched
    ):
        full = True  # never scanned, or new pre-period history: covariates change
    with transaction.atomic():
        _tune_session()
        metrics = metric_specs(experiment, rollup.gmv_cap)
        days = (
            None
            if full or since is None
            else _refresh_incremental(experiment, room_ids, window, since, now, report, metrics)
        )
        if days is None:
            report.full_refresh.append(experiment.pk)
            # the cap is fixed by the pre-period: set on every full refresh (new pre-period
            # history forces one), kept by incremental runs
            rollup.gmv_cap = gmv_cap(experiment, room_ids, window)
            rollup.save(update_fields=["gmv_cap"])
            metrics = metric_specs(experiment, rollup.gmv_cap)
            days = _refresh_full(experiment, room_ids, window, now, report, metrics)
        if days:
            rollup.full_refresh_needed = False
            rollup.refreshed_at = now
            rollup.save(update_fields=["full_refresh_needed", "refreshed_at"])
        elif rollup.full_refresh_needed:
            rollup.full_refresh_needed = False
            rollup.save(update_fields=["full_refresh_needed"])
    return days


def _refresh_full(
    experiment: Experiment,
    room_ids: list[int],
    window: Window,
    now: datetime,
    report: RollupReport,
    metrics: Metrics,
) -> list[date]:
    """Recompute everything of the experiment from exposures and UV-days."""
    clock = _Clock(report)
    for model in (ExperimentMember, UnitDay, ArmDayStats):
        model.objects.filter(experiment_id=experiment.pk).delete()
    _analyze([T_UVDAY, T_EXPOSURE, T_ASSIGNMENT])
    days = window.days()
    if experiment.unit != Experiment.Unit.UV:
        _expose_room_audiences(experiment, room_ids, days, now)
    _stage_member_source(experiment, f"day IN ({_in(days)})", days)
    _insert_new_members(experiment, room_ids, window, known=None)
    _analyze([T_MEMBER])
    clock.lap("members")
    _rewrite_unit_days(experiment, room_ids, days)
    clock.lap("unit-days")
    data_days = _data_days(experiment.pk)
    if data_days:
        _rewrite_daily_stats(experiment, data_days, metrics)
        _rewrite_cumulative_stats(experiment.pk, min(data_days), metrics)
    clock.lap("stats")
    return days


def _refresh_incremental(
    experiment: Experiment,
    room_ids: list[int],
    window: Window,
    since: datetime,
    now: datetime,
    report: RollupReport,
    metrics: Metrics,
) -> list[date] | None:
    """Rewrite only what the run's new UV-days and exposures touch; None: needs a full
    refresh (a member's first day moved earlier)."""
    clock = _Clock(report)
    touched_days = _stage_touched_uv_days(experiment, room_ids, window, since)
    if not touched_days:
        return []
    if experiment.unit != Experiment.Unit.UV:
        _expose_room_audiences(experiment, room_ids, touched_days, now)
        clock.lap("room audiences")
    _stage_member_source(experiment, "created_at >= %s", [since])
    _stage_known_members(experiment.pk)
    if _first_days_move_earlier():
        return None
    _insert_new_members(experiment, room_ids, window, known=KNOWN_MEMBERS)
    touched_days = _touch_later_days_of_new_members(experiment, room_ids, window, touched_days)
    clock.lap("members")
    affected = _stage_activity(experiment, room_ids, touched_days)
    days = sorted(_as_date(d) for (d,) in _fetch(f"SELECT DISTINCT day FROM {affected}"))
    if not days:
        return []
    cutoffs = _cutoffs(experiment.pk, days)
    _replace_affected_unit_days(experiment, days, affected)
    _stage_changed_units(experiment, affected)
    clock.lap("unit-days")
    _rewrite_daily_stats(experiment, days, metrics)
    clock.lap("daily stats")
    _update_cumulative_stats(experiment.pk, cutoffs, affected, metrics)
    clock.lap("cumulative stats")
    return days


def _stage_touched_uv_days(
    experiment: Experiment, room_ids: list[int], window: Window, since: datetime
) -> list[date]:
    """The experiment's UV-days that changed: new event sums in its rooms and window, and
    UV-days of exposures logged since the last run. For UV units one row per (UV, day); for
    room units (room, UV, day) rows that may repeat (readers deduplicate what they need).
    Returns their days."""
    _execute(f"DROP TABLE IF EXISTS {TOUCHED_UV_DAYS}")
    both = f"""
        SELECT room_id, uv_id, day FROM {NEW_UV_DAYS}
        WHERE room_id IN ({_in(room_ids)}) AND day >= %s AND day <= %s
        UNION ALL
        SELECT room_id, uv_id, day FROM {T_EXPOSURE}
        WHERE experiment_id = %s AND created_at >= %s
    """
    if experiment.unit == Experiment.Unit.UV:  # a UV unit spans rooms: (UV, day) is the key
        both = f"SELECT uv_id, day FROM ({both}) x GROUP BY uv_id, day"
    _execute(
        f"CREATE {_scratch()} TABLE {TOUCHED_UV_DAYS} AS {both}",
        [*room_ids, window.start, window.end, experiment.pk, since],
    )
    _analyze([TOUCHED_UV_DAYS])
    return sorted(_as_date(d) for (d,) in _fetch(f"SELECT DISTINCT day FROM {TOUCHED_UV_DAYS}"))


def _touch_later_days_of_new_members(
    experiment: Experiment, room_ids: list[int], window: Window, touched_days: list[date]
) -> list[date]:
    """A late exposure makes its UV a member from a past day on: its outcomes on every
    later day count from then (UV and room units), though those UV-days were rolled up in
    earlier runs, before it was a member. Add them to the touched UV-days; returns the
    touched days. (A room-day member counts on its one day only.) Usually the new members
    joined on the newest day and nothing is added."""
    if experiment.unit == Experiment.Unit.ROOM_DAY:
        return touched_days
    earliest = _fetch(f"SELECT MIN(first_day) FROM {NEW_MEMBERS}")[0][0]
    if earliest is None or _as_date(earliest) >= window.end:
        return touched_days
    uv_unit = experiment.unit == Experiment.Unit.UV
    keys = "v.uv_id, v.day" if uv_unit else "v.room_id, v.uv_id, v.day"
    same_room = "" if uv_unit else " AND n.room_id = v.room_id"
    already = "t.uv_id = v.uv_id AND t.day = v.day" + (
        "" if uv_unit else " AND t.room_id = v.room_id"
    )
    added = _execute(
        f"""
        INSERT INTO {TOUCHED_UV_DAYS} ({keys.replace("v.", "")})
        SELECT {keys} FROM {T_UVDAY} v
        JOIN {NEW_MEMBERS} n ON n.uv_id = v.uv_id AND v.day > n.first_day{same_room}
        WHERE v.room_id IN ({_in(room_ids)}) AND v.day > %s AND v.day <= %s
          AND NOT EXISTS (SELECT 1 FROM {TOUCHED_UV_DAYS} t WHERE {already})
        GROUP BY {keys}
        """,
        [*room_ids, _as_date(earliest), window.end],
    )
    if not added:
        return touched_days
    _analyze([TOUCHED_UV_DAYS])
    return sorted(_as_date(d) for (d,) in _fetch(f"SELECT DISTINCT day FROM {TOUCHED_UV_DAYS}"))


def _stage_activity(experiment: Experiment, room_ids: list[int], touched_days: list[date]) -> str:
    """One row per (member UV, day) of every affected unit-day, with the UV's outcome that
    day and covariates: the touched UV-days themselves (UV units), or every active UV of a
    touched room-day (room and room-day units, whose unit-day sums all of them). Returns the
    table of affected (unit_id, day) pairs - the activity itself for UV units, where a unit
    is one UV and so each pair appears once."""
    pk = experiment.pk
    in_rooms, in_days = _in(room_ids), _in(touched_days)
    if experiment.unit == Experiment.Unit.UV:
        sql = f"""
            SELECT m.unit_id, m.arm_id, m.phase_id, t.day,
                   COALESCE(v.gmv, 0) AS gmv, COALESCE(v.views, 0) AS views,
                   m.c_gmv, m.c_views,
                   CASE WHEN m.first_day = t.day THEN 1 ELSE 0 END AS joined
            FROM {TOUCHED_UV_DAYS} t
            JOIN {KNOWN_MEMBERS} m ON m.uv_id = t.uv_id AND m.first_day <= t.day
            LEFT JOIN (
                SELECT uv_id, day, SUM(gmv) AS gmv, SUM(views) AS views FROM {T_UVDAY}
                WHERE room_id IN ({in_rooms}) AND day IN ({in_days})
                  AND uv_id IN (SELECT uv_id FROM {TOUCHED_UV_DAYS})
                GROUP BY uv_id, day
            ) v ON v.uv_id = t.uv_id AND v.day = t.day
        """
        params: list[Any] = [*room_ids, *touched_days]
    else:
        room_days = f"(room_id, day) IN (SELECT DISTINCT room_id, day FROM {TOUCHED_UV_DAYS})"
        member_on = _MEMBER_ON[Experiment.Unit(experiment.unit)]
        sql = f"""
            SELECT m.unit_id, m.arm_id, m.phase_id, act.day, act.gmv, act.views,
                   m.c_gmv, m.c_views,
                   CASE WHEN m.first_day = act.day THEN 1 ELSE 0 END AS joined
            FROM (
                SELECT room_id, uv_id, day, SUM(gmv) AS gmv, SUM(views) AS views FROM (
                    SELECT room_id, uv_id, day, gmv, views FROM {T_UVDAY}
                    WHERE room_id IN ({in_rooms}) AND day IN ({in_days}) AND {room_days}
                    UNION ALL
                    SELECT room_id, uv_id, day, 0, 0 FROM {T_EXPOSURE}
                    WHERE experiment_id = %s AND day IN ({in_days}) AND {room_days}
                ) raw
                GROUP BY room_id, uv_id, day
            ) act
            JOIN {T_MEMBER} m ON m.experiment_id = %s AND m.uv_id = act.uv_id AND {member_on}
        """
        # (every viewer of a touched room-day counts, not only the staged ones)
        params = [*room_ids, *touched_days, pk, *touched_days, pk]
    for table in (ACTIVITY, AFFECTED):
        _execute(f"DROP TABLE IF EXISTS {table}")
    _execute(f"CREATE {_scratch()} TABLE {ACTIVITY} AS {sql}", params)
    affected = ACTIVITY
    if experiment.unit != Experiment.Unit.UV:
        affected = AFFECTED
        _execute(
            f"CREATE {_scratch()} TABLE {AFFECTED} AS SELECT DISTINCT unit_id, day FROM {ACTIVITY}"
        )
    _analyze(sorted({ACTIVITY, affected}))
    if connection.vendor != "postgresql":
        # SQLite plans joins as nested loops: give them an index to probe. (PostgreSQL hashes.)
        _execute(f"CREATE INDEX {affected}_key ON {affected} (unit_id, day)")
    return affected


def _stage_changed_units(experiment: Experiment, affected: str) -> None:
    """The units whose running totals this run changes - the only ones whose cumulative
    contributions move. For UV units, a rewritten unit-day that adds nothing to the running
    totals (an exposure without outcome, of a UV that joined earlier) leaves its unit out:
    about a third of a day's unit-days. (Float sums recomputed in another order may differ
    in the last bit and count as changed: harmless, the unit's contributions are exact.)"""
    _execute(f"DROP TABLE IF EXISTS {CHANGED}")
    if experiment.unit == Experiment.Unit.UV:
        sql = f"""
            SELECT DISTINCT a.unit_id FROM {ACTIVITY} a
            LEFT JOIN {OLD_UNIT_DAYS} o ON o.unit_id = a.unit_id AND o.day = a.day
            WHERE a.joined <> COALESCE(o.new_uvs, 0) OR a.gmv <> COALESCE(o.y_gmv, 0)
               OR a.views <> COALESCE(o.y_views, 0)
               OR a.joined * a.c_gmv <> COALESCE(o.new_c_gmv, 0)
               OR a.joined * a.c_views <> COALESCE(o.new_c_views, 0)
        """
    else:
        sql = f"SELECT DISTINCT unit_id FROM {affected}"
    _execute(f"CREATE {_scratch()} TABLE {CHANGED} AS {sql}")
    _analyze([CHANGED])
    if connection.vendor != "postgresql":
        _execute(f"CREATE INDEX {CHANGED}_key ON {CHANGED} (unit_id)")


def _replace_affected_unit_days(experiment: Experiment, days: list[date], affected: str) -> None:
    """Keep the affected unit-days' old rows (for the cumulative update), then rewrite them
    from the staged activity (one row per unit-day already for UV units: no grouping)."""
    experiment_id = experiment.pk
    pick = (
        f"experiment_id = %s AND day IN ({_in(days)}) "
        f"AND (unit_id, day) IN (SELECT unit_id, day FROM {affected})"
    )
    _execute(f"DROP TABLE IF EXISTS {OLD_UNIT_DAYS}")
    _execute(
        f"CREATE {_scratch()} TABLE {OLD_UNIT_DAYS} AS SELECT unit_id, arm_id, phase_id, day, "
        f"new_uvs, y_gmv, y_views, new_c_gmv, new_c_views FROM {T_UNITDAY} WHERE {pick}",
        [experiment_id, *days],
    )
    _execute(  # exactly the rows kept aside: a smaller set to probe than every affected pair
        f"DELETE FROM {T_UNITDAY} WHERE experiment_id = %s AND day IN ({_in(days)}) "
        f"AND (unit_id, day) IN (SELECT unit_id, day FROM {OLD_UNIT_DAYS})",
        [experiment_id, *days],
    )
    if experiment.unit == Experiment.Unit.UV:
        select = f"""
            SELECT %s, day, unit_id, arm_id, phase_id, gmv, views, 1, c_gmv, c_views,
                   joined, joined * c_gmv, joined * c_views
            FROM {ACTIVITY} ORDER BY day, unit_id"""
    else:
        select = f"""
            SELECT %s, day, unit_id, arm_id, phase_id, SUM(gmv), SUM(views), COUNT(*),
                   SUM(c_gmv), SUM(c_views), SUM(joined), SUM(joined * c_gmv),
                   SUM(joined * c_views)
            FROM {ACTIVITY} GROUP BY day, unit_id, arm_id, phase_id ORDER BY day, unit_id"""
    _execute(
        f"""
        INSERT INTO {T_UNITDAY} (experiment_id, day, unit_id, arm_id, phase_id, y_gmv, y_views,
                                 uvs, c_gmv, c_views, new_uvs, new_c_gmv, new_c_views)
        {select}
        """,
        [experiment_id],
    )
    _analyze([OLD_UNIT_DAYS])


def _data_days(experiment_id: int) -> list[date]:
    return [
        _as_date(d)
        for (d,) in _fetch(
            f"SELECT DISTINCT day FROM {T_UNITDAY} WHERE experiment_id = %s", [experiment_id]
        )
    ]


def gmv_cap(experiment: Experiment, room_ids: list[int], window: Window) -> float | None:
    """The capped GMV metric's cap: the GMV_CAP_PERCENTILE-th percentile of per-UV GMV over
    the UVs active in the experiment's rooms in the pre-period (the 14 days before the start:
    fixed before any outcome is seen, the same for both arms). None when the experiment does
    not read capped GMV or the percentile is not positive (too few pre-period purchases)."""
    wanted = {experiment.primary_metric, *experiment.secondary_metrics}
    if Experiment.Metric.GMV_CAPPED not in wanted or experiment.unit != Experiment.Unit.UV:
        return None
    in_pre = f"room_id IN ({_in(room_ids)}) AND day >= %s AND day < %s"
    params = [*room_ids, window.pre_start, window.start]
    active = int(
        _fetch(f"SELECT COUNT(DISTINCT uv_id) FROM {T_UVDAY} WHERE {in_pre}", params)[0][0]
    )
    nonzero = [
        float(total)
        for (total,) in _fetch(
            f"SELECT SUM(gmv) FROM {T_UVDAY} WHERE {in_pre} GROUP BY uv_id HAVING SUM(gmv) <> 0",
            params,
        )
    ]
    if not active:
        return None
    values = np.concatenate([np.zeros(active - len(nonzero)), np.asarray(nonzero)])
    cap = float(np.percentile(values, GMV_CAP_PERCENTILE))
    return cap if cap > 0 and math.isfinite(cap) else None


# --- 3. room-level exposures ------------------------------------------------------------------


def _expose_room_audiences(
    experiment: Experiment, room_ids: list[int], days: list[date], now: datetime
) -> None:
    """Assign the room / room-day units active on ``days`` and expose all of their UVs."""
    pairs = _fetch(
        f"SELECT DISTINCT room_id, day FROM {T_UVDAY} "
        f"WHERE room_id IN ({_in(room_ids)}) AND day IN ({_in(days)})",
        [*room_ids, *days],
    )
    if not pairs:
        return
    arms = list(ExperimentArm.objects.filter(experiment=experiment).order_by("position"))
    arm_ids = [a.pk for a in arms]
    phases = list(ExperimentPhase.objects.filter(experiment=experiment).order_by("number"))
    new: dict[str, Assignment] = {}
    for room, raw_day in pairs:
        day = _as_date(raw_day)
        key = unit_key(experiment.unit, room_id=int(room), uv_id="", day=day)
        if key in new:
            continue
        phase = phase_on(phases, day)
        index = allocation_of(experiment, phase, arm_ids).assign(key)
        if index is not None:
            new[key] = Assignment(
                experiment=experiment, unit_key=key, arm_id=arm_ids[index], phase=phase
            )
    Assignment.objects.bulk_create(list(new.values()), ignore_conflicts=True, batch_size=500)
    key_sql = (
        "CAST(u.room_id AS TEXT)"
        if experiment.unit == Experiment.Unit.ROOM
        else "CAST(u.room_id AS TEXT) || ':' || CAST(u.day AS TEXT)"
    )
    _execute(
        f"""
        INSERT INTO {T_EXPOSURE}
            (experiment_id, assignment_id, arm_id, room_id, uv_id, day, created_at)
        SELECT %s, a.id, a.arm_id, u.room_id, u.uv_id, u.day, %s
        FROM {T_UVDAY} u
        JOIN {T_ASSIGNMENT} a ON a.experiment_id = %s AND a.unit_key = {key_sql}
        WHERE u.room_id IN ({_in(room_ids)}) AND u.day IN ({_in(days)})
        ON CONFLICT (experiment_id, room_id, uv_id, day) DO NOTHING
        """,
        [experiment.pk, now, experiment.pk, *room_ids, *days],
    )


# --- 4. members ------------------------------------------------------------------------------


def _stage_member_source(experiment: Experiment, condition: str, params: Sequence[Any]) -> None:
    """(unit, UV[, room]) with their first exposure day among the exposures matching
    ``condition``, in a scratch table shared by the next statements."""
    room_col = "CAST(NULL AS BIGINT)" if experiment.unit == Experiment.Unit.UV else "room_id"
    group_room = "" if experiment.unit == Experiment.Unit.UV else ", room_id"
    _execute(f"DROP TABLE IF EXISTS {MEMBER_SOURCE}")
    _execute(
        f"""
        CREATE {_scratch()} TABLE {MEMBER_SOURCE} AS
        SELECT assignment_id, uv_id, {room_col} AS room_id, MIN(day) AS first_day
        FROM {T_EXPOSURE} WHERE experiment_id = %s AND {condition}
        GROUP BY assignment_id, uv_id{group_room}
        """,
        [experiment.pk, *params],
    )
    _analyze([MEMBER_SOURCE])  # not analyzed yet: freshly filled


def _first_days_move_earlier() -> bool:
    """A late exposure moved a member's first day earlier: every unit-day from the new to the
    old first day changes (for UV units, outcomes count from the first day). Rare; the
    caller recomputes the experiment in full."""
    return bool(
        _fetch(
            f"""
            SELECT 1 FROM {MEMBER_SOURCE} x
            JOIN {KNOWN_MEMBERS} m ON m.unit_id = x.assignment_id AND m.uv_id = x.uv_id
            WHERE x.first_day < m.first_day LIMIT 1
            """
        )
    )


def _stage_known_members(experiment_id: int) -> None:
    """The members of every UV this run touches (exposed since the last scan, or with changed
    UV-days - the touched UV-days hold both): one pass over the member table (a parallel
    hash semi-join), so the next steps join small tables."""
    _execute(f"DROP TABLE IF EXISTS {KNOWN_MEMBERS}")
    _execute(
        f"""
        CREATE {_scratch()} TABLE {KNOWN_MEMBERS} AS
        SELECT unit_id, arm_id, phase_id, uv_id, room_id, first_day, c_gmv, c_views
        FROM {T_MEMBER}
        WHERE experiment_id = %s AND uv_id IN (SELECT uv_id FROM {TOUCHED_UV_DAYS})
        """,
        [experiment_id],
    )
    _analyze([KNOWN_MEMBERS])
    if connection.vendor != "postgresql":  # SQLite probes instead of hashing: index it
        _execute(f"CREATE INDEX {KNOWN_MEMBERS}_key ON {KNOWN_MEMBERS} (unit_id, uv_id)")
        _execute(f"CREATE INDEX {KNOWN_MEMBERS}_uv ON {KNOWN_MEMBERS} (uv_id)")


def _insert_new_members(
    experiment: Experiment, room_ids: list[int], window: Window, *, known: str | None
) -> None:
    """New (unit, UV) pairs with their pre-period covariates. ``known``: the staged members
    of the touched UVs (incremental run; the new ones are added to it too), or None when the
    experiment has no members yet (full refresh)."""
    same_room = "" if experiment.unit == Experiment.Unit.UV else " AND p.room_id = x.room_id"
    not_known = (
        f"""WHERE NOT EXISTS (
            SELECT 1 FROM {known} m WHERE m.unit_id = x.assignment_id AND m.uv_id = x.uv_id
        )"""
        if known
        else ""
    )
    history = T_UVDAY
    if connection.vendor != "postgresql":
        # SQLite joins by nested loops and UvDay has no index by UV (PostgreSQL hashes):
        # probe an indexed copy of the pre-period instead of scanning UvDay per member.
        history = PRE_PERIOD
        _execute(f"DROP TABLE IF EXISTS {PRE_PERIOD}")
        _execute(
            f"CREATE TEMP TABLE {PRE_PERIOD} AS SELECT room_id, day, uv_id, gmv, views "
            f"FROM {T_UVDAY} WHERE day >= %s AND day < %s AND room_id IN ({_in(room_ids)})",
            [window.pre_start, window.start, *room_ids],
        )
        _execute(f"CREATE INDEX {PRE_PERIOD}_uv ON {PRE_PERIOD} (uv_id)")
    _execute(f"DROP TABLE IF EXISTS {NEW_MEMBERS}")
    _execute(
        f"""
        CREATE {_scratch()} TABLE {NEW_MEMBERS} AS
        SELECT x.assignment_id AS unit_id, a.arm_id, a.phase_id, x.uv_id, x.room_id,
               x.first_day, COALESCE(SUM(p.gmv), 0) AS c_gmv,
               CAST(COALESCE(SUM(p.views), 0) AS double precision) AS c_views
        FROM {MEMBER_SOURCE} x
        JOIN {T_ASSIGNMENT} a ON a.id = x.assignment_id
        LEFT JOIN {history} p ON p.uv_id = x.uv_id AND p.day >= %s AND p.day < %s
             AND p.room_id IN ({_in(room_ids)}){same_room}
        {not_known}
        GROUP BY x.assignment_id, x.uv_id, x.room_id, x.first_day, a.arm_id, a.phase_id
        """,
        [window.pre_start, window.start, *room_ids],
    )
    _execute(
        f"""
        INSERT INTO {T_MEMBER}
            (experiment_id, unit_id, arm_id, phase_id, uv_id, room_id, first_day, c_gmv, c_views)
        SELECT %s, unit_id, arm_id, phase_id, uv_id, room_id, first_day, c_gmv, c_views
        FROM {NEW_MEMBERS} ORDER BY uv_id
        ON CONFLICT (unit_id, uv_id) DO NOTHING
        """,
        [experiment.pk],
    )
    if known:
        _execute(f"INSERT INTO {known} SELECT * FROM {NEW_MEMBERS}")


def _analyze(tables: Sequence[str]) -> None:
    """Fresh planner statistics after bulk rewrites (PostgreSQL; autovacuum lags bulk loads,
    and a plan built on stale row counts can turn a hash join into a nested loop). A scratch
    table only needs its size and rough distinct counts to plan the next hash join: a
    3,000-row sample gives them at a tenth of the default sample's cost."""
    if connection.vendor != "postgresql":
        return
    scratch = [t for t in tables if t in SCRATCH_TABLES]
    if scratch:
        _execute("SET LOCAL default_statistics_target = 10")
        _execute(f"ANALYZE {', '.join(scratch)}")
        _execute("SET LOCAL default_statistics_target TO DEFAULT")
    others = [t for t in tables if t not in SCRATCH_TABLES]
    if others:
        _execute(f"ANALYZE {', '.join(others)}")


# --- 5. unit-days ----------------------------------------------------------------------------


_MEMBER_ON = {
    Experiment.Unit.UV: "m.first_day <= act.day",
    Experiment.Unit.ROOM: "m.room_id = act.room_id AND m.first_day <= act.day",
    Experiment.Unit.ROOM_DAY: "m.room_id = act.room_id AND m.first_day = act.day",
}


def _rewrite_unit_days(experiment: Experiment, room_ids: list[int], days: list[date]) -> None:
    """Recompute the unit-days of whole ``days`` from UV-days and exposures (full refresh)."""
    uv_unit = experiment.unit == Experiment.Unit.UV
    act_keys = "uv_id, day" if uv_unit else "room_id, uv_id, day"
    member_on = _MEMBER_ON[Experiment.Unit(experiment.unit)]
    joined = "CASE WHEN m.first_day = act.day THEN"
    pk = experiment.pk
    _execute(
        f"DELETE FROM {T_UNITDAY} WHERE experiment_id = %s AND day IN ({_in(days)})",
        [pk, *days],
    )
    _execute(
        f"""
        INSERT INTO {T_UNITDAY} (experiment_id, day, unit_id, arm_id, phase_id, y_gmv, y_views,
                                 uvs, c_gmv, c_views, new_uvs, new_c_gmv, new_c_views)
        SELECT %s, act.day, m.unit_id, m.arm_id, m.phase_id,
               SUM(act.gmv), SUM(act.views), COUNT(*), SUM(m.c_gmv), SUM(m.c_views),
               SUM({joined} 1 ELSE 0 END),
               SUM({joined} m.c_gmv ELSE 0 END),
               SUM({joined} m.c_views ELSE 0 END)
        FROM (
            SELECT {act_keys}, SUM(gmv) AS gmv, SUM(views) AS views FROM (
                SELECT room_id, uv_id, day, gmv, views FROM {T_UVDAY}
                WHERE room_id IN ({_in(room_ids)}) AND day IN ({_in(days)})
                UNION ALL
                SELECT room_id, uv_id, day, 0, 0 FROM {T_EXPOSURE}
                WHERE experiment_id = %s AND day IN ({_in(days)})
            ) raw
            GROUP BY {act_keys}
        ) act
        JOIN {T_MEMBER} m ON m.experiment_id = %s AND m.uv_id = act.uv_id AND {member_on}
        GROUP BY act.day, m.unit_id, m.arm_id, m.phase_id ORDER BY act.day, m.unit_id
        """,
        [pk, *room_ids, *days, pk, *days, pk],
    )


# --- 6. per-arm sufficient statistics ---------------------------------------------------------

# Per outcome: y, per-day covariate, joining covariate (cumulative).
_METRIC_COLUMNS = {
    "gmv": ("y_gmv", "c_gmv", "new_c_gmv"),
    "views": ("y_views", "c_views", "new_c_views"),
}


@dataclass(frozen=True)
class MetricSpec:
    """One ArmDayStats metric: which rolled-up outcome it sums, and the cap (winsorization)
    applied to each unit's value - the unit-day's for daily stats, the running total's for
    cumulative ones - and to its covariate."""

    name: str
    outcome: str  # "gmv" | "views"
    cap: float | None = None

    def value(self, expression: str) -> str:
        if self.cap is None:
            return expression
        cap = repr(float(self.cap))  # a float the rollup computed, never user input
        return f"(CASE WHEN {expression} > {cap} THEN {cap} ELSE {expression} END)"


Metrics = tuple[MetricSpec, ...]
PLAIN_METRICS: Metrics = (MetricSpec("gmv", "gmv"), MetricSpec("views", "views"))


def metric_specs(experiment: Experiment, gmv_cap: float | None) -> Metrics:
    """The metrics rolled up for ``experiment``: GMV and views, plus capped GMV when the
    experiment reads it (with no cap, when none could be set: it then equals GMV, and the
    readout says so)."""
    wanted = {experiment.primary_metric, *experiment.secondary_metrics}
    if Experiment.Metric.GMV_CAPPED in wanted:
        return (*PLAIN_METRICS, MetricSpec(Experiment.Metric.GMV_CAPPED, "gmv", gmv_cap))
    return PLAIN_METRICS


def _width(metrics: Metrics) -> int:
    """Values per (arm, phase, cutoff): n, sum_x, sum_x2, then the 7 moments per metric."""
    return 3 + len(metrics) * len(_STAT_FIELDS)


_STAT_FIELDS = ("sum_y", "sum_y2", "sum_xy", "sum_c", "sum_c2", "sum_yc", "sum_xc")


def _moment_sql(x: str, y: str, c: str) -> list[str]:
    """SUM expressions in _STAT_FIELDS order for unit-level x, y, c."""
    return [
        f"SUM({y})",
        f"SUM({y} * {y})",
        f"SUM({x} * {y})",
        f"SUM({c})",
        f"SUM({c} * {c})",
        f"SUM({y} * {c})",
        f"SUM({x} * {c})",
    ]


def _stats_rows(
    experiment_id: int,
    day: date,
    scope: str,
    arm_id: int,
    phase_id: int,
    values: Sequence[Any],
    metrics: Metrics,
) -> list[ArmDayStats]:
    """values: n, sum_x, sum_x2, then _STAT_FIELDS for each of ``metrics``."""
    n, sum_x, sum_x2 = int(values[0]), float(values[1] or 0), float(values[2] or 0)
    rows = []
    for i, spec in enumerate(metrics):
        metric = spec.name
        chunk = values[3 + i * len(_STAT_FIELDS) : 3 + (i + 1) * len(_STAT_FIELDS)]
        rows.append(
            ArmDayStats(
                experiment_id=experiment_id,
                phase_id=phase_id,
                arm_id=arm_id,
                day=day,
                scope=scope,
                metric=metric,
                n=n,
                sum_x=sum_x,
                sum_x2=sum_x2,
                **{name: float(v or 0) for name, v in zip(_STAT_FIELDS, chunk, strict=True)},
            )
        )
    return rows


def _rewrite_daily_stats(experiment: Experiment, days: list[date], metrics: Metrics) -> None:
    pk = experiment.pk
    daily_cols = ["COUNT(*)", "SUM(uvs)", "SUM(uvs * uvs)"]
    for spec in metrics:
        y, c, _ = _METRIC_COLUMNS[spec.outcome]
        daily_cols += _moment_sql("uvs", spec.value(y), spec.value(c))
    rows: list[ArmDayStats] = []
    for day, arm_id, phase_id, *values in _fetch(
        f"SELECT day, arm_id, phase_id, {', '.join(daily_cols)} FROM {T_UNITDAY} "
        f"WHERE experiment_id = %s AND day IN ({_in(days)}) GROUP BY day, arm_id, phase_id",
        [pk, *days],
    ):
        rows += _stats_rows(pk, _as_date(day), "daily", int(arm_id), int(phase_id), values, metrics)
    ArmDayStats.objects.filter(
        experiment_id=pk, scope=ArmDayStats.Scope.DAILY, day__in=days
    ).delete()
    ArmDayStats.objects.bulk_create(rows)


def _last_day(experiment_id: int) -> date | None:
    last = _fetch(f"SELECT MAX(day) FROM {T_UNITDAY} WHERE experiment_id = %s", [experiment_id])
    return None if last[0][0] is None else _as_date(last[0][0])


def _cutoffs(experiment_id: int, days: list[date]) -> list[date]:
    """Every day from the first affected one to the last one that has (or will have) data."""
    last = max(filter(None, [_last_day(experiment_id), max(days)]))
    first = min(days)
    return [first + timedelta(days=i) for i in range((last - first).days + 1)]


Sums = dict[tuple[int, int], list[list[float]]]  # (arm, phase) -> per cutoff: _width values


def _running_moments(x: str, g: str, v: str, cg: str, cv: str, metrics: Metrics) -> list[str]:
    """SUM expressions over units of f(running totals): n, sum_x, sum_x2, then each metric's
    moments of its (capped) running outcome and covariate."""
    out = [f"SUM(CASE WHEN {x} > 0 THEN 1 ELSE 0 END)", f"SUM({x})", f"SUM({x} * {x})"]
    running = {"gmv": (g, cg), "views": (v, cv)}
    for spec in metrics:
        y, c = running[spec.outcome]
        out += _moment_sql(x, spec.value(y), spec.value(c))
    return out


def _cumulative_sums(experiment_id: int, cutoffs: list[date], metrics: Metrics) -> Sums:
    """Per (arm, phase): sums over all units of f(running totals through each cutoff), with
    the running totals from one scan (one conditional sum per cutoff)."""
    out: Sums = {}
    for start in range(0, len(cutoffs), CUMULATIVE_DAYS_PER_QUERY):
        chunk = cutoffs[start : start + CUMULATIVE_DAYS_PER_QUERY]
        inner: list[str] = []
        outer: list[str] = []
        params: list[Any] = []
        for k, cutoff in enumerate(chunk):
            columns = {
                "x": "new_uvs",
                "g": "y_gmv",
                "v": "y_views",
                "cg": "new_c_gmv",
                "cv": "new_c_views",
            }
            for name, column in columns.items():
                inner.append(f"SUM(CASE WHEN day <= %s THEN {column} ELSE 0 END) AS {name}{k}")
                params.append(cutoff)
            outer += _running_moments(f"x{k}", f"g{k}", f"v{k}", f"cg{k}", f"cv{k}", metrics)
        sql = f"""
            SELECT arm_id, phase_id, {", ".join(outer)} FROM (
                SELECT unit_id, arm_id, phase_id, {", ".join(inner)}
                FROM {T_UNITDAY} WHERE experiment_id = %s AND day <= %s
                GROUP BY unit_id, arm_id, phase_id
            ) u GROUP BY arm_id, phase_id
        """
        width = _width(metrics)
        for arm_id, phase_id, *values in _fetch(sql, [*params, experiment_id, chunk[-1]]):
            per_cutoff = out.setdefault((int(arm_id), int(phase_id)), [])
            for k in range(len(chunk)):
                per_cutoff.append([float(v or 0) for v in values[k * width : (k + 1) * width]])
    for key, per_cutoff in out.items():  # (arm, phase) seen in only some chunks: pad
        if len(per_cutoff) != len(cutoffs):
            out[key] = per_cutoff + [[0.0] * _width(metrics)] * (len(cutoffs) - len(per_cutoff))
    return out


def _write_cumulative(
    experiment_id: int, cutoffs: list[date], sums: Sums, metrics: Metrics
) -> None:
    last = _last_day(experiment_id)
    rows: list[ArmDayStats] = []
    for (arm_id, phase_id), per_cutoff in sums.items():
        for cutoff, values in zip(cutoffs, per_cutoff, strict=True):
            if last is None or cutoff > last or round(values[0]) <= 0:
                continue
            values = [round(values[0]), *values[1:]]
            rows += _stats_rows(
                experiment_id, cutoff, "cumulative", arm_id, phase_id, values, metrics
            )
    ArmDayStats.objects.filter(
        experiment_id=experiment_id, scope=ArmDayStats.Scope.CUMULATIVE, day__gte=cutoffs[0]
    ).delete()
    ArmDayStats.objects.bulk_create(rows)


def _rewrite_cumulative_stats(experiment_id: int, first: date, metrics: Metrics) -> None:
    """From scratch (full refresh): every unit's running totals."""
    if _last_day(experiment_id) is None:
        ArmDayStats.objects.filter(
            experiment_id=experiment_id, scope=ArmDayStats.Scope.CUMULATIVE
        ).delete()
        return
    cutoffs = _cutoffs(experiment_id, [first])
    _write_cumulative(
        experiment_id, cutoffs, _cumulative_sums(experiment_id, cutoffs, metrics), metrics
    )


def _update_cumulative_stats(
    experiment_id: int, cutoffs: list[date], affected: str, metrics: Metrics
) -> None:
    """new(k) = stored(k) - changed units' old contribution(k) + their new contribution(k).

    Other units keep their running totals, so the stored sums change only by what the
    changed units contribute; one scan of the changed units' unit-days (plus the replaced
    rows kept aside) gives both contributions."""
    current, previous = _changed_contributions(experiment_id, cutoffs, affected, metrics)
    stored = _stored_cumulative(experiment_id, cutoffs, metrics)
    combined: Sums = {}
    for key in set(previous) | set(current) | set(stored):
        zero = [[0.0] * _width(metrics) for _ in cutoffs]
        old, before, after = stored.get(key, zero), previous.get(key, zero), current.get(key, zero)
        combined[key] = [
            [o - b + a for o, b, a in zip(old[k], before[k], after[k], strict=True)]
            for k in range(len(cutoffs))
        ]
    _write_cumulative(experiment_id, cutoffs, combined, metrics)


_RUNNING = {"x": "new_uvs", "g": "y_gmv", "v": "y_views", "cg": "new_c_gmv", "cv": "new_c_views"}


def _outer_sums(prefix: str, k: int, metrics: Metrics) -> list[str]:
    x, g, v, cg, cv = (f"{prefix}{name}{k}" for name in _RUNNING)
    return _running_moments(x, g, v, cg, cv, metrics)


def _changed_contributions(
    experiment_id: int, cutoffs: list[date], affected: str, metrics: Metrics
) -> tuple[Sums, Sums]:
    """(new, old): per (arm, phase) and cutoff, the changed units' sums of f(running totals)
    after and before this run's rewrite. Current rows of affected unit-days count only as
    new, the kept old rows only as old, every other row as both."""
    new: Sums = {}
    old: Sums = {}
    step = CUMULATIVE_DAYS_PER_QUERY // 2
    for start in range(0, len(cutoffs), step):
        chunk = cutoffs[start : start + step]
        inner: list[str] = []
        outer: list[str] = []
        params: list[Any] = []
        for k, cutoff in enumerate(chunk):
            for prefix, flag in (("n", "in_new"), ("o", "in_old")):
                for name, column in _RUNNING.items():
                    inner.append(
                        f"SUM(CASE WHEN day <= %s AND {flag} = 1 THEN {column} ELSE 0 END) "
                        f"AS {prefix}{name}{k}"
                    )
                    params.append(cutoff)
        for k in range(len(chunk)):
            outer += _outer_sums("n", k, metrics) + _outer_sums("o", k, metrics)
        columns = "unit_id, arm_id, phase_id, day, " + ", ".join(_RUNNING.values())
        sql = f"""
            SELECT arm_id, phase_id, {", ".join(outer)} FROM (
                SELECT unit_id, arm_id, phase_id, {", ".join(inner)} FROM (
                    SELECT {", ".join("u." + c.strip() for c in columns.split(","))}, 1 AS in_new,
                           CASE WHEN a.unit_id IS NULL THEN 1 ELSE 0 END AS in_old
                    FROM {T_UNITDAY} u
                    LEFT JOIN {affected} a ON a.unit_id = u.unit_id AND a.day = u.day
                    WHERE u.experiment_id = %s AND u.day <= %s
                      AND u.unit_id IN (SELECT unit_id FROM {CHANGED})
                    UNION ALL
                    SELECT {columns}, 0, 1 FROM {OLD_UNIT_DAYS}
                    WHERE unit_id IN (SELECT unit_id FROM {CHANGED})
                ) r
                GROUP BY unit_id, arm_id, phase_id
            ) per_unit GROUP BY arm_id, phase_id
        """
        width = _width(metrics)
        for arm_id, phase_id, *values in _fetch(sql, [*params, experiment_id, chunk[-1]]):
            key = (int(arm_id), int(phase_id))
            for k in range(len(chunk)):
                base = 2 * k * width
                new.setdefault(key, []).append([float(x or 0) for x in values[base : base + width]])
                old.setdefault(key, []).append(
                    [float(x or 0) for x in values[base + width : base + 2 * width]]
                )
    for sums in (new, old):
        for key, per_cutoff in sums.items():  # a (arm, phase) missing from some chunks: pad
            if len(per_cutoff) != len(cutoffs):
                sums[key] = per_cutoff + [[0.0] * _width(metrics)] * (
                    len(cutoffs) - len(per_cutoff)
                )
    return new, old


def _stored_cumulative(experiment_id: int, cutoffs: list[date], metrics: Metrics) -> Sums:
    """The stored cumulative sums at each cutoff, carrying the last stored day forward (no
    data after it means the same running totals)."""
    by_key: dict[tuple[int, int], dict[date, list[float]]] = {}
    width = _width(metrics)
    position = {spec.name: i for i, spec in enumerate(metrics)}
    for row in ArmDayStats.objects.filter(
        experiment_id=experiment_id,
        scope=ArmDayStats.Scope.CUMULATIVE,
        day__lte=cutoffs[-1],
        metric__in=list(position),
    ).order_by("day"):
        vector = by_key.setdefault((row.arm_id, row.phase_id), {}).setdefault(
            row.day, [0.0] * width
        )
        vector[0], vector[1], vector[2] = float(row.n), row.sum_x, row.sum_x2
        offset = 3 + position[row.metric] * len(_STAT_FIELDS)
        for i, name in enumerate(_STAT_FIELDS):
            vector[offset + i] = getattr(row, name)
    out: Sums = {}
    for key, per_day in by_key.items():
        days_sorted = sorted(per_day)
        series = []
        for cutoff in cutoffs:
            earlier = [d for d in days_sorted if d <= cutoff]
            series.append(list(per_day[earlier[-1]]) if earlier else [0.0] * width)
        out[key] = series
    return out


class _Clock:
    def __init__(self, report: RollupReport) -> None:
        self.report = report
        self.started = time.perf_counter()

    def lap(self, step: str) -> None:
        now = time.perf_counter()
        self.report.steps[step] = self.report.steps.get(step, 0.0) + now - self.started
        self.started = now


def _tune_session() -> None:
    """Bulk statements sort and hash hundreds of thousands of rows: give this transaction
    room to do it in memory, and skip JIT compilation (it costs more than it saves here)."""
    if connection.vendor == "postgresql":
        _execute(f"SET LOCAL work_mem = '{ROLLUP_WORK_MEM}'")
        _execute("SET LOCAL jit = off")
        # Parallel plans for the scans and joins of whole days (see _scratch): the default
        # costs keep PostgreSQL serial for statements of this size; a second core shortens them.
        _execute("SET LOCAL parallel_setup_cost = 100")
        _execute("SET LOCAL parallel_tuple_cost = 0.01")
        # One worker beside the leader on the 2-core reference machine: two workers were
        # 10% slower there (three processes on two cores).
        workers = int(settings.HAT_ROLLUP_PARALLEL_WORKERS)
        _execute(f"SET LOCAL max_parallel_workers_per_gather = {workers}")
        # Never nested loops: the day just written is missing from the planner's statistics
        # until autovacuum analyzes the table, and a nested loop planned for "1 row" over a
        # day of 400,000 unit-days ran 15 s where a hash join takes 0.1 s.
        _execute("SET LOCAL enable_nestloop = off")


def _scratch() -> str:
    """The kind of the run's scratch tables. PostgreSQL: UNLOGGED - parallel workers cannot
    read temporary tables, and the day-sized joins below run on every core only when their
    inputs are ordinary tables; unlogged, since they are rebuilt every run. The runner lock
    allows one run at a time, so fixed names are safe; each run drops them at its end.
    SQLite (``make run``): temporary tables."""
    return "UNLOGGED" if connection.vendor == "postgresql" else "TEMP"
