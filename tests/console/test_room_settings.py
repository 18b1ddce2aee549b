"""A room's live-reply settings: the owning merchant and operators edit them; errors stay at
their fields and nothing is saved."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from training_app.models import ModelEndpoint

pytestmark = pytest.mark.django_db


def form_data(**overrides: Any) -> dict[str, Any]:
    return {
        "reply_deadline_ms": "8000",
        "fallback_reply": "One moment, checking for you!",
        "max_comment_chars": "280",
        "serving_arm": "react",
        "reply_endpoint": "",
    } | overrides


def test_merchant_saves_the_settings_of_their_room(
    merchant_client: Client, room: Any, settings: Any
) -> None:
    # a merchant may pick only endpoints their room runs on: here the console default
    settings.HAT_DEFAULT_ENDPOINT = "gpu-a"
    endpoint = ModelEndpoint.objects.create(name="gpu-a", base_url="http://10.0.0.5:8000/v1")
    url = reverse("console:room-settings", args=[room.pk])
    page = merchant_client.get(url).content.decode()
    assert 'value="15000"' in page and "Default (" in page and "gpu-a" in page
    response = merchant_client.post(url, form_data(reply_endpoint=str(endpoint.pk)))
    assert response.status_code == 302
    room.refresh_from_db()
    assert (room.reply_deadline_ms, room.max_comment_chars, room.serving_arm) == (
        8000,
        280,
        "react",
    )
    assert room.fallback_reply == "One moment, checking for you!"
    assert room.reply_endpoint == endpoint
    detail = merchant_client.get(reverse("console:room-detail", args=[room.pk])).content.decode()
    assert "8000 ms" in detail and "gpu-a" in detail and "ReAct baseline" in detail


def test_operator_can_edit_any_room(operator_client: Client, other_room: Any) -> None:
    url = reverse("console:room-settings", args=[other_room.pk])
    assert operator_client.post(url, form_data()).status_code == 302
    other_room.refresh_from_db()
    assert other_room.reply_deadline_ms == 8000


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("reply_deadline_ms", "50", "greater than or equal to 100"),
        ("reply_deadline_ms", "90000", "less than or equal to 60000"),
        ("fallback_reply", "   ", "This field is required"),
        ("max_comment_chars", "0", "greater than or equal to 1"),
        ("serving_arm", "gpt", "Select a valid choice"),
        ("reply_endpoint", "999999", "Select a valid choice"),
    ],
)
def test_bad_settings_are_field_errors_and_change_nothing(
    merchant_client: Client, room: Any, field: str, value: str, message: str
) -> None:
    response = merchant_client.post(
        reverse("console:room-settings", args=[room.pk]), form_data(**{field: value})
    )
    assert response.status_code == 400
    block = response.content.decode().split(f'data-field="{field}"')[1].split('data-field="')[0]
    assert message in block
    room.refresh_from_db()
    assert room.reply_deadline_ms == 15000 and room.serving_arm == "harness"


def test_an_inactive_endpoint_cannot_be_chosen(merchant_client: Client, room: Any) -> None:
    off = ModelEndpoint.objects.create(name="off", base_url="http://x:1/v1", is_active=False)
    url = reverse("console:room-settings", args=[room.pk])
    assert ">off<" not in merchant_client.get(url).content.decode()
    response = merchant_client.post(url, form_data(reply_endpoint=str(off.pk)))
    assert response.status_code == 400
    room.refresh_from_db()
    assert room.reply_endpoint is None


def test_other_merchant_gets_404(other_merchant_client: Client, room: Any) -> None:
    url = reverse("console:room-settings", args=[room.pk])
    assert other_merchant_client.get(url).status_code == 404
    assert other_merchant_client.post(url, form_data()).status_code == 404
    room.refresh_from_db()
    assert room.reply_deadline_ms == 15000
