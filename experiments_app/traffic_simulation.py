"""Realistic simulated traffic for a running experiment, through the real write paths.

``experiments_app.stats.simulation`` draws per-UV-day GMV and item-page views (heavy-tailed
GMV, most viewers never buy, day-of-week seasonality, returning UVs) with a known true lift.
Here the experiment's own hash assignment decides which units are treated (so the lift lands
where the platform routes treatment), and the draws become:

* events - item-page views, confirmed receipts (amounts in cents; some orders refunded,
  as a receipt plus a refund) and the UVs' pre-period history - sent in batches of up to
  10,000 through :func:`experiments_app.ingestion.events_ingest`;
* exposures - one per active UV-day of a covered unit, through the bulk assignment code;

then the rollups run. The experiment's start is moved back to the first simulated day (the
last one is yesterday), which is why the command refuses experiments that already have
exposures: it is a demo and test tool, not something to point at a live experiment.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt
from django.db import transaction
from django.utils import timezone

from experiments_app.assignment import unit_key
from experiments_app.exposures import allocation_of, exposures_log_bulk
from experiments_app.ingestion import events_ingest
from experiments_app.models import (
    Experiment,
    ExperimentArm,
    ExperimentPhase,
    ExperimentRollup,
    Exposure,
)
from experiments_app.rollups import PRE_PERIOD_DAYS, RollupReport, rollups_update
from experiments_app.stats.simulation import (
    SimulatedExperiment,
    TrafficModel,
    Unit,
    simulate_experiment,
)
from harness_app.models import Room

REFUNDED_ORDER_SHARE = 0.1  # buyer-days that also carry a refunded order (receipt + refund)
BATCH = 10_000


class SimulationRefused(Exception):
    pass


@dataclass
class TrafficPlan:
    experiment: Experiment
    sim: SimulatedExperiment
    rooms: list[Room]
    start: date
    days: int
    seed: int
    unit_arm_index: npt.NDArray[np.int64]  # real arm index per simulated unit, -1: not covered
    row_unit: npt.NDArray[np.int64]  # simulated unit of each UV-day row
    gmv_cents: npt.NDArray[np.int64]  # per UV-day row
    pre_gmv_cents: npt.NDArray[np.int64]  # per UV

    def uv_id(self, index: int) -> str:
        return f"sim{self.seed}-{index}"

    def day(self, offset: int) -> date:
        return self.start + timedelta(days=offset)


@dataclass
class SimulationSummary:
    plan: TrafficPlan
    events_sent: int
    accepted: int
    duplicate: int
    rejected: int
    exposures: int
    rollups: RollupReport | None


def plan_traffic(
    experiment: Experiment,
    *,
    uvs: int,
    days: int,
    lift: float,
    views_lift: float | None = None,
    seed: int = 0,
    today: date | None = None,
    views_per_active_day: float | None = None,
) -> TrafficPlan:
    """Draw the traffic; assignment by the experiment's own allocation (phase 1).
    ``views_per_active_day`` rescales the item-page-view rate (benchmarks calibrate the event
    volume to the published test's with it)."""
    rooms = list(experiment.rooms.order_by("pk"))
    if not rooms:
        raise SimulationRefused("the experiment has no rooms")
    phase = ExperimentPhase.objects.filter(experiment=experiment).order_by("number").first()
    if phase is None:
        raise SimulationRefused("start the experiment first: simulated traffic needs its arms")
    arms = list(ExperimentArm.objects.filter(experiment=experiment).order_by("position"))
    allocation = allocation_of(experiment, phase, [a.pk for a in arms])
    start = (today or timezone.now().date()) - timedelta(days=days)
    unit: Unit = experiment.unit  # type: ignore[assignment]
    if unit == "uv":
        keys = [f"sim{seed}-{i}" for i in range(uvs)]
    elif unit == "room":
        keys = [str(room.pk) for room in rooms]
    else:
        keys = [
            unit_key("room_day", room_id=room.pk, uv_id="", day=start + timedelta(days=d))
            for room in rooms
            for d in range(days)
        ]
    index = np.array(
        [-1 if (i := allocation.assign(key)) is None else i for key in keys], dtype=np.int64
    )
    treated_share = sum(phase.weight_of(a.pk) for a in arms[1:]) / 10_000
    sim = simulate_experiment(
        n_uvs=uvs,
        unit=unit,
        treatment_weight=min(max(treated_share, 1e-6), 1 - 1e-6),
        gmv_lift=lift,
        views_lift=lift if views_lift is None else views_lift,
        model=TrafficModel(
            days=days,
            pre_days=PRE_PERIOD_DAYS,
            rooms=len(rooms),
            views_per_active_day=views_per_active_day or TrafficModel().views_per_active_day,
        ),
        seed=seed,
        assigned_arm=(index > 0).astype(np.int8),
    )
    rows = sim.uv_days()
    if unit == "uv":
        row_unit = rows.uv
    elif unit == "room":
        row_unit = rows.room
    else:
        row_unit = rows.room * days + rows.day
    pre_gmv, _ = sim.pre_period()
    return TrafficPlan(
        experiment=experiment,
        sim=sim,
        rooms=rooms,
        start=start,
        days=days,
        seed=seed,
        unit_arm_index=index,
        row_unit=np.asarray(row_unit, dtype=np.int64),
        gmv_cents=np.rint(rows.gmv * 100).astype(np.int64),
        pre_gmv_cents=np.rint(pre_gmv * 100).astype(np.int64),
    )


def _amount(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


def _ts(day: date, seconds: float) -> str:
    moment = datetime.combine(day, time(0, 0), tzinfo=UTC) + timedelta(seconds=float(seconds))
    return moment.isoformat().replace("+00:00", "Z")


def day_events(plan: TrafficPlan, offset: int) -> Iterator[tuple[int, dict[str, Any]]]:
    """(room pk, event) for simulated day ``offset`` (negative: the pre-period)."""
    rng = np.random.default_rng([plan.seed, offset + 1000])
    day = plan.day(offset)
    prefix = f"sim{plan.seed}-d{offset}-"
    counter = 0
    room_pks = [room.pk for room in plan.rooms]
    currencies = [room.currency for room in plan.rooms]
    if offset >= 0:
        rows = plan.sim.uv_days()
        mask = rows.day == offset
        uv, room, views = rows.uv[mask], rows.room[mask], rows.views[mask].astype(np.int64)
        cents = plan.gmv_cents[mask]
    else:
        # The pre-period: each UV's 14-day totals, on one random pre-day per UV.
        pre_gmv, pre_views = plan.sim.pre_period()
        # The same draw for every offset: each UV's history lands on exactly one pre-day.
        pre_day = np.random.default_rng([plan.seed, 999]).integers(
            -PRE_PERIOD_DAYS, 0, size=pre_gmv.size
        )
        mask = pre_day == offset
        uv = np.flatnonzero(mask)
        room = plan.sim.uv_rooms()[mask]
        views = pre_views[mask].astype(np.int64)
        cents = plan.pre_gmv_cents[mask]
    for u, r, k, c in zip(uv.tolist(), room.tolist(), views.tolist(), cents.tolist(), strict=True):
        uv_id, room_pk, currency = plan.uv_id(u), room_pks[r], currencies[r]
        for second in rng.uniform(0, 86_399, size=k).tolist():
            counter += 1
            yield (
                room_pk,
                {
                    "event_id": f"{prefix}{counter}",
                    "uv_id": uv_id,
                    "room": room_pk,
                    "type": "item_page_view",
                    "ts": _ts(day, second),
                },
            )
        if c > 0:
            counter += 1
            paid = {"uv_id": uv_id, "room": room_pk, "currency": currency}
            yield (
                room_pk,
                paid
                | {
                    "event_id": f"{prefix}{counter}",
                    "type": "confirmed_receipt",
                    "amount": _amount(c),
                    "ts": _ts(day, rng.uniform(0, 86_399)),
                },
            )
            if rng.random() < REFUNDED_ORDER_SHARE:
                refunded = int(rng.integers(100, 20_000))
                moment = _ts(day, rng.uniform(0, 86_399))
                for kind in ("confirmed_receipt", "refund"):
                    counter += 1
                    yield (
                        room_pk,
                        paid
                        | {
                            "event_id": f"{prefix}{counter}",
                            "type": kind,
                            "amount": _amount(refunded),
                            "ts": moment,
                        },
                    )


def exposure_rows(plan: TrafficPlan) -> Iterator[tuple[int, str, date]]:
    """Every active UV-day of a covered unit: the UV was in the room and saw its arm."""
    rows = plan.sim.uv_days()
    covered = plan.unit_arm_index[plan.row_unit] >= 0
    room_pks = [room.pk for room in plan.rooms]
    for u, r, d in zip(
        rows.uv[covered].tolist(),
        rows.room[covered].tolist(),
        rows.day[covered].tolist(),
        strict=True,
    ):
        yield room_pks[r], plan.uv_id(u), plan.day(d)


def backdate_start(plan: TrafficPlan) -> None:
    """Move the experiment's start to the first simulated day (refused once it has data)."""
    experiment = plan.experiment
    if experiment.status != Experiment.Status.RUNNING:
        raise SimulationRefused(f"the experiment is {experiment.status}; start it first")
    if ExperimentPhase.objects.filter(experiment=experiment).count() != 1:
        raise SimulationRefused("simulated traffic needs an experiment still in its first phase")
    if Exposure.objects.filter(experiment=experiment).exists():
        raise SimulationRefused(
            "the experiment already has exposures; simulate into a fresh experiment"
        )
    start = datetime.combine(plan.start, time(0, 0), tzinfo=UTC)
    with transaction.atomic():
        Experiment.objects.filter(pk=experiment.pk).update(started_at=start)
        ExperimentPhase.objects.filter(experiment=experiment).update(started_at=start)
        ExperimentRollup.objects.update_or_create(
            experiment=experiment, defaults={"full_refresh_needed": True}
        )
    experiment.refresh_from_db()


def send_events(plan: TrafficPlan, offsets: range) -> tuple[int, int, int, int]:
    """Ingest the simulated days through the ingestion service in batches per room."""
    rooms = {room.pk: room for room in plan.rooms}
    sent = accepted = duplicate = rejected = 0
    for offset in offsets:
        batches: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for room_pk, event in day_events(plan, offset):
            batch = batches[room_pk]
            batch.append(event)
            if len(batch) >= BATCH:
                result = events_ingest(room=rooms[room_pk], events=batch)
                sent, accepted = sent + result.received, accepted + result.accepted
                duplicate, rejected = duplicate + result.duplicate, rejected + result.rejected
                batches[room_pk] = []
        for room_pk, batch in batches.items():
            if batch:
                result = events_ingest(room=rooms[room_pk], events=batch)
                sent, accepted = sent + result.received, accepted + result.accepted
                duplicate, rejected = duplicate + result.duplicate, rejected + result.rejected
    return sent, accepted, duplicate, rejected


def simulate_traffic(
    *,
    experiment: Experiment,
    uvs: int,
    days: int,
    lift: float,
    views_lift: float | None = None,
    seed: int = 0,
    run_rollups: bool = True,
) -> SimulationSummary:
    if uvs < 1 or days < 1:
        raise SimulationRefused("--uvs and --days must be at least 1")
    plan = plan_traffic(experiment, uvs=uvs, days=days, lift=lift, views_lift=views_lift, seed=seed)
    backdate_start(plan)
    sent, accepted, duplicate, rejected = send_events(plan, range(-PRE_PERIOD_DAYS, days))
    exposures = exposures_log_bulk(experiment=plan.experiment, rows=exposure_rows(plan))
    report = rollups_update() if run_rollups else None
    return SimulationSummary(
        plan, sent, accepted, duplicate, rejected, exposures.new_exposures, report
    )
