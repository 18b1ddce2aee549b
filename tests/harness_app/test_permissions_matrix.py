"""Who may reach what: merchant A vs merchant B's room, labeler, anonymous, room keys.

Every room-scoped endpoint answers 404 (not 403) for a room the caller may not see, so the
existence of other tenants' rooms never leaks.
"""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from harness_app import services
from tests.conftest import _client_for

pytestmark = pytest.mark.django_db


def room_scoped_urls(room_id: int, harness_id: int) -> list[tuple[str, str]]:
    return [
        ("get", f"/api/v1/rooms/{room_id}/"),
        ("patch", f"/api/v1/rooms/{room_id}/"),
        ("get", f"/api/v1/rooms/{room_id}/products/"),
        ("post", f"/api/v1/rooms/{room_id}/products/"),
        ("get", f"/api/v1/rooms/{room_id}/products/SKU-X/"),
        ("get", f"/api/v1/rooms/{room_id}/api-keys/"),
        ("post", f"/api/v1/rooms/{room_id}/api-keys/"),
        ("get", f"/api/v1/rooms/{room_id}/latency-replays/"),
        ("post", f"/api/v1/rooms/{room_id}/latency-replays/"),
        ("get", f"/api/v1/harnesses/{harness_id}/"),
        ("get", f"/api/v1/harnesses/{harness_id}/versions/"),
        ("post", f"/api/v1/harnesses/{harness_id}/versions/"),
        ("get", f"/api/v1/harnesses/{harness_id}/versions/1/"),
        ("post", f"/api/v1/harnesses/{harness_id}/versions/1/publish/"),
        ("get", f"/api/v1/harnesses/{harness_id}/versions/1/export/"),
        ("post", f"/api/v1/harnesses/{harness_id}/rollback/"),
        ("get", f"/api/v1/harnesses/{harness_id}/diff/?from=1&to=1"),
    ]


def test_merchant_gets_404_on_every_endpoint_of_another_merchants_room(
    published_room, other_merchant
):
    # given merchant B, who does not own room A
    client = _client_for(other_merchant)
    # when they touch any of room A's endpoints, then every answer is 404
    for method, url in room_scoped_urls(published_room.pk, published_room.harness.pk):
        response = getattr(client, method)(url, {}, format="json")
        assert response.status_code == 404, (method, url, response.status_code)


def test_merchant_reaches_own_room_and_lists_only_own(published_room, other_room, merchant_api):
    response = merchant_api.get("/api/v1/rooms/")
    assert response.status_code == 200
    assert [r["name"] for r in response.json()["results"]] == ["Room A"]
    assert (
        merchant_api.get(f"/api/v1/harnesses/{published_room.harness.pk}/versions/1/").status_code
        == 200
    )
    harness_ids = [h["id"] for h in merchant_api.get("/api/v1/harnesses/").json()["results"]]
    assert harness_ids == [published_room.harness.pk]


def test_operator_sees_all_rooms(published_room, other_room, operator_api):
    names = sorted(r["name"] for r in operator_api.get("/api/v1/rooms/").json()["results"])
    assert names == ["Room A", "Room B"]


def test_only_operators_create_rooms(merchant_api, operator_api, merchant):
    payload = {"name": "New room", "owner": merchant.username, "currency": "EUR"}
    assert merchant_api.post("/api/v1/rooms/", payload, format="json").status_code == 403
    response = operator_api.post("/api/v1/rooms/", payload, format="json")
    assert response.status_code == 201
    assert response.json()["currency"] == "EUR"
    assert response.json()["harness_id"] is not None


@pytest.mark.parametrize("method", ["get", "post"])
def test_labeler_is_refused_by_the_console_api(published_room, labeler, method):
    client = _client_for(labeler)
    assert getattr(client, method)("/api/v1/rooms/", {}, format="json").status_code == 403
    url = f"/api/v1/harnesses/{published_room.harness.pk}/versions/"
    assert getattr(client, method)(url, {}, format="json").status_code == 403


