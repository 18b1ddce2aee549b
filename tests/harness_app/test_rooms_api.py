"""Rooms API: a duplicate (owner, name) is a 400 naming `name` on create and rename (the
model's full_clean() raised a Django ValidationError that reached the client as a 500)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from harness_app.models import Room
from tests.factories import RoomFactory

pytestmark = pytest.mark.django_db


def test_creating_a_second_room_with_the_same_owner_and_name_is_a_400_on_name(
    operator_api: APIClient, room: Room, merchant: Any
) -> None:
    response = operator_api.post(
        "/api/v1/rooms/", {"name": room.name, "owner": merchant.username}, format="json"
    )
    assert response.status_code == 400, response.content[:300]
    assert response.json() == {
        "detail": "name: Room with this Owner and Name already exists.",
        "errors": [{"field": "name", "message": "Room with this Owner and Name already exists."}],
    }
    assert Room.objects.filter(owner=merchant).count() == 1


def test_renaming_a_room_onto_another_of_its_owner_is_a_400_on_name(
    merchant_api: APIClient, room: Room, merchant: Any
) -> None:
    second = RoomFactory(owner=merchant, name="Room Two")
    response = merchant_api.patch(f"/api/v1/rooms/{second.pk}/", {"name": room.name}, format="json")
    assert response.status_code == 400, response.content[:300]
    assert [e["field"] for e in response.json()["errors"]] == ["name"]
    second.refresh_from_db()
    assert second.name == "Room Two"


def test_the_same_name_under_another_owner_is_fine(
    operator_api: APIClient, room: Room, other_merchant: Any
) -> None:
    response = operator_api.post(
        "/api/v1/rooms/", {"name": room.name, "owner": other_merchant.username}, format="json"
    )
    assert response.status_code == 201


# --- live-reply settings (the console's room settings page, over the API) -----------------


def test_operator_sets_a_rooms_live_reply_settings(operator_api: APIClient, room: Room) -> None:
    from training_app.models import ModelEndpoint

    endpoint = ModelEndpoint.objects.create(
        name="vllm-a", base_url="http://127.0.0.1:9", model_name="m"
    )
    url = f"/api/v1/rooms/{room.pk}/settings/"
    response = operator_api.patch(
        url,
        {
            "reply_deadline_ms": 8000,
            "fallback_reply": "  One moment!  ",
            "max_comment_chars": 300,
            "serving_arm": "react",
            "reply_endpoint": endpoint.pk,
        },
        format="json",
    )
    assert response.status_code == 200, response.content[:300]
    room.refresh_from_db()
    assert (room.reply_deadline_ms, room.fallback_reply, room.max_comment_chars) == (
        8000,
        "One moment!",
        300,
    )
    assert room.serving_arm == "react" and room.reply_endpoint_id == endpoint.pk
    assert operator_api.get(url).json() | {"updated_at": None} == {
        "id": room.pk,
        "reply_deadline_ms": 8000,
        "fallback_reply": "One moment!",
        "max_comment_chars": 300,
        "serving_arm": "react",
        "reply_endpoint": endpoint.pk,
        "reply_endpoint_name": "vllm-a",
        "updated_at": None,
    }
    # null goes back to the default endpoint
    response = operator_api.patch(url, {"reply_endpoint": None}, format="json")
    assert response.status_code == 200 and response.json()["reply_endpoint"] is None


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"reply_deadline_ms": 50}, "reply_deadline_ms"),
        ({"reply_deadline_ms": 10**30}, "reply_deadline_ms"),
        ({"fallback_reply": "   "}, "fallback_reply"),
        ({"fallback_reply": "a\u0000b"}, "fallback_reply"),
        ({"fallback_reply": "x" * 501}, "fallback_reply"),
        ({"max_comment_chars": 0}, "max_comment_chars"),
        ({"serving_arm": "oracle"}, "serving_arm"),
        ({"reply_endpoint": 10**20}, "reply_endpoint"),
        ({"reply_endpoint": "dead-vllm"}, "reply_endpoint"),
    ],
)
def test_bad_settings_are_a_400_naming_the_field_and_change_nothing(
    operator_api: APIClient, room: Room, body: dict[str, Any], field: str
) -> None:
    before = Room.objects.filter(pk=room.pk).values().get()
    response = operator_api.patch(f"/api/v1/rooms/{room.pk}/settings/", body, format="json")
    assert response.status_code == 400, response.content[:300]
    assert [e["field"] for e in response.json()["errors"]] == [field]
    assert Room.objects.filter(pk=room.pk).values().get() == before


def test_an_inactive_endpoint_is_refused(operator_api: APIClient, room: Room) -> None:
    from training_app.models import ModelEndpoint

    retired = ModelEndpoint.objects.create(
        name="old", base_url="http://127.0.0.1:9", model_name="m", is_active=False
    )
    response = operator_api.patch(
        f"/api/v1/rooms/{room.pk}/settings/", {"reply_endpoint": retired.pk}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {
            "field": "reply_endpoint",
            "message": f"no model endpoint this room may use has id {retired.pk}",
        }
    ]


def test_settings_of_another_merchants_room_are_a_404(
    merchant_api: APIClient, other_merchant: Any
) -> None:
    theirs = RoomFactory(owner=other_merchant, name="Theirs")
    url = f"/api/v1/rooms/{theirs.pk}/settings/"
    assert merchant_api.get(url).status_code == 404
    assert merchant_api.patch(url, {"reply_deadline_ms": 1000}, format="json").status_code == 404
    theirs.refresh_from_db()
    assert theirs.reply_deadline_ms == 15_000


def test_settings_need_a_signed_in_console_user(room: Room) -> None:
    url = f"/api/v1/rooms/{room.pk}/settings/"
    assert APIClient().get(url).status_code == 401
    assert APIClient().patch(url, {"reply_deadline_ms": 1000}, format="json").status_code == 401


def test_a_merchant_may_pick_only_the_endpoints_their_room_runs_on(
    merchant_api: APIClient, room: Room
) -> None:
    # the console's rule (room_endpoints.endpoints_usable), not any active endpoint
    from training_app.models import ModelEndpoint

    internal = ModelEndpoint.objects.create(
        name="dead-vllm", base_url="http://127.0.0.1:9", model_name="m"
    )
    url = f"/api/v1/rooms/{room.pk}/settings/"
    response = merchant_api.patch(url, {"reply_endpoint": internal.pk}, format="json")
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["reply_endpoint"]
    room.refresh_from_db()
    assert room.reply_endpoint_id is None
    # the other settings are theirs to change
    response = merchant_api.patch(url, {"reply_deadline_ms": 9000}, format="json")
    assert response.status_code == 200 and response.json()["reply_deadline_ms"] == 9000
