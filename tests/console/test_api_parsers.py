"""Request bodies every API endpoint refuses with a 400 naming the field (never a 500, nothing
stored): JSON nested past 64 levels and U+0000 anywhere; and JSON-only live-room endpoints."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from experiments_app.models import Event, LiveReply
from harness_app import services
from harness_app.models import HarnessVersion, Product, Room

pytestmark = pytest.mark.django_db

DEEP = "[" * 100_000 + "]" * 100_000
NUL = "must not contain the NUL character (U+0000)"


def key_client(room: Room, scopes: tuple[str, ...] = ("reply", "events")) -> APIClient:
    _, raw = services.api_key_create(
        room=room, name="backend", scopes=list(scopes), created_by=None
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def post_json(client: APIClient, url: str, text: str, method: str = "post") -> Any:
    return getattr(client, method)(url, text, content_type="application/json")


def assert_field_error(response: Any, field: str, message: str) -> None:
    assert response.status_code == 400, response.content[:300]
    body = response.json()
    assert {"field": field, "message": message} in body["errors"], body
    assert body["detail"] == f"{field}: {message}"


def endpoints(room: Room) -> list[tuple[str, str]]:
    """(method, url) of JSON endpoints, operator side."""
    harness = room.harness
    return [
        ("post", "/api/v1/rooms/"),
        ("patch", f"/api/v1/rooms/{room.pk}/"),
        ("post", f"/api/v1/rooms/{room.pk}/products/"),
        ("post", f"/api/v1/rooms/{room.pk}/api-keys/"),
        ("post", f"/api/v1/harnesses/{harness.pk}/versions/"),
        ("post", "/api/v1/experiments/"),
        ("post", "/api/v1/augmentation-jobs/"),
    ]


def test_deep_json_is_a_400_on_every_json_endpoint(operator: Any, published_room: Room) -> None:
    client = APIClient()
    client.force_authenticate(operator)
    for method, url in endpoints(published_room):
        response = post_json(client, url, DEEP, method)
        assert_field_error(response, "[0]" * 64, "nested deeper than 64 levels of arrays/objects")
    deep_attributes = '{"sku": "A-1", "title": "t", "price": "1", "attributes": ' + DEEP + "}"
    response = post_json(client, f"/api/v1/rooms/{published_room.pk}/products/", deep_attributes)
    assert_field_error(
        response,
        "attributes" + "[0]" * 63,
        "nested deeper than 64 levels of arrays/objects",
    )
    assert not Product.objects.exists()


def test_deep_json_is_a_400_on_the_live_room_api(published_room: Room) -> None:
    client = key_client(published_room)
    for url in ("/api/v1/live/reply", "/api/v1/events"):
        response = post_json(client, url, '{"events": ' + DEEP + "}")
        assert_field_error(
            response, "events" + "[0]" * 63, "nested deeper than 64 levels of arrays/objects"
        )
    assert not Event.objects.exists() and not LiveReply.objects.exists()


def test_nul_is_a_400_naming_the_field_wherever_it_is(
    operator: Any, merchant: Any, published_room: Room
) -> None:
    client = APIClient()
    client.force_authenticate(operator)
    # the room-owner lookup (a username query) and the room name
    response = client.post(
        "/api/v1/rooms/", {"name": "New", "owner": "merchant\x00"}, format="json"
    )
    assert_field_error(response, "owner", NUL)
    # product attributes: a nested value and a key
    url = f"/api/v1/rooms/{published_room.pk}/products/"
    product = {"sku": "A-1", "title": "Tee", "price": "1.00"}
    response = client.post(url, product | {"attributes": {"care": ["wash\x00"]}}, format="json")
    assert_field_error(response, "attributes.care[0]", NUL)
    response = client.post(url, product | {"attributes": {"k\x00": 1}}, format="json")
    assert_field_error(response, "attributes.k\\u0000", NUL)
    # a skill body inside harness content
    harness = published_room.harness
    version = HarnessVersion.objects.get(harness=harness)
    content = json.loads(json.dumps(version.content))
    content["skills"][0]["body"] += "\x00"
    response = client.post(
        f"/api/v1/harnesses/{harness.pk}/versions/",
        {"base_version": 1, "content": content},
        format="json",
    )
    assert_field_error(response, "content.skills[0].body", NUL)
    # form and multipart fields too
    response = client.post("/api/v1/rooms/", {"name": "N\x00", "owner": merchant.username})
    assert_field_error(response, "name", NUL)
    response = client.post(
        "/api/v1/rooms/",
        "name=N&owner=merchant%00",
        content_type="application/x-www-form-urlencoded",
    )
    assert_field_error(response, "owner", NUL)
    assert Room.objects.count() == 1 and not Product.objects.exists()
    assert HarnessVersion.objects.filter(harness=harness).count() == 1


def test_nul_in_the_live_room_api_names_the_item(published_room: Room) -> None:
    client = key_client(published_room)
    event = {"event_id": "e-1", "uv_id": "uv\x00", "room": published_room.pk, "type": "x"}
    response = client.post("/api/v1/events", {"events": [event]}, format="json")
    assert_field_error(response, "events[0].uv_id", NUL)
    response = client.post(
        "/api/v1/live/reply",
        {"request_id": "r-1", "room": published_room.pk, "uv_id": "u", "comment": "hi\x00"},
        format="json",
    )
    assert_field_error(response, "comment", NUL)
    assert not Event.objects.exists() and not LiveReply.objects.exists()


@pytest.mark.parametrize("url", ["/api/v1/live/reply", "/api/v1/events"])
@pytest.mark.parametrize("fmt", ["multipart", "form"])
def test_the_live_room_api_takes_json_only(published_room: Room, url: str, fmt: str) -> None:
    client = key_client(published_room)
    data = {"request_id": "r-1", "room": published_room.pk, "uv_id": "u", "comment": "hi"}
    if fmt == "form":
        response = client.post(
            url, "request_id=r-1&comment=hi", content_type="application/x-www-form-urlencoded"
        )
    else:
        response = client.post(url, data, format="multipart")
    assert response.status_code == 415, response.content[:300]
    assert response.json()["detail"].startswith("Unsupported media type")
    assert not Event.objects.exists() and not LiveReply.objects.exists()


def test_nan_stays_refused(operator_api: APIClient, room: Room) -> None:
    response = post_json(
        operator_api,
        f"/api/v1/rooms/{room.pk}/products/",
        '{"sku": "A-1", "title": "t", "price": NaN}',
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith("JSON parse error")
