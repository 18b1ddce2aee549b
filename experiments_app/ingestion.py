"""Viewer events from the live-room backend: validate each item, store the valid ones once.

A batch holds up to ``HAT_EVENT_BATCH_MAX`` (10,000) events. Each item is validated in plain
Python (a DRF serializer per item would cost more than the database write); an invalid item
is rejected with its index, field and reason, and the valid ones are stored. Storage is
idempotent on (room, event_id): a replayed batch adds nothing and reports the items as
duplicates.

PostgreSQL: COPY into a temporary staging table, then ``INSERT ... SELECT ... ON CONFLICT
(room_id, event_id) DO NOTHING`` - one set-based statement per batch. Other databases (the
SQLite of ``make run``): ``bulk_create(ignore_conflicts=True)``.

Ingestion holds a shared advisory lock for its transaction; the rollup takes the exclusive
lock for an instant to read the highest committed event id, so no in-flight batch can commit
an id below its watermark later (ids are assigned in order, commits are not).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from experiments_app.models import Event
from harness_app.models import Room

EVENTS_LOCK_KEY = 0x48415445  # pg advisory lock shared by ingestion and the rollup watermark
ID_PATTERN = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
EVENT_TYPES = frozenset(Event.Type.values)
MONEY_TYPES = frozenset({Event.Type.CONFIRMED_RECEIPT.value, Event.Type.REFUND.value})
MAX_AMOUNT = Decimal("1000000000")
CENT = Decimal("0.01")
FUTURE_TOLERANCE = timedelta(minutes=10)
MAX_AGE = timedelta(days=400)
CURRENCY_PATTERN = re.compile(r"[A-Z]{3}")
# An amount sent as a string is a plain decimal: no exponent ("1e2"), no NaN/Infinity, no
# "_" separators; the length bound keeps Decimal() cheap. (A JSON number is already a number.)
PLAIN_DECIMAL = re.compile(r"-?[0-9]{1,16}(\.[0-9]{1,16})?")


class BatchError(Exception):
    """The whole request is refused (not a list, too many events): nothing is stored."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True, slots=True)
class ItemError:
    index: int
    field: str
    message: str


@dataclass
class IngestResult:
    received: int
    accepted: int = 0
    duplicate: int = 0
    errors: list[ItemError] = field(default_factory=list)

    @property
    def rejected(self) -> int:
        return len(self.errors)


@dataclass(frozen=True, slots=True)
class _Row:
    event_id: str
    uv_id: str
    type: str
    amount: Decimal
    currency: str
    ts: datetime
    day: date


def events_ingest(*, room: Room, events: Any, now: datetime | None = None) -> IngestResult:
    """Validate ``events`` (a list of dicts) for ``room`` and store the valid ones once."""
    if not isinstance(events, list):
        raise BatchError("events", "must be a list of event objects")
    limit = settings.HAT_EVENT_BATCH_MAX
    if len(events) > limit:
        raise BatchError(
            "events",
            f"a batch holds at most {limit} events; got {len(events)}: split it into batches",
        )
    now = now or timezone.now()
    validator = _Validator(room=room, now=now)
    rows: list[_Row] = []
    result = IngestResult(received=len(events))
    first_index: dict[str, int] = {}
    for index, item in enumerate(events):
        row = validator.row(item)
        if isinstance(row, ItemError):
            result.errors.append(ItemError(index, row.field, row.message))
            continue
        earlier = first_index.get(row.event_id)
        if earlier is not None:
            result.errors.append(
                ItemError(
                    index,
                    "event_id",
                    f"duplicate event_id {row.event_id!r} in this batch (first at index "
                    f"{earlier}); each event is sent once",
                )
            )
            continue
        first_index[row.event_id] = index
        rows.append(row)
    if rows:
        inserted = _store(room, rows, now)
        result.accepted = inserted
        result.duplicate = len(rows) - inserted
    return result


