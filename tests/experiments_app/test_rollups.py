"""Rollups: incremental runs (day by day, late events, late history) end where a full
recompute ends; UV-days equal a direct aggregate of the events; room audiences are exposed."""

from __future__ import annotations

import hashlib
import math
import os
import subprocess
import sys
from collections import defaultdict
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from django.db import connection

from experiments_app.exposures import exposures_log_bulk
from experiments_app.ingestion import events_ingest
from experiments_app.models import ArmDayStats, Event, ExperimentMember, Exposure, UnitDay, UvDay
from experiments_app.readouts import experiment_readout
from experiments_app.rollups import PRE_PERIOD_DAYS, rollups_update
from experiments_app.traffic_simulation import (
    backdate_start,
    exposure_rows,
    plan_traffic,
    send_events,
)
from tests.db_sessions import wait_for_other_sessions_to_close
from tests.factories import RoomFactory

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def _stats_snapshot(experiment_id: int) -> dict[tuple, tuple]:  # type: ignore[type-arg]
    rows = ArmDayStats.objects.filter(experiment_id=experiment_id)
    return {
        (r.phase_id, r.arm_id, r.day, r.scope, r.metric): (
            r.n,
            r.sum_y,
            r.sum_y2,
            r.sum_x,
            r.sum_x2,
            r.sum_xy,
            r.sum_c,
            r.sum_c2,
            r.sum_yc,
            r.sum_xc,
        )
        for r in rows
    }


def _assert_same(a: dict, b: dict) -> None:  # type: ignore[type-arg]
    assert a.keys() == b.keys()
    for key in a:
        for x, y in zip(a[key], b[key], strict=True):
            assert math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9), (key, a[key], b[key])


@pytest.mark.parametrize("unit", ["uv", "room", "room_day"])
def test_incremental_rollups_equal_a_full_recompute(
    unit, published_room, merchant, make_experiment
):  # type: ignore[no-untyped-def]
    rooms = [published_room] + [RoomFactory(owner=merchant, name=f"R{i}") for i in range(4)]
    experiment = make_experiment(rooms, unit=unit, weights=(6000, 4000))
    plan = plan_traffic(experiment, uvs=1500, days=4, lift=0.1, seed=5)
    backdate_start(plan)
    exposures = list(exposure_rows(plan))
    # day by day: the day's events and exposures, then a rollup; day 1's events arrive two
    # days late (with day 3's), and the pre-period history arrives after everything else
    rollups_update()
    for day in range(plan.days):
        if day != 1:
            send_events(plan, range(day, day + 1))
        if day == 3:
            send_events(plan, range(1, 2))
        todays = [row for row in exposures if row[2] == plan.day(day)]
        exposures_log_bulk(experiment=experiment, rows=todays)
        report = rollups_update()
        assert experiment.pk in report.experiments
    assert not report.full_refresh  # every run after the first was incremental
    incremental = _stats_snapshot(experiment.pk)
    assert incremental
    # when everything is recomputed from scratch
    rollups_update(full=True)
    # then nothing changes
    _assert_same(incremental, _stats_snapshot(experiment.pk))
    # and late pre-period history changes the covariates: a full refresh
    send_events(plan, range(-PRE_PERIOD_DAYS, 0))
    late = rollups_update()
    assert experiment.pk in late.full_refresh


def _late_group(uv_id: str) -> int:
    """A fixed split of the UVs: 0 exposed once, late; 1 the first exposure late; 2 on time."""
    return int(hashlib.sha256(uv_id.encode()).hexdigest(), 16) % 3


