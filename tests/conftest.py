"""Shared fixtures: users per role, logged-in API clients, the demo harness."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from console.roles import Role
from harness_app.harness.model import Harness as HarnessContent
from harness_app.harness.serialization import harness_from_yaml

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# The real model worker fixture (`local_worker`), shared by every `model` test.
pytest_plugins = ["tests.model_worker"]

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
DEMO_HARNESS = ROOT / "harness_app" / "demo_data" / "live_stream_harness.yaml"


@pytest.fixture(scope="session")
def demo_harness() -> HarnessContent:
    return harness_from_yaml(DEMO_HARNESS.read_text("utf-8"))


@pytest.fixture
def operator(db):  # type: ignore[no-untyped-def]
    from tests.factories import UserFactory

    return UserFactory(username="op", role=Role.OPERATOR)


@pytest.fixture
def merchant(db):  # type: ignore[no-untyped-def]
    from tests.factories import UserFactory

    return UserFactory(username="merchant-a", role=Role.MERCHANT)


@pytest.fixture
def other_merchant(db):  # type: ignore[no-untyped-def]
    from tests.factories import UserFactory

    return UserFactory(username="merchant-b", role=Role.MERCHANT)


@pytest.fixture
def labeler(db):  # type: ignore[no-untyped-def]
    from tests.factories import UserFactory

    return UserFactory(username="labeler", role=Role.LABELER)


def _client_for(user) -> APIClient:  # type: ignore[no-untyped-def]
    client = APIClient()
    client.force_authenticate(user=user)
    return client


@pytest.fixture
def operator_api(operator) -> APIClient:  # type: ignore[no-untyped-def]
    return _client_for(operator)


@pytest.fixture
def merchant_api(merchant) -> APIClient:  # type: ignore[no-untyped-def]
    return _client_for(merchant)


@pytest.fixture
def room(merchant):  # type: ignore[no-untyped-def]
    from tests.factories import RoomFactory

    return RoomFactory(owner=merchant, name="Room A")


@pytest.fixture
def other_room(other_merchant):  # type: ignore[no-untyped-def]
    from tests.factories import RoomFactory

    return RoomFactory(owner=other_merchant, name="Room B")


@pytest.fixture
def published_room(room, operator, demo_harness):  # type: ignore[no-untyped-def]
    """Room A with the demo harness saved as v1 and published."""
    from harness_app import services

    version = services.harness_version_create(
        harness=room.harness,
        content=demo_harness,
        base_version=None,
        author=operator,
        message="v1",
    )
    services.harness_version_publish(version=version)
    room.harness.refresh_from_db()
    return room


def publish_compact_harness(room, operator):  # type: ignore[no-untyped-def]
    """Give ``room`` the demo catalog and publish the compact CPU-profile harness as its
    first version; returns the room, refreshed."""
    from harness_app import services
    from harness_app.harness.serialization import harness_from_yaml

    demo = ROOT / "harness_app" / "demo_data"
    services.products_import(room=room, data=(demo / "products.csv").read_bytes(), fmt="csv")
    version = services.harness_version_create(
        harness=room.harness,
        content=harness_from_yaml((demo / "compact_harness.yaml").read_text("utf-8")),
        base_version=None,
        author=operator,
        message="compact v1",
    )
    services.harness_version_publish(version=version)
    room.harness.refresh_from_db()
    return room


@pytest.fixture
def compact_room(room, operator):  # type: ignore[no-untyped-def]
    """Room A with the demo catalog and the compact CPU-profile harness published as v1."""
    return publish_compact_harness(room, operator)
