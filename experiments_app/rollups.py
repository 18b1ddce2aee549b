"""Bring the experiment rollups up to date, incrementally and set-based.

One run (:func:`rollups_update`), every step a handful of ``INSERT ... SELECT ... GROUP BY``
statements - never a Python loop over events or UVs:

1. **Events -> UvDay.** New events (id above the watermark, read under the ingestion
   advisory lock so no lower id can still commit) are summed per (room, day, UV) and upserted.
   The (room, day) pairs they touched are remembered.
2. **Affected days per experiment**: touched days of its rooms inside its window, plus days of
   exposures logged since the last run. A touched pre-period day (covariates change), a new
   experiment or a new phase means a full refresh of that experiment instead.
3. **Room-level exposures** (room and room-day units): every UV active in a covered room-day
   is exposed (the host's replies are broadcast to the room).
4. **Members**: per (unit, UV) the first exposure day, with the UV's pre-period GMV and views
   (the 14 days before the start, same rooms) as CUPED covariates.
5. **UnitDay** for the affected days: each unit's outcome that day (its members' events),
   UVs active that day with their covariates, and UVs joining it that day.
6. **ArmDayStats**: per (cohort phase, arm) the sums of the day's units ("daily") for the
   affected days, and of per-unit running totals through each day ("cumulative") from the
   first affected day on - per docs/STATISTICS.md, per-UV totals cannot be merged from
   per-day sums, so the running totals are recomputed in one scan with one conditional
   sum per day.

Each experiment's rewrite is one transaction, so a readout never sees half a refresh.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

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
METRICS = ("gmv", "views")

T_EVENT = Event._meta.db_table
T_UVDAY = UvDay._meta.db_table
T_EXPOSURE = Exposure._meta.db_table
T_ASSIGNMENT = Assignment._meta.db_table
T_MEMBER = ExperimentMember._meta.db_table
T_UNITDAY = UnitDay._meta.db_table


@dataclass
class RollupReport:
    events: int = 0
    uv_days: int = 0
    experiments: dict[int, list[date]] = field(default_factory=dict)
    full_refresh: list[int] = field(default_factory=list)
    seconds: float = 0.0
    skipped: bool = False

    def summary(self) -> str:
        if self.skipped:
            return "another rollup run holds the lock; skipped"
        parts = [f"{self.events} new events -> {self.uv_days} UV-day rows"]
        for pk, days in self.experiments.items():
            kind = "full refresh" if pk in self.full_refresh else "incremental"
            parts.append(f"experiment {pk}: {len(days)} day(s), {kind}")
        return f"{'; '.join(parts)} in {self.seconds:.2f} s"


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
    high = _committed_high_watermark()
    low = state.last_event_id
    if high <= low:
        return set()
    with transaction.atomic():
        touched = {
            (int(room), _as_date(day))
            for room, day in _fetch(
                f"SELECT DISTINCT room_id, day FROM {T_EVENT} WHERE id > %s AND id <= %s",
                [low, high],
            )
        }
        report.uv_days = _execute(
            f"""
            INSERT INTO {T_UVDAY} (room_id, day, uv_id, gmv, views, events)
            SELECT room_id, day, uv_id,
                   SUM(CASE WHEN type = 'confirmed_receipt' THEN amount
                            WHEN type = 'refund' THEN -amount ELSE 0 END),
                   SUM(CASE WHEN type = 'item_page_view' THEN 1 ELSE 0 END),
                   COUNT(*)
            FROM {T_EVENT} WHERE id > %s AND id <= %s
            GROUP BY room_id, day, uv_id
            ON CONFLICT (room_id, day, uv_id) DO UPDATE SET
                gmv = {T_UVDAY}.gmv + excluded.gmv,
                views = {T_UVDAY}.views + excluded.views,
                events = {T_UVDAY}.events + excluded.events
            """,
            [low, high],
        )
        report.events = _fetch(
            f"SELECT COUNT(*) FROM {T_EVENT} WHERE id > %s AND id <= %s", [low, high]
        )[0][0]
        state.last_event_id = high
        state.save(update_fields=["last_event_id", "updated_at"])
    return touched


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


def _exposure_days_since(since: datetime | None) -> dict[int, set[date]]:
    if since is None:
        return {}
    out: dict[int, set[date]] = {}
    for experiment_id, day in _fetch(
        f"SELECT DISTINCT experiment_id, day FROM {T_EXPOSURE} WHERE created_at >= %s",
        [since - EXPOSURE_SCAN_OVERLAP],
    ):
        out.setdefault(int(experiment_id), set()).add(_as_date(day))
    return out


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
        exposure_days = _exposure_days_since(scan_from)
        experiments = Experiment.objects.filter(
            status__in=[Experiment.Status.RUNNING, Experiment.Status.STOPPED]
        ).order_by("pk")
        if experiment_ids is not None:
            experiments = experiments.filter(pk__in=experiment_ids)
        for experiment in experiments:
            rollup, _ = ExperimentRollup.objects.get_or_create(experiment=experiment)
            days = _refresh_experiment(
                experiment,
                rollup,
                touched=touched,
                exposure_days=exposure_days.get(experiment.pk, set()),
                full=full or rollup.full_refresh_needed,
                now=now,
                report=report,
            )
            if days:
                report.experiments[experiment.pk] = days
        state.exposures_scanned_at = now
        state.save(update_fields=["exposures_scanned_at", "updated_at"])
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
    exposure_days: set[date],
    full: bool,
    now: datetime,
    report: RollupReport,
) -> list[date]:
    window = experiment_window(experiment, now)
    room_ids = sorted(experiment.rooms.values_list("pk", flat=True))
    rooms = set(room_ids)
    if not full:
        pre_touched = any(
            room in rooms and window.pre_start <= day < window.start for room, day in touched
        )
        full = pre_touched
    if full:
        days = window.days()
    else:
        touched_days = {
            day for room, day in touched if room in rooms and window.start <= day <= window.end
        }
        days = sorted(touched_days | {d for d in exposure_days if window.start <= d <= window.end})
    if not days:
        return []
    with transaction.atomic():
        if full:
            report.full_refresh.append(experiment.pk)
            for model in (ExperimentMember, UnitDay, ArmDayStats):
                model.objects.filter(experiment_id=experiment.pk).delete()
        if experiment.unit != Experiment.Unit.UV:
            _expose_room_audiences(experiment, room_ids, days, now)
        days = _extend_for_earlier_first_days(experiment, days)
        _upsert_members(experiment, room_ids, window, days)
        _rewrite_unit_days(experiment, room_ids, days)
        _rewrite_stats(experiment, days, window)
        rollup.full_refresh_needed = False
        rollup.refreshed_at = now
        rollup.save(update_fields=["full_refresh_needed", "refreshed_at"])
    return days


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


def _member_source(experiment: Experiment, days: list[date]) -> tuple[str, list[Any]]:
    """(unit, UV[, room]) with their first exposure day among ``days``."""
    room_col = "CAST(NULL AS BIGINT)" if experiment.unit == Experiment.Unit.UV else "room_id"
    group_room = "" if experiment.unit == Experiment.Unit.UV else ", room_id"
    sql = f"""
        SELECT assignment_id, uv_id, {room_col} AS room_id, MIN(day) AS first_day
        FROM {T_EXPOSURE} WHERE experiment_id = %s AND day IN ({_in(days)})
        GROUP BY assignment_id, uv_id{group_room}
    """
    return sql, [experiment.pk, *days]


def _extend_for_earlier_first_days(experiment: Experiment, days: list[date]) -> list[date]:
    """A late exposure can move a member's first day earlier; every day from the new to the
    old first day then changes (for UV units, outcomes count from the first day)."""
    source, params = _member_source(experiment, days)
    low, high = _fetch(
        f"""
        SELECT MIN(x.first_day), MAX(m.first_day) FROM ({source}) x
        JOIN {T_MEMBER} m ON m.unit_id = x.assignment_id AND m.uv_id = x.uv_id
        WHERE x.first_day < m.first_day
        """,
        params,
    )[0]
    if low is None:
        return days
    low, high = _as_date(low), _as_date(high)
    extra = {low + timedelta(days=i) for i in range((high - low).days + 1)}
    return sorted(set(days) | extra)


def _upsert_members(
    experiment: Experiment, room_ids: list[int], window: Window, days: list[date]
) -> None:
    source, params = _member_source(experiment, days)
    uv_unit = experiment.unit == Experiment.Unit.UV
    pre_keys = "p.uv_id" if uv_unit else "p.room_id, p.uv_id"
    pre_join = "pre.uv_id = x.uv_id" + ("" if uv_unit else " AND pre.room_id = x.room_id")
    _execute(
        f"""
        INSERT INTO {T_MEMBER}
            (experiment_id, unit_id, arm_id, phase_id, uv_id, room_id, first_day, c_gmv, c_views)
        SELECT %s, x.assignment_id, a.arm_id, a.phase_id, x.uv_id, x.room_id, x.first_day,
               COALESCE(pre.gmv, 0), COALESCE(pre.views, 0)
        FROM ({source}) x
        JOIN {T_ASSIGNMENT} a ON a.id = x.assignment_id
        LEFT JOIN (
            SELECT {pre_keys}, SUM(p.gmv) AS gmv, SUM(p.views) AS views
            FROM {T_UVDAY} p
            WHERE p.room_id IN ({_in(room_ids)}) AND p.day >= %s AND p.day < %s
              AND p.uv_id IN (
                  SELECT uv_id FROM {T_EXPOSURE} WHERE experiment_id = %s AND day IN ({_in(days)})
              )
            GROUP BY {pre_keys}
        ) pre ON {pre_join}
        WHERE 1 = 1
        ON CONFLICT (unit_id, uv_id) DO UPDATE SET first_day = excluded.first_day
        WHERE excluded.first_day < {T_MEMBER}.first_day
        """,
        [
            experiment.pk,
            *params,
            *room_ids,
            window.pre_start,
            window.start,
            experiment.pk,
            *days,
        ],
    )


# --- 5. unit-days ----------------------------------------------------------------------------


def _rewrite_unit_days(experiment: Experiment, room_ids: list[int], days: list[date]) -> None:
    unit = experiment.unit
    act_keys = "uv_id, day" if unit == Experiment.Unit.UV else "room_id, uv_id, day"
    member_on = {
        Experiment.Unit.UV: "m.first_day <= act.day",
        Experiment.Unit.ROOM: "m.room_id = act.room_id AND m.first_day <= act.day",
        Experiment.Unit.ROOM_DAY: "m.room_id = act.room_id AND m.first_day = act.day",
    }[Experiment.Unit(unit)]
    joined = "CASE WHEN m.first_day = act.day THEN"
    _execute(
        f"DELETE FROM {T_UNITDAY} WHERE experiment_id = %s AND day IN ({_in(days)})",
        [experiment.pk, *days],
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
        GROUP BY act.day, m.unit_id, m.arm_id, m.phase_id
        """,
        [experiment.pk, *room_ids, *days, experiment.pk, *days, experiment.pk],
    )


