"""POST /api/v1/events: idempotent batches, per-item errors with index and reason, limits."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from experiments_app.models import Event
from harness_app import services as harness_services

pytestmark = pytest.mark.django_db
URL = "/api/v1/events"


def key_client(room, scopes=("events",)) -> APIClient:  # type: ignore[no-untyped-def]
    _, raw = harness_services.api_key_create(
        room=room, name="backend", scopes=list(scopes), created_by=None
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def now_iso(delta: timedelta = timedelta(0)) -> str:
    return (datetime.now(UTC) + delta).isoformat()


def view(room, event_id, uv="uv-1", **extra):  # type: ignore[no-untyped-def]
    return {
        "event_id": event_id,
        "uv_id": uv,
        "room": room.pk,
        "type": "item_page_view",
        "ts": now_iso(),
    } | extra


def receipt(room, event_id, amount="19.90", **extra):  # type: ignore[no-untyped-def]
    return view(room, event_id, type="confirmed_receipt", amount=amount, currency="USD") | extra


def post(client, events):  # type: ignore[no-untyped-def]
    response = client.post(URL, json.dumps({"events": events}), content_type="application/json")
    return response


def test_valid_batch_is_stored_and_a_replay_changes_nothing(room):
    client = key_client(room)
    batch = [view(room, "e-1"), receipt(room, "e-2"), receipt(room, "e-3", type="refund")]
    first = post(client, batch)
    assert first.status_code == 200
    assert first.json() == {
        "received": 3,
        "accepted": 3,
        "duplicate": 0,
        "rejected": 0,
        "errors": [],
    }
    stored = {e.event_id: e for e in Event.objects.filter(room=room)}
    assert stored["e-2"].amount == Decimal("19.90") and stored["e-2"].currency == "USD"
    assert stored["e-1"].amount == 0 and stored["e-1"].currency == ""
    # when the backend retries the same batch
    replay = post(client, batch).json()
    # then nothing is stored twice
    assert (replay["accepted"], replay["duplicate"]) == (0, 3)
    assert Event.objects.filter(room=room).count() == 3


@pytest.mark.parametrize(
    ("patch", "field", "reason"),
    [
        ({"amount": "-5.00"}, "amount", "must not be negative"),
        ({"amount": "12,50"}, "amount", "not a number"),
        ({"amount": "abc"}, "amount", "not a number"),
        # strings are plain decimals: Decimal() would read these as 100, 100, NaN, 1000
        ({"amount": "1e2"}, "amount", "no exponent"),
        ({"amount": "1E+2"}, "amount", "no exponent"),
        ({"amount": "NaN"}, "amount", "no NaN/Infinity"),
        ({"amount": "Infinity"}, "amount", "no NaN/Infinity"),
        ({"amount": "1_000"}, "amount", "not a number"),
        ({"amount": "9" * 5000}, "amount", "not a number"),
        ({"amount": True}, "amount", "a number is required"),
        ({"amount": "1.999"}, "amount", "at most 2 decimal places"),
        ({"amount": 2e9}, "amount", "at most 1000000000"),
        ({"amount": None}, "amount", "a number is required"),
        ({"currency": "EUR"}, "currency", "takes USD; got EUR"),
        ({"currency": "dollars"}, "currency", "3-letter ISO 4217"),
        ({"ts": "2026-11-30T10:00:00"}, "ts", "needs a UTC offset"),
        ({"ts": "yesterday"}, "ts", "not an ISO 8601 timestamp"),
        ({"type": "click"}, "type", "must be one of"),
        ({"type": {"a": 1}}, "type", "must be one of"),  # unhashable: was a 500
        ({"type": ["refund"]}, "type", "must be one of"),
        ({"uv_id": "has space"}, "uv_id", "required"),
        ({"event_id": ""}, "event_id", "required"),
        ({"room": "1"}, "room", "sends events for room"),
    ],
)
def test_invalid_items_are_rejected_with_index_and_reason_and_valid_ones_stored(  # type: ignore[no-untyped-def]
    room, patch, field, reason
):
    batch = [view(room, "ok-1"), receipt(room, "bad") | patch, view(room, "ok-2")]
    data = post(key_client(room), batch).json()
    assert (data["accepted"], data["rejected"]) == (2, 1)
    (error,) = data["errors"]
    assert (error["index"], error["field"]) == (1, field)
    assert reason in error["message"]
    assert set(Event.objects.values_list("event_id", flat=True)) == {"ok-1", "ok-2"}


def test_timestamps_more_than_ten_minutes_ahead_are_rejected(room):
    batch = [
        view(room, "soon", ts=now_iso(timedelta(minutes=9))),
        view(room, "future", ts=now_iso(timedelta(minutes=11))),
    ]
    data = post(key_client(room), batch).json()
    assert data["accepted"] == 1
    assert data["errors"][0]["index"] == 1 and "in the future" in data["errors"][0]["message"]


def test_duplicate_event_ids_inside_one_batch_are_rejected_after_the_first(room):
    batch = [
        receipt(room, "dup", amount="10.00"),
        view(room, "x"),
        receipt(room, "dup", amount="99.00"),
    ]
    data = post(key_client(room), batch).json()
    assert (data["accepted"], data["rejected"]) == (2, 1)
    assert data["errors"][0]["index"] == 2
    assert (
        "duplicate event_id 'dup' in this batch (first at index 0)" in data["errors"][0]["message"]
    )
    assert Event.objects.get(event_id="dup").amount == Decimal("10.00")


def test_event_for_another_room_is_rejected_for_that_item(room, other_room):
    batch = [view(room, "mine"), view(other_room, "theirs")]
    data = post(key_client(room), batch).json()
    assert data["errors"] == [
        {
            "index": 1,
            "field": "room",
            "message": f"this API key sends events for room {room.pk}; got room {other_room.pk}",
        }
    ]
    assert not Event.objects.filter(room=other_room).exists()


def test_oversized_batch_is_refused_whole(room):
    batch = [view(room, f"e-{i}") for i in range(10_001)]
    response = post(key_client(room), batch)
    assert response.status_code == 400
    body = response.json()
    assert body["errors"][0]["field"] == "events"
    assert "at most 10000 events; got 10001" in body["errors"][0]["message"]
    assert not Event.objects.exists()


def test_a_full_batch_of_10000_is_accepted(room):
    batch = [view(room, f"e-{i}", uv=f"uv-{i % 300}") for i in range(10_000)]
    data = post(key_client(room), batch).json()
    assert (data["accepted"], data["rejected"]) == (10_000, 0)


@override_settings(HAT_MAX_EVENT_BATCH_BYTES=2_000)
def test_body_over_the_event_batch_limit_is_refused_before_parsing(room):
    response = post(key_client(room), [view(room, f"e-{i}") for i in range(30)])
    assert response.status_code == 400
    assert "the limit is 2000 bytes" in response.json()["detail"]


def test_late_events_land_on_their_own_day(room):
    late = datetime.now(UTC) - timedelta(days=2)
    offset = (
        late.astimezone(UTC).replace(hour=23, minute=30).isoformat().replace("+00:00", "-05:00")
    )
    batch = [
        view(room, "late", ts=(late - timedelta(hours=1)).isoformat()),
        view(room, "tz", ts=offset),
    ]
    post(key_client(room), batch)
    assert Event.objects.get(event_id="late").day == (late - timedelta(hours=1)).date()
    # 23:30 at UTC-5 is 04:30 UTC the next day: the day is the UTC date
    assert Event.objects.get(event_id="tz").day == late.date() + timedelta(days=1)


@pytest.mark.parametrize("body", [[], {"events": "nope"}, {"items": []}])
def test_malformed_body_is_a_400_naming_events(room, body):  # type: ignore[no-untyped-def]
    response = key_client(room).post(URL, json.dumps(body), content_type="application/json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "events"


def test_non_object_items_are_rejected_individually(room):
    data = post(key_client(room), [view(room, "a"), "oops", 7]).json()
    assert [(e["index"], e["message"]) for e in data["errors"]] == [
        (1, "each event must be a JSON object"),
        (2, "each event must be a JSON object"),
    ]


def test_reply_only_key_and_console_users_cannot_send_events(room, operator_api):
    assert post(key_client(room, scopes=("reply",)), [view(room, "a")]).status_code == 403
    assert post(operator_api, [view(room, "a")]).status_code in (401, 403)
    assert not Event.objects.exists()


def test_same_event_id_in_two_rooms_is_two_events(room, other_room):
    post(key_client(room), [view(room, "shared")])
    post(key_client(other_room), [view(other_room, "shared")])
    assert Event.objects.filter(event_id="shared").count() == 2