@pytest.mark.parametrize("unit", ["uv", "room", "room_day"])
def test_late_exposures_count_the_outcomes_already_rolled_up(
    unit, published_room, merchant, make_experiment
):  # type: ignore[no-untyped-def]
    # given day-by-day rollups of events and on-time exposures, where a third of the UVs is
    # exposed once, on its first active day, but logged only after all its events were rolled
    # up, and another third's first exposure comes after its later ones (a backend retrying,
    # a bulk backfill)
    rooms = [published_room, RoomFactory(owner=merchant, name="R1")]
    experiment = make_experiment(rooms, unit=unit, weights=(5000, 5000))
    plan = plan_traffic(experiment, uvs=600, days=4, lift=0.1, seed=9)
    backdate_start(plan)
    send_events(plan, range(-PRE_PERIOD_DAYS, 0))
    exposures = list(exposure_rows(plan))
    first_day: dict[str, date] = {}
    for _, uv_id, when in exposures:
        first_day[uv_id] = min(first_day.get(uv_id, when), when)
    late_once = [r for r in exposures if _late_group(r[1]) == 0 and r[2] == first_day[r[1]]]
    late_first = [r for r in exposures if _late_group(r[1]) == 1 and r[2] == first_day[r[1]]]
    rollups_update()
    for day in range(plan.days):
        send_events(plan, range(day, day + 1))
        on_time = [
            r
            for r in exposures
            if r[2] == plan.day(day)
            and (_late_group(r[1]) == 2 or (_late_group(r[1]) == 1 and r[2] != first_day[r[1]]))
        ]
        exposures_log_bulk(experiment=experiment, rows=on_time)
        rollups_update()
    # when the UVs never exposed so far get their one exposure, after all their events
    exposures_log_bulk(experiment=experiment, rows=late_once)
    report = rollups_update()
    # then the run counts their outcomes on every day from that exposure on, as a full
    # recompute does; for UV units they are new members, and the run stays incremental
    # (room units expose a room's whole audience, so a late exposure on a day without
    # events moves a member's first day earlier: a full refresh)
    if unit == "uv":
        assert not report.full_refresh
    incremental = _stats_snapshot(experiment.pk)
    rollups_update(full=True)
    _assert_same(incremental, _stats_snapshot(experiment.pk))
    # and when first exposures arrive after the later ones (first days move earlier), too
    exposures_log_bulk(experiment=experiment, rows=late_first)
    rollups_update()
    incremental = _stats_snapshot(experiment.pk)
    rollups_update(full=True)
    _assert_same(incremental, _stats_snapshot(experiment.pk))


@pytest.mark.parametrize("unit", ["uv", "room", "room_day"])
def test_a_late_exposure_counts_six_views_not_one(unit, published_room, make_experiment):  # type: ignore[no-untyped-def]
    # given one viewer with one item-page view a day for six days, rolled up day by day
    # before any exposure of theirs is logged (the minimal case)
    experiment = make_experiment([published_room], unit=unit, weights=(5000, 5000))
    plan = plan_traffic(experiment, uvs=1, days=6, lift=0.0, seed=1)
    backdate_start(plan)
    for offset in range(6):
        day = plan.day(offset)
        event = {
            "event_id": f"late-view-{offset}",
            "uv_id": "late-viewer",
            "room": published_room.pk,
            "type": "item_page_view",
            "ts": f"{day.isoformat()}T12:00:00Z",
        }
        assert events_ingest(room=published_room, events=[event]).accepted == 1
        rollups_update()
    # when the viewer's first-day exposure is logged late
    exposures_log_bulk(
        experiment=experiment, rows=[(published_room.pk, "late-viewer", plan.day(0))]
    )
    rollups_update()
    # then every view from the first day on counts (a room unit's audience was exposed on
    # each of its days already; a room-day unit counts each day on its own)
    views = sum(
        UnitDay.objects.filter(experiment_id=experiment.pk).values_list("y_views", flat=True)
    )
    assert views == 6
    incremental = _stats_snapshot(experiment.pk)
    rollups_update(full=True)
    _assert_same(incremental, _stats_snapshot(experiment.pk))


def test_incremental_without_late_history_touches_only_new_days(published_room, make_experiment):
    experiment = make_experiment([published_room])
    plan = plan_traffic(experiment, uvs=800, days=3, lift=0.0, seed=3)
    backdate_start(plan)
    send_events(plan, range(-PRE_PERIOD_DAYS, 2))
    exposures_log_bulk(
        experiment=experiment, rows=[r for r in exposure_rows(plan) if r[2] < plan.day(2)]
    )
    assert rollups_update().full_refresh == [experiment.pk]  # first run after the start
    send_events(plan, range(2, 3))
    exposures_log_bulk(
        experiment=experiment, rows=[r for r in exposure_rows(plan) if r[2] == plan.day(2)]
    )
    report = rollups_update()
    # only the new day, plus days whose exposures were logged within the scan overlap
    assert report.full_refresh == [] and plan.day(2) in report.experiments[experiment.pk]
    snapshot = _stats_snapshot(experiment.pk)
    rollups_update(full=True)
    _assert_same(snapshot, _stats_snapshot(experiment.pk))


