"""Console test fixtures: logged-in Django test clients per role, on top of tests/conftest.py."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client


def _logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def operator_client(operator: Any) -> Client:
    return _logged_in(operator)


@pytest.fixture
def merchant_client(merchant: Any) -> Client:
    return _logged_in(merchant)


@pytest.fixture
def other_merchant_client(other_merchant: Any) -> Client:
    return _logged_in(other_merchant)


@pytest.fixture
def labeler_client(labeler: Any) -> Client:
    return _logged_in(labeler)


@pytest.fixture
def harness(published_room: Any) -> Any:
    """The demo harness of merchant A's room, v1 published."""
    return published_room.harness