# --- 6. per-arm sufficient statistics ---------------------------------------------------------

# Per metric: outcome y, per-day covariate, joining covariate (cumulative).
_METRIC_COLUMNS = {
    "gmv": ("y_gmv", "c_gmv", "new_c_gmv"),
    "views": ("y_views", "c_views", "new_c_views"),
}
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
    experiment_id: int, day: date, scope: str, arm_id: int, phase_id: int, values: Sequence[Any]
) -> list[ArmDayStats]:
    """values: n, sum_x, sum_x2, then _STAT_FIELDS for gmv, then for views."""
    n, sum_x, sum_x2 = int(values[0]), float(values[1] or 0), float(values[2] or 0)
    rows = []
    for i, metric in enumerate(METRICS):
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


def _rewrite_stats(experiment: Experiment, days: list[date], window: Window) -> None:
    pk = experiment.pk
    daily_cols = ["COUNT(*)", "SUM(uvs)", "SUM(uvs * uvs)"]
    for metric in METRICS:
        y, c, _ = _METRIC_COLUMNS[metric]
        daily_cols += _moment_sql("uvs", y, c)
    rows: list[ArmDayStats] = []
    for day, arm_id, phase_id, *values in _fetch(
        f"SELECT day, arm_id, phase_id, {', '.join(daily_cols)} FROM {T_UNITDAY} "
        f"WHERE experiment_id = %s AND day IN ({_in(days)}) GROUP BY day, arm_id, phase_id",
        [pk, *days],
    ):
        rows += _stats_rows(pk, _as_date(day), "daily", int(arm_id), int(phase_id), values)
    ArmDayStats.objects.filter(
        experiment_id=pk, scope=ArmDayStats.Scope.DAILY, day__in=days
    ).delete()
    ArmDayStats.objects.bulk_create(rows)

    last = _fetch(f"SELECT MAX(day) FROM {T_UNITDAY} WHERE experiment_id = %s", [pk])[0][0]
    if last is None:
        ArmDayStats.objects.filter(experiment_id=pk, scope=ArmDayStats.Scope.CUMULATIVE).delete()
        return
    last_day = _as_date(last)
    first = min(days)
    ArmDayStats.objects.filter(
        experiment_id=pk, scope=ArmDayStats.Scope.CUMULATIVE, day__gte=first
    ).delete()
    cutoffs = [first + timedelta(days=i) for i in range((last_day - first).days + 1)]
    for start in range(0, len(cutoffs), CUMULATIVE_DAYS_PER_QUERY):
        ArmDayStats.objects.bulk_create(
            _cumulative_rows(pk, cutoffs[start : start + CUMULATIVE_DAYS_PER_QUERY])
        )