def test_uv_days_equal_a_direct_aggregate_of_the_events(published_room, make_experiment):
    experiment = make_experiment([published_room])
    plan = plan_traffic(experiment, uvs=500, days=3, lift=0.0, seed=9)
    backdate_start(plan)
    for day in range(-2, 3):
        send_events(plan, range(day, day + 1))
        rollups_update()
    expected: dict[tuple, list[float]] = defaultdict(lambda: [0.0, 0.0])  # type: ignore[type-arg]
    for event in Event.objects.all():
        cell = expected[(event.room_id, event.day, event.uv_id)]
        if event.type == "item_page_view":
            cell[1] += 1
        else:
            cell[0] += float(event.amount) * (1 if event.type == "confirmed_receipt" else -1)
    actual = {(r.room_id, r.day, r.uv_id): [r.gmv, float(r.views)] for r in UvDay.objects.all()}
    assert actual.keys() == expected.keys()
    for key, (gmv, views) in expected.items():
        assert actual[key][0] == pytest.approx(gmv, abs=1e-6) and actual[key][1] == views


def test_refunds_are_netted_and_views_counted(published_room, make_experiment):
    from django.utils import timezone

    from experiments_app.ingestion import events_ingest

    now = timezone.now().isoformat()
    base = {"uv_id": "u1", "room": published_room.pk, "ts": now}
    money = base | {"currency": "USD"}
    events_ingest(
        room=published_room,
        events=[
            money | {"event_id": "r1", "type": "confirmed_receipt", "amount": "100.00"},
            money | {"event_id": "r2", "type": "confirmed_receipt", "amount": "40.50"},
            money | {"event_id": "f1", "type": "refund", "amount": "40.50"},
            base | {"event_id": "v1", "type": "item_page_view"},
            base | {"event_id": "v2", "type": "item_page_view"},
        ],
    )
    rollups_update()
    row = UvDay.objects.get(uv_id="u1")
    assert (row.gmv, row.views, row.events) == (100.0, 2, 5)


def test_a_second_run_with_nothing_new_changes_nothing(published_room, make_experiment):
    experiment = make_experiment([published_room])
    plan = plan_traffic(experiment, uvs=300, days=2, lift=0.0, seed=1)
    backdate_start(plan)
    send_events(plan, range(-PRE_PERIOD_DAYS, 2))
    exposures_log_bulk(experiment=experiment, rows=exposure_rows(plan))
    rollups_update()
    before = _stats_snapshot(experiment.pk)
    report = rollups_update()
    assert report.events == 0
    # equal up to floating-point summation order (a re-aggregation may add in another order)
    _assert_same(before, _stats_snapshot(experiment.pk))


def test_room_day_units_expose_every_active_viewer_of_the_room(published_room, make_experiment):
    # given a room-day experiment and events from viewers who never commented
    experiment = make_experiment([published_room], unit="room_day", weights=(5000, 5000))
    plan = plan_traffic(experiment, uvs=400, days=2, lift=0.0, seed=4)
    backdate_start(plan)
    send_events(plan, range(0, 2))
    assert not Exposure.objects.exists()
    # when the rollup runs
    rollups_update()
    # then each UV with events on a day is exposed in that room-day, under one arm per day
    active = set(Event.objects.values_list("uv_id", "day").distinct())
    exposed = set(Exposure.objects.values_list("uv_id", "day"))
    assert exposed == active
    arms_per_day = defaultdict(set)
    for day, arm in Exposure.objects.values_list("day", "arm_id"):
        arms_per_day[day].add(arm)
    assert all(len(arms) == 1 for arms in arms_per_day.values())
    assert ExperimentMember.objects.filter(experiment_id=experiment.pk).count() == len(exposed)
    assert UnitDay.objects.filter(experiment_id=experiment.pk).count() == 2