class _Validator:
    def __init__(self, *, room: Room, now: datetime) -> None:
        self.room_id = room.pk
        self.currency = room.currency
        self.latest = now + FUTURE_TOLERANCE
        self.earliest = now - MAX_AGE

    def row(self, item: Any) -> _Row | ItemError:
        if not isinstance(item, dict):
            return ItemError(0, "", "each event must be a JSON object")
        event_id = item.get("event_id")
        if not isinstance(event_id, str) or not ID_PATTERN.fullmatch(event_id):
            return ItemError(0, "event_id", "required: 1-128 letters, digits or _ . : -")
        uv_id = item.get("uv_id")
        if not isinstance(uv_id, str) or not ID_PATTERN.fullmatch(uv_id):
            return ItemError(0, "uv_id", "required: 1-128 letters, digits or _ . : -")
        room = item.get("room")
        if not isinstance(room, int) or isinstance(room, bool) or room != self.room_id:
            return ItemError(
                0,
                "room",
                f"this API key sends events for room {self.room_id}; got room {room!r}",
            )
        kind = item.get("type")
        if not isinstance(kind, str) or kind not in EVENT_TYPES:  # a dict is not hashable
            return ItemError(
                0, "type", f"must be one of {', '.join(sorted(EVENT_TYPES))}; got {kind!r:.80}"
            )
        amount = self._amount(item, kind)
        if isinstance(amount, ItemError):
            return amount
        currency = item.get("currency")
        if kind in MONEY_TYPES or currency not in (None, ""):
            if not isinstance(currency, str) or not CURRENCY_PATTERN.fullmatch(currency):
                return ItemError(
                    0, "currency", f"a 3-letter ISO 4217 code is required; got {currency!r}"
                )
            if currency != self.currency:
                return ItemError(
                    0,
                    "currency",
                    f"room {self.room_id} takes {self.currency}; got {currency} "
                    "(convert before sending)",
                )
        else:
            currency = ""
        ts = self._timestamp(item.get("ts"))
        if isinstance(ts, ItemError):
            return ts
        return _Row(event_id, uv_id, kind, amount, currency, ts, ts.astimezone(UTC).date())

    def _amount(self, item: dict[str, Any], kind: str) -> Decimal | ItemError:
        raw = item.get("amount")
        if raw is None and kind not in MONEY_TYPES:
            return Decimal(0)
        if isinstance(raw, bool) or not isinstance(raw, int | float | str):
            return ItemError(0, "amount", f"a number is required for {kind}; got {raw!r}")
        if isinstance(raw, float) and not math.isfinite(raw):
            return ItemError(0, "amount", f"must be a finite number; got {raw!r}")
        if isinstance(raw, str) and not PLAIN_DECIMAL.fullmatch(raw.strip()):
            return ItemError(
                0,
                "amount",
                f"not a number: {raw[:40]!r} (a string amount is a plain decimal like "
                "'19.99': no exponent, no NaN/Infinity)",
            )
        try:
            amount = Decimal(str(raw).strip()) if not isinstance(raw, int) else Decimal(raw)
        except InvalidOperation:
            return ItemError(0, "amount", f"not a number: {raw!r}")
        if not amount.is_finite():
            return ItemError(0, "amount", f"must be a finite number; got {raw!r}")
        if amount < 0:
            hint = (
                "a refund carries the positive amount refunded"
                if kind == Event.Type.REFUND
                else "send a refund event instead"
            )
            return ItemError(0, "amount", f"must not be negative (got {raw}); {hint}")
        if amount > MAX_AMOUNT:
            return ItemError(0, "amount", f"must be at most 1000000000; got {raw}")
        if amount != amount.quantize(CENT):
            return ItemError(0, "amount", f"at most 2 decimal places; got {raw}")
        if kind not in MONEY_TYPES and amount != 0:
            return ItemError(0, "amount", f"{kind} events carry no amount; got {raw}")
        return amount.quantize(CENT)

    def _timestamp(self, raw: Any) -> datetime | ItemError:
        if not isinstance(raw, str):
            return ItemError(0, "ts", "an ISO 8601 timestamp with offset is required")
        try:
            ts = datetime.fromisoformat(raw)
        except ValueError:
            return ItemError(0, "ts", f"not an ISO 8601 timestamp: {raw[:64]!r}")
        if ts.tzinfo is None or ts.utcoffset() is None:
            return ItemError(0, "ts", f"needs a UTC offset (e.g. 'Z' or '+08:00'): {raw[:64]!r}")
        if ts > self.latest:
            return ItemError(
                0, "ts", f"{raw} is more than 10 minutes in the future; check the sender's clock"
            )
        if ts < self.earliest:
            return ItemError(0, "ts", f"{raw} is more than {MAX_AGE.days} days old")
        return ts


def _store(room: Room, rows: Sequence[_Row], now: datetime) -> int:
    if connection.vendor == "postgresql":
        return _store_postgres(room, rows, now)
    with transaction.atomic():
        ids = [row.event_id for row in rows]
        existing: set[str] = set()
        for start in range(0, len(ids), 500):
            existing.update(
                Event.objects.filter(room=room, event_id__in=ids[start : start + 500]).values_list(
                    "event_id", flat=True
                )
            )
        new = [
            Event(
                room=room,
                event_id=row.event_id,
                uv_id=row.uv_id,
                type=row.type,
                amount=row.amount,
                currency=row.currency,
                ts=row.ts,
                day=row.day,
                received_at=now,
            )
            for row in rows
            if row.event_id not in existing
        ]
        Event.objects.bulk_create(new, ignore_conflicts=True, batch_size=500)
    return len(new)


_COLUMNS = ("event_id", "uv_id", "type", "amount", "currency", "ts", "day")


def _store_postgres(room: Room, rows: Sequence[_Row], now: datetime) -> int:
    from experiments_app.pg_copy import copy_into_staging

    table = Event._meta.db_table
    columns = ", ".join(_COLUMNS)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock_shared(%s)", [EVENTS_LOCK_KEY])
        cursor.execute(
            "CREATE TEMP TABLE IF NOT EXISTS event_staging (event_id text, uv_id text, "
            "type text, amount numeric(14, 2), currency text, ts timestamptz, day date) "
            "ON COMMIT DELETE ROWS"
        )
        copy_into_staging(
            cursor,
            "event_staging",
            _COLUMNS,
            ((r.event_id, r.uv_id, r.type, r.amount, r.currency, r.ts, r.day) for r in rows),
        )
        cursor.execute(
            f"INSERT INTO {table} (room_id, {columns}, received_at) "
            f"SELECT %s, {columns}, %s FROM event_staging "
            "ON CONFLICT (room_id, event_id) DO NOTHING",
            [room.pk, now],
        )
        return int(cursor.rowcount)
