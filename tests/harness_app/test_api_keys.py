"""Room API keys: shown once, stored hashed, scoped, revocable."""

from __future__ import annotations

import hashlib

import pytest

from harness_app.models import RoomApiKey

pytestmark = pytest.mark.django_db


def test_key_is_shown_once_and_stored_hashed(room, merchant_api):
    response = merchant_api.post(
        f"/api/v1/rooms/{room.pk}/api-keys/",
        {"name": "backend", "scopes": ["reply", "events"]},
        format="json",
    )
    assert response.status_code == 201
    raw = response.json()["key"]
    stored = RoomApiKey.objects.get(room=room)
    assert raw.startswith(f"hat_{stored.prefix}_")
    assert stored.key_hash == hashlib.sha256(raw.encode()).hexdigest()
    assert raw not in str(list(RoomApiKey.objects.values()))
    listed = merchant_api.get(f"/api/v1/rooms/{room.pk}/api-keys/").json()["results"][0]
    assert "key" not in listed and listed["key_preview"] == f"hat_{stored.prefix}_…"
    assert listed["scopes"] == ["events", "reply"]


def test_unknown_scope_is_rejected(room, merchant_api):
    response = merchant_api.post(
        f"/api/v1/rooms/{room.pk}/api-keys/", {"name": "x", "scopes": ["admin"]}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "scopes"
    assert RoomApiKey.objects.count() == 0


def test_key_of_another_room_cannot_be_revoked_through_this_room(
    room, other_room, merchant_api, operator_api
):
    other = operator_api.post(
        f"/api/v1/rooms/{other_room.pk}/api-keys/",
        {"name": "b", "scopes": ["reply"]},
        format="json",
    ).json()
    response = merchant_api.post(f"/api/v1/rooms/{room.pk}/api-keys/{other['id']}/revoke/")
    assert response.status_code == 404
    assert RoomApiKey.objects.get(pk=other["id"]).revoked_at is None
