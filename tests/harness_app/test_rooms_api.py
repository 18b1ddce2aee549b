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
