"""Event ingestion through POST /api/v1/events (issue #5 target: >= 20,000 events/s sustained
at the source report's scale, ~6M events, on 2 cores with PostgreSQL).

Figure: batches of 10,000 events posted through the whole Django + DRF stack in-process
(room-key authentication, JSON parsing, per-item validation, COPY into a staging table,
``INSERT ... ON CONFLICT (room_id, event_id) DO NOTHING``), timed per request; the JSON bodies
are encoded before the clock starts. Printed beside it, in the same run and the same table:
raw COPY of the same number of pre-validated rows straight into the events table - the floor
of what PostgreSQL can take - and a replay of the first batches (all duplicates).

Scale: ``BENCH_EVENTS`` events (default 600,000 for ``make bench``); ``BENCH_FULL=1`` runs
6,000,000 (1.975M UVs over 14 days, the published test's traffic). Database: ``hat_bench``
(``BENCH_DATABASE_URL``), reset at the start.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.database import setup_django

FULL = os.environ.get("BENCH_FULL") == "1"
EVENTS = 6_000_000 if FULL else int(os.environ.get("BENCH_EVENTS", "600000"))
BATCH = 10_000
UVS = 1_975_000
DAYS = 14
TARGET_PER_S = 20_000


def event_batches(room_id: int, total: int, *, seed: int = 1) -> Iterator[list[dict[str, Any]]]:
    """Realistic event mix: ~95% item-page views, receipts and a few refunds, over 14 days
    (the last hour of today for the final batches), UV ids from a 1.975M pool."""
    rng = random.Random(seed)
    start = datetime.now(UTC) - timedelta(days=DAYS)
    span = DAYS * 86_400 - 3_600
    prefix = uuid.uuid4().hex[:8]
    for first in range(0, total, BATCH):
        batch = []
        for i in range(first, min(first + BATCH, total)):
            ts = (start + timedelta(seconds=span * i / total + rng.random())).isoformat()
            event: dict[str, Any] = {
                "event_id": f"{prefix}-{i}",
                "uv_id": f"uv-{rng.randrange(UVS)}",
                "room": room_id,
                "type": "item_page_view",
                "ts": ts,
            }
            draw = rng.random()
            if draw < 0.04:
                event |= {"type": "confirmed_receipt", "amount": f"{rng.lognormvariate(4, 1):.2f}"}
                event["currency"] = "USD"
            elif draw < 0.045:
                event |= {"type": "refund", "amount": f"{rng.lognormvariate(4, 1):.2f}"}
                event["currency"] = "USD"
            batch.append(event)
        yield batch


def run() -> None:
    setup_django()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    from experiments_app.models import Event
    from harness_app import services

    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {Event._meta.db_table}")
    suffix = uuid.uuid4().hex[:8]
    owner = get_user_model().objects.create_user(username=f"bench-ingest-{suffix}")
    room = services.room_create(owner=owner, name=f"Ingestion room {suffix}")
    copy_room = services.room_create(owner=owner, name=f"COPY room {suffix}")
    _, key = services.api_key_create(room=room, name="bench", scopes=["events"], created_by=owner)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")

    api_seconds: list[float] = []
    accepted = 0
    first_bodies: list[bytes] = []
    copy_rows_total: list[tuple[Any, ...]] = []
    copy_seconds = 0.0
    started = time.perf_counter()
    for index, batch in enumerate(event_batches(room.pk, EVENTS)):
        body = json.dumps({"events": batch}).encode()
        if index < 3:
            first_bodies.append(body)
        t0 = time.perf_counter()
        response = client.post("/api/v1/events", body, content_type="application/json")
        api_seconds.append(time.perf_counter() - t0)
        data = response.json()
        if response.status_code != 200 or data["rejected"]:
            raise SystemExit(f"batch {index} failed: {response.status_code} {str(data)[:300]}")
        accepted += data["accepted"]
        # The COPY baseline, batch by batch in the same run: same table, same row count.
        copy_rows_total.extend(
            (
                copy_room.pk,
                e["event_id"],
                e["uv_id"],
                e["type"],
                e.get("amount", "0"),
                e.get("currency", ""),
                e["ts"],
                e["ts"][:10],
                e["ts"],
            )
            for e in batch
        )
        t0 = time.perf_counter()
        with connection.cursor() as cursor:
            raw = cursor.cursor
            with raw.copy(
                f"COPY {Event._meta.db_table} (room_id, event_id, uv_id, type, amount, "
                "currency, ts, day, received_at) FROM STDIN"
            ) as copy:
                for row in copy_rows_total:
                    copy.write_row(row)
        copy_seconds += time.perf_counter() - t0
        copy_rows_total = []
    wall = time.perf_counter() - started
    total_api = sum(api_seconds)
    replay_t0 = time.perf_counter()
    duplicates = 0
    for body in first_bodies:
        duplicates += client.post("/api/v1/events", body, content_type="application/json").json()[
            "duplicate"
        ]
    replay_s = time.perf_counter() - replay_t0
    tail = api_seconds[-max(1, len(api_seconds) // 10) :]
    rate = accepted / total_api
    print(
        f"{accepted:,} events in {len(api_seconds)} batches of {BATCH:,} "
        f"({'full scale' if FULL else 'set BENCH_FULL=1 for the 6M-event run'}); "
        f"table ends with {Event.objects.count():,} rows; wall {wall:.0f} s incl. generation"
    )
    print(
        f"{'API ingestion (DRF view, validation, COPY + ON CONFLICT)':<58} "
        f"{rate:>10,.0f} events/s   p50 batch {statistics.median(api_seconds) * 1000:.0f} ms"
        f"   last 10% of batches {len(tail) * BATCH / sum(tail):,.0f} events/s"
    )
    print(
        f"{'  baseline: raw COPY of the same rows, same table':<58} "
        f"{accepted / copy_seconds:>10,.0f} events/s"
    )
    print(
        f"{'  replay of 3 batches (all duplicates, nothing stored)':<58} "
        f"{duplicates / replay_s:>10,.0f} events/s   ({duplicates:,} duplicates)"
    )
    ok = rate >= TARGET_PER_S
    scale = "" if FULL else " (the target is for BENCH_FULL=1, 6M events; this run is smaller)"
    print(f"target >= {TARGET_PER_S:,} events/s sustained: {'met' if ok else 'NOT met'}{scale}")
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {Event._meta.db_table}")  # leave hat_bench small
