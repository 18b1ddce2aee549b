"""The room settings page's Webhook secrets section: add, rotate, delete; the value is a
password field that no page ever renders back, and other merchants get 404."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from harness_app import services, webhook_secrets
from harness_app.models import WebhookSecret

pytestmark = pytest.mark.django_db
VALUE = "whsec-console-0123456789abcdef"


def test_add_rotate_delete_without_ever_showing_the_value(
    merchant_client: Client, room: Any
) -> None:
    settings_url = reverse("console:room-settings", args=[room.pk])
    page = merchant_client.get(settings_url).content.decode()
    assert 'id="webhook-secrets"' in page and 'type="password"' in page
    # add
    create = reverse("console:webhook-secret-create", args=[room.pk])
    response = merchant_client.post(create, {"name": "SHOP_SECRET", "value": VALUE})
    assert response.status_code == 302
    secret = WebhookSecret.objects.get(room=room)
    assert webhook_secrets.decrypt(secret.value_encrypted) == VALUE
    page = merchant_client.get(settings_url).content.decode()
    assert "SHOP_SECRET" in page and VALUE not in page
    # rotate
    rotate = reverse("console:webhook-secret-rotate", args=[room.pk, secret.pk])
    assert VALUE not in merchant_client.get(rotate).content.decode()
    assert merchant_client.post(rotate, {"value": VALUE + "-2"}).status_code == 302
    secret.refresh_from_db()
    assert webhook_secrets.decrypt(secret.value_encrypted) == VALUE + "-2"
    assert secret.rotated_at is not None
    # delete
    delete = reverse("console:webhook-secret-delete", args=[room.pk, secret.pk])
    assert merchant_client.post(delete).status_code == 302
    assert not WebhookSecret.objects.filter(room=room).exists()


def test_an_error_does_not_echo_the_value_and_stores_nothing(
    merchant_client: Client, room: Any
) -> None:
    create = reverse("console:webhook-secret-create", args=[room.pk])
    response = merchant_client.post(create, {"name": "bad name", "value": VALUE})
    assert response.status_code == 400
    assert VALUE not in response.content.decode()
    services.webhook_secret_create(room=room, name="SHOP_SECRET", value=VALUE, created_by=None)
    duplicate = merchant_client.post(create, {"name": "SHOP_SECRET", "value": VALUE + "x"})
    assert duplicate.status_code == 400
    assert "already has a webhook secret named" in duplicate.content.decode()
    assert WebhookSecret.objects.filter(room=room).count() == 1


def test_another_merchant_gets_404(other_merchant_client: Client, room: Any) -> None:
    secret = services.webhook_secret_create(
        room=room, name="SHOP_SECRET", value=VALUE, created_by=None
    )
    for name, args in (
        ("console:webhook-secret-create", [room.pk]),
        ("console:webhook-secret-rotate", [room.pk, secret.pk]),
        ("console:webhook-secret-delete", [room.pk, secret.pk]),
    ):
        url = reverse(name, args=args)
        assert other_merchant_client.get(url).status_code == 404
        assert (
            other_merchant_client.post(url, {"name": "X_Y", "value": VALUE * 2}).status_code == 404
        )
    assert WebhookSecret.objects.filter(pk=secret.pk, rotated_at__isnull=True).exists()