def test_anonymous_is_refused_everywhere(published_room):
    client = APIClient()
    for method, url in room_scoped_urls(published_room.pk, published_room.harness.pk):
        response = getattr(client, method)(url, {}, format="json")
        assert response.status_code in (401, 403), (method, url, response.status_code)


def _key(room, scopes=("reply",)):  # type: ignore[no-untyped-def]
    _, raw = services.api_key_create(
        room=room, name="backend", scopes=list(scopes), created_by=None
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client, raw


def test_room_key_reads_its_own_rooms_published_harness(published_room):
    client, _ = _key(published_room)
    response = client.get(f"/api/v1/live/rooms/{published_room.pk}/harness/")
    assert response.status_code == 200
    assert response.json()["number"] == 1
    assert response.json()["status"] == "published"


def test_room_key_of_another_room_gets_404(published_room, other_room):
    client, _ = _key(other_room)
    assert client.get(f"/api/v1/live/rooms/{published_room.pk}/harness/").status_code == 404


def test_room_key_without_scope_is_refused(published_room):
    client, _ = _key(published_room, scopes=("events",))
    assert client.get(f"/api/v1/live/rooms/{published_room.pk}/harness/").status_code == 403


def test_room_key_cannot_use_console_api(published_room):
    client, _ = _key(published_room)
    assert client.get("/api/v1/rooms/").status_code in (401, 403)
    assert client.get(f"/api/v1/rooms/{published_room.pk}/").status_code in (401, 403)


def test_revoked_and_forged_keys_are_refused(published_room, merchant_api):
    client, raw = _key(published_room)
    key_id = merchant_api.get(f"/api/v1/rooms/{published_room.pk}/api-keys/").json()["results"][0][
        "id"
    ]
    assert (
        merchant_api.post(
            f"/api/v1/rooms/{published_room.pk}/api-keys/{key_id}/revoke/"
        ).status_code
        == 200
    )
    assert client.get(f"/api/v1/live/rooms/{published_room.pk}/harness/").status_code == 401
    forged = APIClient()
    forged.credentials(HTTP_AUTHORIZATION=f"Bearer {raw[:-2]}xx")
    assert forged.get(f"/api/v1/live/rooms/{published_room.pk}/harness/").status_code == 401


def operator_only_urls(user_id: int, room_id: int) -> list[tuple[str, str]]:
    """People (console/api/people.py): operators only, whoever's room or person it is."""
    return [
        ("get", "/api/v1/people/"),
        ("post", "/api/v1/people/"),
        ("get", f"/api/v1/people/{user_id}/"),
        ("patch", f"/api/v1/people/{user_id}/"),
        ("post", f"/api/v1/people/{user_id}/invite/"),
        ("get", "/api/v1/people/audit/"),
        ("post", f"/api/v1/rooms/{room_id}/owner/"),
    ]


def test_people_api_is_operators_only(published_room, merchant, labeler):
    room_key, _ = _key(published_room, scopes=("reply", "events"))
    refused = {
        "merchant (own room)": (_client_for(merchant), {403}),
        "labeler": (_client_for(labeler), {403}),
        "room key": (room_key, {401, 403}),
        "anonymous": (APIClient(), {401, 403}),
    }
    for who, (client, codes) in refused.items():
        for method, url in operator_only_urls(merchant.pk, published_room.pk):
            response = getattr(client, method)(url, {}, format="json")
            assert response.status_code in codes, (who, method, url, response.status_code)


def test_api_schema_and_docs_need_a_signed_in_user(operator_api):
    anonymous = APIClient()
    assert anonymous.get("/api/v1/schema/").status_code in (401, 403)
    assert anonymous.get("/api/v1/docs/").status_code in (401, 403)
    assert operator_api.get("/api/v1/schema/").status_code == 200