@pytest.mark.celery
@pytest.mark.django_db(transaction=True)
def test_rollup_task_on_a_real_worker(published_room, make_experiment):
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith("redis://"):
        pytest.skip("needs CELERY_BROKER_URL=redis://... (a real broker)")
    from console.celery import app as celery_app
    from experiments_app.tasks import update_rollups

    experiment = make_experiment([published_room])
    plan = plan_traffic(experiment, uvs=400, days=2, lift=0.0, seed=2)
    backdate_start(plan)
    send_events(plan, range(-PRE_PERIOD_DAYS, 2))
    exposures_log_bulk(experiment=experiment, rows=exposure_rows(plan))
    settings_dict = connection.settings_dict
    env = os.environ | {
        "DATABASE_URL": f"postgres://{settings_dict['USER']}@{settings_dict['HOST']}:"
        f"{settings_dict['PORT']}/{settings_dict['NAME']}",
        "CELERY_BROKER_URL": broker,
    }
    queue = f"rollup-test-{os.getpid()}"
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "console",
            "worker",
            "--pool=solo",
            "--concurrency=1",
            f"--queues={queue}",
            "--loglevel=WARNING",
        ],
        cwd=ROOT,
        env=env,
    )
    try:
        result = celery_app.send_task(update_rollups.name, queue=queue)
        outcome = result.get(timeout=90)
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        wait_for_other_sessions_to_close()
    assert outcome["experiments"][str(experiment.pk)] >= 2  # the window runs to today
    assert outcome["events"] == Event.objects.count()
    readout = experiment_readout(experiment=experiment)
    assert readout.has_data and len(readout.days) == 2


def test_capped_gmv_equals_a_direct_winsorized_aggregate(published_room, merchant, make_experiment):  # type: ignore[no-untyped-def]
    # given a UV experiment that reads capped GMV, with pre-period history, rolled up day by day
    rooms = [published_room, RoomFactory(owner=merchant, name="R1")]
    experiment = make_experiment(
        rooms, weights=(5000, 5000), secondary_metrics=["gmv_capped"], cuped=True
    )
    plan = plan_traffic(experiment, uvs=2000, days=4, lift=0.1, seed=21)
    backdate_start(plan)
    send_events(plan, range(-PRE_PERIOD_DAYS, 0))
    exposures = list(exposure_rows(plan))
    rollups_update()
    for day in range(plan.days):
        send_events(plan, range(day, day + 1))
        exposures_log_bulk(
            experiment=experiment, rows=[r for r in exposures if r[2] == plan.day(day)]
        )
        report = rollups_update()
    assert not report.full_refresh
    incremental = _stats_snapshot(experiment.pk)
    # then the cap is the 99th percentile of per-UV pre-period GMV over the UVs active then
    start, last = plan.day(0), plan.day(plan.days - 1)
    pre: dict[str, float] = defaultdict(float)
    post: dict[str, dict[date, float]] = defaultdict(lambda: defaultdict(float))
    for event in Event.objects.all():
        sign = {"confirmed_receipt": 1.0, "refund": -1.0}.get(event.type, 0.0)
        if event.day < start:
            pre[event.uv_id] += sign * float(event.amount)
        else:
            post[event.uv_id][event.day] += sign * float(event.amount)
    cap = float(np.percentile(list(pre.values()), 99.0))
    experiment.rollup.refresh_from_db()
    assert cap > 0 and experiment.rollup.gmv_cap == pytest.approx(cap, rel=1e-12)
    # and the capped cumulative sums are those of min(each member's GMV so far, cap)
    first: dict[str, date] = {}
    for _, uv_id, when in exposures:
        first[uv_id] = min(first.get(uv_id, when), when)
    arm_of = dict(
        ExperimentMember.objects.filter(experiment_id=experiment.pk).values_list("uv_id", "arm_id")
    )
    expected: dict[int, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for uv_id, day0 in first.items():
        total = sum(v for d, v in post[uv_id].items() if day0 <= d <= last)
        cell = expected[arm_of[uv_id]]
        cell[0] += 1
        cell[1] += min(total, cap)
        cell[2] += min(pre[uv_id], cap)
    for arm_id, (n, sum_y, sum_c) in expected.items():
        row = ArmDayStats.objects.get(
            experiment_id=experiment.pk,
            arm_id=arm_id,
            day=last,
            scope="cumulative",
            metric="gmv_capped",
        )
        assert row.n == n
        assert row.sum_y == pytest.approx(sum_y, rel=1e-9)
        assert row.sum_c == pytest.approx(sum_c, rel=1e-9)
    uncapped = ArmDayStats.objects.filter(
        experiment_id=experiment.pk, day=last, scope="cumulative", metric="gmv"
    )
    assert sum(r.sum_y for r in uncapped) > sum(v[1] for v in expected.values())  # it bit
    # and the incremental runs end where a full recompute ends
    rollups_update(full=True)
    _assert_same(incremental, _stats_snapshot(experiment.pk))
    # and the readout reports it, naming the cap
    readout = experiment_readout(experiment=experiment)
    assert [m.metric for m in readout.metrics] == ["gmv", "gmv_capped"]
    assert any(f"at most {cap:,.2f}" in note for note in readout.notes)
