"""Login throttling (django-axes, console/login_lockout.py): after HAT_LOGIN_FAILURE_LIMIT (5)
wrong passwords for one (username, address) even the right password is refused until the
cool-off (15 min) has passed; other users and other addresses are unaffected."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.core.management import call_command
from django.test import Client
from knox.models import AuthToken
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

PASSWORD = "pw-for-tests-1"
ATTACKER = "203.0.113.7"


def console_login(username: str, password: str, address: str = ATTACKER) -> Any:
    client = Client(REMOTE_ADDR=address)
    response = client.post("/login/", {"username": username, "password": password})
    response.logged_in = "_auth_user_id" in client.session
    return response


def api_login(username: str, password: str, address: str = ATTACKER) -> Any:
    return APIClient(REMOTE_ADDR=address).post(
        "/api/v1/auth/token/", {"username": username, "password": password}, format="json"
    )


def fail(times: int, login: Any = console_login, username: str = "op") -> None:
    for _ in range(times):
        response = login(username, "wrong-password")
        assert response.status_code in (200, 400, 429)


def rewind_attempts(by: timedelta) -> None:
    """Time travel: the failures happened ``by`` earlier."""
    for attempt in AccessAttempt.objects.all():
        AccessAttempt.objects.filter(pk=attempt.pk).update(attempt_time=attempt.attempt_time - by)


def test_the_limit_and_cool_off_come_from_the_settings() -> None:
    assert settings.AXES_FAILURE_LIMIT == 5
    assert timedelta(minutes=15) == settings.AXES_COOLOFF_TIME


def test_after_the_limit_the_right_password_is_refused_with_a_clear_message(
    operator: Any,
) -> None:
    fail(4)
    fifth = console_login("op", "wrong-password")
    assert fifth.status_code == 429  # the 5th failure locks at once

    response = console_login("op", PASSWORD)

    assert response.status_code == 429 and not response.logged_in
    assert response["Retry-After"] == "900"
    page = response.content.decode()
    assert "Too many failed logins" in page and "for 15 minutes" in page
    assert 'name="username"' in page and 'value="op"' in page  # the form is still there


def test_four_failures_do_not_lock(operator: Any) -> None:
    fail(4)
    response = console_login("op", PASSWORD)
    assert response.status_code == 302 and response.logged_in


def test_another_user_and_another_address_are_unaffected(operator: Any, merchant: Any) -> None:
    fail(5)
    assert console_login("merchant-a", PASSWORD).logged_in
    assert console_login("op", PASSWORD, address="198.51.100.20").logged_in
    assert not console_login("op", PASSWORD).logged_in


def test_the_right_password_works_again_after_the_cool_off(operator: Any) -> None:
    fail(5)
    rewind_attempts(timedelta(minutes=15, seconds=1))
    assert console_login("op", PASSWORD).logged_in


def test_a_refused_attempt_during_the_lockout_restarts_the_cool_off(operator: Any) -> None:
    fail(5)
    rewind_attempts(timedelta(minutes=14))
    assert not console_login("op", PASSWORD).logged_in  # 14 minutes on: still locked
    rewind_attempts(timedelta(minutes=2))  # 16 minutes after the failures, 2 after that try
    assert not console_login("op", PASSWORD).logged_in
    rewind_attempts(timedelta(minutes=15, seconds=1))
    assert console_login("op", PASSWORD).logged_in


def test_an_operator_can_lift_a_lockout(operator: Any) -> None:
    fail(5)
    call_command("axes_reset_username", "op")
    assert console_login("op", PASSWORD).logged_in


def test_the_api_token_login_is_throttled_too(operator: Any) -> None:
    fail(5, login=api_login)

    response = api_login("op", PASSWORD)

    assert response.status_code == 429
    body = response.json()
    assert body["detail"].startswith("Too many failed logins")
    assert body["errors"][0]["field"] == "username"
    assert AuthToken.objects.count() == 0
    # failures on the API and on the console form count together
    assert not console_login("op", PASSWORD).logged_in
    assert api_login("op", PASSWORD, address="198.51.100.20").status_code == 201


def test_a_success_clears_earlier_failures(operator: Any) -> None:
    fail(4)
    assert console_login("op", PASSWORD).logged_in
    fail(4)
    assert console_login("op", PASSWORD).logged_in
