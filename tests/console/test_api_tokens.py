"""API tokens for console users (console/api_tokens.py, console/api/tokens.py, issue_token):
stored as a digest only, shown once, revocable, expiring."""

from __future__ import annotations

import hashlib
import io
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import override_settings
from django.utils import timezone
from knox.models import AuthToken
from rest_framework.test import APIClient

from console.api_tokens import api_token_issue

pytestmark = pytest.mark.django_db

PASSWORD = "pw-for-tests-1"
ROOMS = "/api/v1/rooms/"


def token_client(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def log_in(username: str = "op", password: str = PASSWORD) -> Any:
    return APIClient().post(
        "/api/v1/auth/token/", {"username": username, "password": password}, format="json"
    )


def test_login_returns_a_token_shown_once_and_stores_only_its_digest(operator: Any) -> None:
    response = log_in()
    assert response.status_code == 201
    token = response.json()["token"]
    assert token.startswith("hatu_") and len(token) == len("hatu_") + 64

    # then: one row, holding the SHA-512 digest and never the token
    row = AuthToken.objects.get(user=operator)
    assert row.digest == hashlib.sha512(token.encode()).hexdigest()
    assert token not in (row.digest, row.token_key)
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM knox_authtoken")
        stored = [str(value) for value in cursor.fetchone()]
    assert token not in stored
    assert abs((row.expiry - timezone.now()) - timedelta(hours=720)) < timedelta(minutes=1)

    # and the token authenticates
    assert token_client(token).get(ROOMS).status_code == 200


def test_wrong_password_is_a_400_naming_the_field_and_issues_nothing(operator: Any) -> None:
    response = log_in(password="wrong")
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "password", "message": "Unable to log in with the given username and password."}
    ]
    assert AuthToken.objects.count() == 0


def test_a_made_up_token_and_no_token_are_refused(operator: Any) -> None:
    assert token_client("hatu_" + "0" * 64).get(ROOMS).status_code == 401
    anonymous = APIClient().get(ROOMS)
    assert anonymous.status_code == 401 and anonymous["WWW-Authenticate"] == "Token"


def test_logout_revokes_the_token_used_and_only_it(operator: Any) -> None:
    _, first = api_token_issue(user=operator)
    _, second = api_token_issue(user=operator)

    assert token_client(first).post("/api/v1/auth/logout/").status_code == 204

    assert token_client(first).get(ROOMS).status_code == 401
    assert token_client(second).get(ROOMS).status_code == 200
    assert AuthToken.objects.filter(user=operator).count() == 1


def test_logout_all_revokes_every_token_of_the_user(operator: Any, merchant: Any) -> None:
    _, first = api_token_issue(user=operator)
    _, second = api_token_issue(user=operator)
    _, others = api_token_issue(user=merchant)

    assert token_client(first).post("/api/v1/auth/logout-all/").status_code == 204

    assert token_client(first).get(ROOMS).status_code == 401
    assert token_client(second).get(ROOMS).status_code == 401
    assert token_client(others).get(ROOMS).status_code == 200


def test_an_expired_token_is_refused_and_deleted(operator: Any) -> None:
    instance, token = api_token_issue(user=operator, ttl=timedelta(hours=1))
    assert token_client(token).get(ROOMS).status_code == 200

    # when: an hour and a second later
    AuthToken.objects.filter(pk=instance.pk).update(expiry=timezone.now() - timedelta(seconds=1))

    assert token_client(token).get(ROOMS).status_code == 401
    assert not AuthToken.objects.filter(pk=instance.pk).exists()


@override_settings(REST_KNOX={"TOKEN_LIMIT_PER_USER": 2, "TOKEN_PREFIX": "hatu_"})
def test_the_number_of_live_tokens_per_user_is_capped(operator: Any) -> None:
    assert log_in().status_code == 201
    assert log_in().status_code == 201
    refused = log_in()
    assert refused.status_code == 403 and "revoke one" in refused.json()["detail"]
    assert AuthToken.objects.filter(user=operator).count() == 2


def test_issue_token_command_prints_a_working_token_once(operator: Any) -> None:
    out, err = io.StringIO(), io.StringIO()
    call_command("issue_token", "op", "--ttl-hours", "2", stdout=out, stderr=err)
    token = out.getvalue().strip()
    assert token.startswith("hatu_")
    assert "not shown again" in err.getvalue()
    row = AuthToken.objects.get(user=operator)
    assert row.digest == hashlib.sha512(token.encode()).hexdigest()
    assert abs((row.expiry - timezone.now()) - timedelta(hours=2)) < timedelta(minutes=1)
    assert token_client(token).get(ROOMS).status_code == 200


def test_issue_token_command_names_an_unknown_user(db: Any) -> None:
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        call_command("issue_token", "nobody", stdout=io.StringIO())


def test_the_migration_drops_the_plaintext_token_table(operator: Any) -> None:
    """Upgrading from rest_framework.authtoken: its table of plaintext keys is dropped."""
    from importlib import import_module

    from django.apps import apps
    from django.contrib.contenttypes.models import ContentType

    migration = import_module("console.migrations.0002_drop_plaintext_api_tokens")
    with connection.schema_editor() as editor:
        editor.execute('CREATE TABLE "authtoken_token" (key varchar(40) PRIMARY KEY, user_id int)')
        editor.execute("INSERT INTO authtoken_token VALUES ('97e46629fac520d1c5a8', %s)", [1])
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO django_migrations (app, name, applied) VALUES ('authtoken', '0001', %s)",
            [timezone.now()],
        )
    ContentType.objects.create(app_label="authtoken", model="token")

    with connection.schema_editor() as editor:
        migration.drop_plaintext_tokens(apps, editor)

    assert "authtoken_token" not in connection.introspection.table_names()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM django_migrations WHERE app = 'authtoken'")
        assert cursor.fetchone()[0] == 0
    assert not ContentType.objects.filter(app_label="authtoken").exists()
