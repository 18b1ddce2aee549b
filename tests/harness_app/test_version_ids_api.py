"""Every API output of a harness version carries its primary key `id`, the value an
experiment arm's `harness_version` takes (`number` counts versions within one harness)."""

from __future__ import annotations

import copy

import pytest
from rest_framework.test import APIClient

from harness_app.harness.serialization import harness_to_dict
from harness_app.models import HarnessVersion

pytestmark = pytest.mark.django_db


def test_list_detail_create_and_publish_answer_with_the_version_id(
    published_room, operator_api: APIClient, demo_harness
) -> None:
    harness = published_room.harness
    v1 = HarnessVersion.objects.get(harness=harness, number=1)
    base = f"/api/v1/harnesses/{harness.pk}/versions/"

    listed = operator_api.get(base).json()["results"]
    assert [(v["id"], v["number"]) for v in listed] == [(v1.pk, 1)]
    assert operator_api.get(f"{base}1/").json()["id"] == v1.pk

    content = copy.deepcopy(harness_to_dict(demo_harness))
    content["skills"][0]["description"] = "Answers product questions. Use when asked."
    created = operator_api.post(base, {"base_version": 1, "content": content}, format="json")
    assert created.status_code == 201, created.json()
    v2 = HarnessVersion.objects.get(harness=harness, number=2)
    assert created.json()["id"] == v2.pk

    published = operator_api.post(f"{base}2/publish/", {}, format="json")
    assert published.status_code == 200, published.json()
    assert (published.json()["id"], published.json()["status"]) == (v2.pk, "published")

    rolled_back = operator_api.post(
        f"/api/v1/harnesses/{harness.pk}/rollback/", {"to_version": 1}, format="json"
    )
    assert rolled_back.status_code == 200, rolled_back.json()
    assert rolled_back.json()["id"] == v1.pk


def test_rooms_and_harnesses_name_the_published_version_by_id(
    published_room, room, operator_api: APIClient
) -> None:
    v1 = HarnessVersion.objects.get(harness=published_room.harness, number=1)
    detail = operator_api.get(f"/api/v1/rooms/{published_room.pk}/").json()
    assert (detail["published_version"], detail["published_version_id"]) == (1, v1.pk)
    listed = {r["id"]: r for r in operator_api.get("/api/v1/rooms/").json()["results"]}
    assert listed[published_room.pk]["published_version_id"] == v1.pk

    harness = operator_api.get(f"/api/v1/harnesses/{published_room.harness.pk}/").json()
    assert (harness["published_version"], harness["published_version_id"]) == (1, v1.pk)
    harnesses = operator_api.get("/api/v1/harnesses/").json()["results"]
    assert {h["id"]: h["published_version_id"] for h in harnesses}[
        published_room.harness.pk
    ] == v1.pk


def test_an_unpublished_room_has_a_null_version_id(operator_api: APIClient, room) -> None:
    from tests.factories import RoomFactory

    fresh = RoomFactory(owner=room.owner, name="Fresh")
    body = operator_api.get(f"/api/v1/rooms/{fresh.pk}/").json()
    assert (body["published_version"], body["published_version_id"]) == (None, None)
    harness = operator_api.get(f"/api/v1/harnesses/{fresh.harness.pk}/").json()
    assert harness["published_version_id"] is None


def test_the_live_room_harness_carries_the_version_id(published_room) -> None:
    from harness_app import services

    _, raw = services.api_key_create(
        room=published_room, name="backend", scopes=["reply"], created_by=None
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    body = client.get(f"/api/v1/live/rooms/{published_room.pk}/harness/").json()
    v1 = HarnessVersion.objects.get(harness=published_room.harness, number=1)
    assert (body["id"], body["number"]) == (v1.pk, 1)


@pytest.mark.parametrize(
    ("component", "field"),
    [
        ("RoomOutput", "published_version_id"),
        ("HarnessOutput", "published_version_id"),
        ("LiveReplyOutput", "harness_version_id"),
    ],
)
def test_the_schema_documents_version_ids_as_nullable(
    operator_api: APIClient, component: str, field: str
) -> None:
    schemas = operator_api.get("/api/v1/schema/?format=json").json()["components"]["schemas"]
    assert schemas[component]["properties"][field].get("nullable") is True
    assert "id" in schemas["HarnessVersionSummaryOutput"]["properties"]
    assert "id" in schemas["HarnessVersionOutput"]["properties"]