def _cumulative_rows(experiment_id: int, cutoffs: list[date]) -> list[ArmDayStats]:
    """Per-unit running totals through each cutoff (one scan), then sums over units."""
    inner: list[str] = []
    outer: list[str] = []
    params: list[Any] = []
    for k, cutoff in enumerate(cutoffs):
        sums = {
            "x": "new_uvs",
            "g": "y_gmv",
            "v": "y_views",
            "cg": "new_c_gmv",
            "cv": "new_c_views",
        }
        for name, column in sums.items():
            inner.append(f"SUM(CASE WHEN day <= %s THEN {column} ELSE 0 END) AS {name}{k}")
            params.append(cutoff)
        outer += [f"SUM(CASE WHEN x{k} > 0 THEN 1 ELSE 0 END)", f"SUM(x{k})", f"SUM(x{k} * x{k})"]
        outer += _moment_sql(f"x{k}", f"g{k}", f"cg{k}")
        outer += _moment_sql(f"x{k}", f"v{k}", f"cv{k}")
    sql = f"""
        SELECT arm_id, phase_id, {", ".join(outer)} FROM (
            SELECT unit_id, arm_id, phase_id, {", ".join(inner)}
            FROM {T_UNITDAY} WHERE experiment_id = %s AND day <= %s
            GROUP BY unit_id, arm_id, phase_id
        ) u GROUP BY arm_id, phase_id
    """
    width = 3 + 2 * len(_STAT_FIELDS)
    rows: list[ArmDayStats] = []
    for arm_id, phase_id, *values in _fetch(sql, [*params, experiment_id, cutoffs[-1]]):
        for k, cutoff in enumerate(cutoffs):
            chunk = values[k * width : (k + 1) * width]
            if int(chunk[0] or 0) == 0:
                continue
            rows += _stats_rows(
                experiment_id, cutoff, "cumulative", int(arm_id), int(phase_id), chunk
            )
    return rows
