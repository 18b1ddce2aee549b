"""Schemathesis over the whole OpenAPI schema: no input may produce a server error, and every
documented response must match its schema.

Two halves, each with its own credentials: the console API with an operator's token, and the
live-room API (``/api/v1/live/...``, ``/api/v1/events``) with a room key. Bounded examples per
operation keep it to a few minutes on two cores; it grows with the API."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error, response_schema_conformance

pytestmark = [pytest.mark.slow]


from drf_spectacular.generators import SchemaGenerator  # noqa: E402
from drf_spectacular.renderers import OpenApiJsonRenderer  # noqa: E402
from knox.models import AuthToken  # noqa: E402

from console.wsgi import application  # noqa: E402  (after pytest-django set up Django)

LIVE_PATHS = r"^/api/v1/(live/|events$)"
CHECKS = [not_a_server_error, response_schema_conformance]
# Per operation; 12 before the live-room API and response checks were added.
MAX_EXAMPLES = 30


def _schema_document() -> dict:  # type: ignore[type-arg]
    """The same document /api/v1/schema/ serves (to signed-in users only), generated without a
    request so that collection needs no database."""
    generated = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(generated))


schema = schemathesis.openapi.from_dict(_schema_document())
schema.app = application
console_schema = schema.exclude(path_regex=LIVE_PATHS)
live_schema = schema.include(path_regex=LIVE_PATHS)


@pytest.fixture(autouse=True)
def keep_test_connection_open():  # type: ignore[no-untyped-def]
    """Like Django's test client: the WSGI handler must not close the test transaction's
    connection at the end of each request."""
    from django.core import signals
    from django.db import close_old_connections

    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def console_auth(operator) -> Callable[[], dict[str, str]]:  # type: ignore[no-untyped-def]
    """Headers with a fresh operator API token (the one place that knows how tokens are made).
    Fresh per example: the logout endpoints revoke the token they are called with. Made past
    the per-user cap that api_token_issue enforces: hypothesis runs many examples."""

    def headers() -> dict[str, str]:
        _, token = AuthToken.objects.create(user=operator)
        return {"Authorization": f"Token {token}"}

    return headers


@pytest.fixture
def room_key_auth(published_room) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The header of a room key with both scopes, for the room with a published harness."""
    from harness_app import services

    _, raw = services.api_key_create(
        room=published_room, name="schemathesis", scopes=["reply", "events"], created_by=None
    )
    return {"Authorization": f"Bearer {raw}"}


def _aim_at_the_key_room(case: Any, room_id: int) -> None:
    """Point generated bodies at the key's room, so most cases get past the room check and
    exercise validation and the reply/ingest paths rather than the 404."""
    body = case.body
    if isinstance(body, dict):
        if "room" in body:
            body["room"] = room_id
        events = body.get("events")
        if isinstance(events, list):
            for item in events:
                if isinstance(item, dict) and "room" in item:
                    item["room"] = room_id
    if isinstance(case.path_parameters, dict) and "room_id" in case.path_parameters:
        case.path_parameters["room_id"] = room_id


@console_schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_console_api(case, console_auth, published_room):  # type: ignore[no-untyped-def]
    case.call_and_validate(headers=console_auth(), checks=CHECKS)


@live_schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_live_room_api(case, room_key_auth, published_room):  # type: ignore[no-untyped-def]
    _aim_at_the_key_room(case, published_room.pk)
    case.call_and_validate(headers=room_key_auth, checks=CHECKS)
