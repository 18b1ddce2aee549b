"""Webhook secrets: per room, write-only over the API, encrypted at rest (Fernet, key
rotation), required by publish, never resolved from the environment or another room."""

from __future__ import annotations

import dataclasses
import json

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.test import override_settings

from harness_app import services, webhook_secrets
from harness_app.harness.model import Tool, ToolExecutor
from harness_app.harness.serialization import harness_to_dict
from harness_app.models import HarnessVersion, WebhookSecret
from tests.conftest import _client_for

pytestmark = pytest.mark.django_db
VALUE = "whsec-7f3a9c2e1b5d4a6f8e0c"


def base(room_id: int) -> str:
    return f"/api/v1/rooms/{room_id}/webhook-secrets/"


def test_create_list_rotate_delete_never_return_the_value(merchant_api, room):  # type: ignore[no-untyped-def]
    # when the merchant creates a secret
    created = merchant_api.post(
        base(room.pk), {"name": "SHOP_SECRET", "value": VALUE}, format="json"
    )
    assert created.status_code == 201, created.json()
    assert set(created.json()) == {
        "id",
        "name",
        "created_by",
        "created_at",
        "rotated_at",
        "last_used_at",
    }
    secret_id = created.json()["id"]
    listed = merchant_api.get(base(room.pk))
    detail = merchant_api.get(f"{base(room.pk)}{secret_id}/")
    rotated = merchant_api.post(
        f"{base(room.pk)}{secret_id}/rotate/", {"value": VALUE + "-v2"}, format="json"
    )
    # then no response carries the value, and the database holds only ciphertext
    for response in (created, listed, detail, rotated):
        assert VALUE not in response.content.decode()
    assert [s["name"] for s in listed.json()["results"]] == ["SHOP_SECRET"]
    assert rotated.status_code == 200 and rotated.json()["rotated_at"] is not None
    stored = WebhookSecret.objects.get(pk=secret_id)
    assert VALUE not in stored.value_encrypted and VALUE not in repr(stored) + str(stored)
    assert webhook_secrets.decrypt(stored.value_encrypted) == VALUE + "-v2"
    # and delete removes it
    assert merchant_api.delete(f"{base(room.pk)}{secret_id}/").status_code == 204
    assert not WebhookSecret.objects.filter(pk=secret_id).exists()


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"name": "shop secret", "value": VALUE}, "name"),
        ({"name": "SHOP_SECRET", "value": "short"}, "value"),
        ({"name": "SHOP_SECRET"}, "value"),
    ],
)
def test_bad_input_is_400_naming_the_field_and_stores_nothing(merchant_api, room, payload, field):  # type: ignore[no-untyped-def]
    response = merchant_api.post(base(room.pk), payload, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == field
    assert WebhookSecret.objects.count() == 0


def test_a_duplicate_name_in_the_same_room_is_a_400_on_name(merchant_api, room, other_room):  # type: ignore[no-untyped-def]
    services.webhook_secret_create(
        room=other_room, name="SHOP_SECRET", value=VALUE, created_by=None
    )
    first = merchant_api.post(base(room.pk), {"name": "SHOP_SECRET", "value": VALUE}, format="json")
    again = merchant_api.post(base(room.pk), {"name": "SHOP_SECRET", "value": VALUE}, format="json")
    assert first.status_code == 201  # the same name in another room is another secret
    assert again.status_code == 400 and again.json()["errors"][0]["field"] == "name"
    assert WebhookSecret.objects.filter(room=room).count() == 1


def test_other_merchants_get_404_and_change_nothing(room, other_merchant, other_room):  # type: ignore[no-untyped-def]
    secret = services.webhook_secret_create(
        room=room, name="SHOP_SECRET", value=VALUE, created_by=None
    )
    theirs = services.webhook_secret_create(
        room=other_room, name="THEIR_SECRET", value=VALUE, created_by=None
    )
    client = _client_for(other_merchant)
    calls = [
        ("get", base(room.pk)),
        ("post", base(room.pk)),
        ("get", f"{base(room.pk)}{secret.pk}/"),
        ("delete", f"{base(room.pk)}{secret.pk}/"),
        ("post", f"{base(room.pk)}{secret.pk}/rotate/"),
        # their own room's URL with a secret id of room A: still 404
        ("get", f"{base(other_room.pk)}{secret.pk}/"),
        ("delete", f"{base(other_room.pk)}{secret.pk}/"),
    ]
    for method, url in calls:
        response = getattr(client, method)(
            url, {"name": "X_SECRET", "value": VALUE * 2}, format="json"
        )
        assert response.status_code == 404, (method, url, response.status_code)
    secret.refresh_from_db()
    assert secret.rotated_at is None and webhook_secrets.decrypt(secret.value_encrypted) == VALUE
    assert WebhookSecret.objects.count() == 2 and theirs.pk


def test_labelers_are_refused(room, labeler):  # type: ignore[no-untyped-def]
    assert _client_for(labeler).get(base(room.pk)).status_code == 403


def test_resolution_is_per_room_and_never_from_the_environment(room, other_room, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SHOP_SECRET", "from-env")
    monkeypatch.setenv("DJANGO_SECRET_KEY", "server-key")
    services.webhook_secret_create(room=room, name="SHOP_SECRET", value=VALUE, created_by=None)
    assert webhook_secrets.room_secret_resolver(room)("SHOP_SECRET") == VALUE
    assert webhook_secrets.room_secret_resolver(other_room)("SHOP_SECRET") is None
    assert webhook_secrets.room_secret_resolver(room)("DJANGO_SECRET_KEY") is None
    assert WebhookSecret.objects.get(room=room).last_used_at is not None


def test_key_rotation_with_multifernet_and_the_rotate_command(room):  # type: ignore[no-untyped-def]
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    with override_settings(HAT_SECRETS_KEY=[old]):
        secret = services.webhook_secret_create(
            room=room, name="SHOP_SECRET", value=VALUE, created_by=None
        )
    # a new key in front: old tokens still open, new writes use the new key
    with override_settings(HAT_SECRETS_KEY=[new, old]):
        assert webhook_secrets.room_secret_resolver(room)("SHOP_SECRET") == VALUE
        call_command("rotate_webhook_secrets", stdout=open("/dev/null", "w"))  # noqa: SIM115
    # after the command the old key can go
    with override_settings(HAT_SECRETS_KEY=[new]):
        secret.refresh_from_db()
        assert webhook_secrets.decrypt(secret.value_encrypted) == VALUE
    with override_settings(HAT_SECRETS_KEY=[old]):
        assert webhook_secrets.decrypt(secret.value_encrypted) is None


def test_no_key_outside_the_dev_setup_refuses_to_store(room):  # type: ignore[no-untyped-def]
    with (
        override_settings(HAT_SECRETS_KEY=[], HAT_SECRETS_DEV_KEY_ALLOWED=False),
        pytest.raises(ImproperlyConfigured, match="HAT_SECRETS_KEY is not set"),
    ):
        services.webhook_secret_create(room=room, name="SHOP_SECRET", value=VALUE, created_by=None)
    assert WebhookSecret.objects.count() == 0


def _webhook_content(demo_harness, url="https://hooks.shop.example/eta", ref="ETA_SECRET"):  # type: ignore[no-untyped-def]
    extra = Tool(
        name="eta",
        description="Delivery ETA",
        input_schema={"type": "object", "properties": {}},
        executor=ToolExecutor(kind="webhook", url=url, timeout_s=5, secret_ref=ref),
    )
    return dataclasses.replace(demo_harness, tools=(*demo_harness.tools, extra))


def test_a_draft_may_name_a_missing_secret_but_publish_is_a_400_on_that_field(  # type: ignore[no-untyped-def]
    merchant_api, published_room, demo_harness
):
    harness_id = published_room.harness.pk
    content = harness_to_dict(_webhook_content(demo_harness))
    saved = merchant_api.post(
        f"/api/v1/harnesses/{harness_id}/versions/",
        {"base_version": 1, "content": content},
        format="json",
    )
    assert saved.status_code == 201, saved.json()
    field = f"tools[{len(demo_harness.tools)}].executor.secret_ref"
    assert field in [w["field"] for w in saved.json()["warnings"]]
    publish = f"/api/v1/harnesses/{harness_id}/versions/2/publish/"
    refused = merchant_api.post(publish)
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["field"] == f"content.{field}"
    assert HarnessVersion.objects.get(harness_id=harness_id, number=2).status == "draft"
    # once the room has the secret, the same version publishes
    services.webhook_secret_create(
        room=published_room, name="ETA_SECRET", value=VALUE, created_by=None
    )
    assert merchant_api.post(publish).status_code == 200


def test_an_internal_webhook_url_is_a_400_at_save_unless_allow_listed(  # type: ignore[no-untyped-def]
    merchant_api, published_room, demo_harness
):
    harness_id = published_room.harness.pk
    content = harness_to_dict(_webhook_content(demo_harness, url="http://127.0.0.1:5432/"))
    url = f"/api/v1/harnesses/{harness_id}/versions/"
    refused = merchant_api.post(url, {"base_version": 1, "content": content}, format="json")
    assert refused.status_code == 400
    field = f"content.tools[{len(demo_harness.tools)}].executor.url"
    assert refused.json()["errors"][0]["field"] == field
    assert "127.0.0.1, loopback" in json.dumps(refused.json())
    assert HarnessVersion.objects.filter(harness_id=harness_id).count() == 1
    with override_settings(HAT_WEBHOOK_ALLOWED_NETWORKS=["127.0.0.1/32"]):
        allowed = merchant_api.post(url, {"base_version": 1, "content": content}, format="json")
    assert allowed.status_code == 201


def test_the_endpoints_are_in_the_openapi_schema(operator_api):  # type: ignore[no-untyped-def]
    schema = operator_api.get("/api/v1/schema/?format=json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    text = json.dumps(paths)
    assert "/api/v1/rooms/{room_id}/webhook-secrets/" in paths
    assert "/api/v1/rooms/{room_id}/webhook-secrets/{secret_id}/rotate/" in paths
    out = schema.json()["components"]["schemas"]["WebhookSecretOutput"]["properties"]
    assert "value" not in out and "value_encrypted" not in text
