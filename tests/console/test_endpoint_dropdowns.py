"""Merchants see only the model endpoints their room runs on in the Try-it and reply
settings dropdowns (experiments_app.selectors.room_endpoints): the room's reply endpoint
(else the console default) and its experiments' arm endpoints. Operators see every active
endpoint. A hidden endpoint posted by hand is a field error and changes nothing."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from experiments_app.models import Experiment, ExperimentArm, LiveReply
from experiments_app.selectors.room_endpoints import endpoints_usable
from training_app.models import ModelEndpoint

pytestmark = pytest.mark.django_db


def options(html: str, field: str) -> set[str]:
    """The option labels of the ``field`` select."""
    select = html.split(f'name="{field}"')[1].split("</select>")[0]
    return {label.split(" · ")[0] for label in re.findall(r"<option[^>]*>([^<]+)</option>", select)}


@pytest.fixture
def endpoints(published_room: Any, other_room: Any, settings: Any) -> dict[str, Any]:
    settings.HAT_DEFAULT_ENDPOINT = "local-default"
    made = {
        name: ModelEndpoint.objects.create(name=name, base_url=f"http://10.0.0.{i}:8000/v1")
        for i, name in enumerate(
            ["local-default", "room-a-own", "arm-a", "dead-vllm", "arm-b", "room-b-own"], 1
        )
    }
    ModelEndpoint.objects.create(name="off", base_url="http://x:1/v1", is_active=False)
    published_room.reply_endpoint = made["room-a-own"]
    published_room.save()
    other_room.reply_endpoint = made["room-b-own"]
    other_room.save()
    version = published_room.harness.published_version
    for room, arm_endpoint in [(published_room, "arm-a"), (other_room, "arm-b")]:
        experiment = Experiment.objects.create(name=f"exp {room.name}")
        experiment.rooms.add(room)
        ExperimentArm.objects.create(
            experiment=experiment,
            name="hat",
            kind="harness",
            harness_version=version,
            endpoint=made[arm_endpoint],
            weight=10_000,
            position=0,
        )
    return made


def test_the_rule(published_room: Any, endpoints: Any, merchant: Any, operator: Any) -> None:
    names = set(endpoints_usable(room=published_room, user=merchant).values_list("name", flat=True))
    assert names == {"room-a-own", "arm-a"}
    published_room.reply_endpoint = None
    published_room.save()
    names = set(endpoints_usable(room=published_room, user=merchant).values_list("name", flat=True))
    assert names == {"local-default", "arm-a"}
    everything = set(
        endpoints_usable(room=published_room, user=operator).values_list("name", flat=True)
    )
    assert everything == {
        "local-default",
        "room-a-own",
        "arm-a",
        "dead-vllm",
        "arm-b",
        "room-b-own",
    }


def test_merchant_dropdowns_list_only_their_rooms_endpoints(
    merchant_client: Client, published_room: Any, endpoints: Any
) -> None:
    settings_page = merchant_client.get(
        reverse("console:room-settings", args=[published_room.pk])
    ).content.decode()
    assert options(settings_page, "reply_endpoint") == {
        "Default (local-default)",
        "arm-a",
        "room-a-own",
    }
    harness_page = merchant_client.get(
        reverse("console:harness-detail", args=[published_room.harness.pk])
    ).content.decode()
    assert options(harness_page, "endpoint") == {"arm-a", "room-a-own"}
    for page in (settings_page, harness_page):
        for hidden in ("dead-vllm", "arm-b", "room-b-own", "10.0.0."):
            assert hidden not in page


def test_operator_dropdowns_list_every_active_endpoint(
    operator_client: Client, published_room: Any, endpoints: Any
) -> None:
    harness_page = operator_client.get(
        reverse("console:harness-detail", args=[published_room.harness.pk])
    ).content.decode()
    assert options(harness_page, "endpoint") == set(endpoints)
    settings_page = operator_client.get(
        reverse("console:room-settings", args=[published_room.pk])
    ).content.decode()
    assert options(settings_page, "reply_endpoint") == set(endpoints) | {"Default (local-default)"}


def test_a_hidden_endpoint_posted_by_a_merchant_is_a_field_error(
    merchant_client: Client, published_room: Any, endpoints: Any
) -> None:
    dead = endpoints["dead-vllm"]
    response = merchant_client.post(
        reverse("console:room-settings", args=[published_room.pk]),
        {
            "reply_deadline_ms": "8000",
            "fallback_reply": "One moment!",
            "max_comment_chars": "280",
            "serving_arm": "harness",
            "reply_endpoint": str(dead.pk),
        },
    )
    assert response.status_code == 400
    block = response.content.decode().split('data-field="reply_endpoint"')[1]
    assert "Select a valid choice" in block.split('data-field="')[0]
    published_room.refresh_from_db()
    assert published_room.reply_endpoint == endpoints["room-a-own"]
    assert published_room.reply_deadline_ms == 15_000
    response = merchant_client.post(
        reverse("console:harness-try", args=[published_room.harness.pk]),
        {"version": "1", "endpoint": str(dead.pk), "arm": "harness", "comment": "hi"},
    )
    assert response.status_code == 400
    block = response.content.decode().split('data-field="endpoint"')[1].split('data-field="')[0]
    assert "Select a valid choice" in block
    assert LiveReply.objects.count() == 0
