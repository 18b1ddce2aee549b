"""Schemathesis over the whole OpenAPI schema, authenticated as an operator: no input may
produce a server error. Bounded examples per operation keep it fast; it grows with the API."""

from __future__ import annotations

import json

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

pytestmark = [pytest.mark.slow]


from drf_spectacular.generators import SchemaGenerator  # noqa: E402
from drf_spectacular.renderers import OpenApiJsonRenderer  # noqa: E402
from knox.models import AuthToken  # noqa: E402

from console.wsgi import application  # noqa: E402  (after pytest-django set up Django)


def _schema_document() -> dict:  # type: ignore[type-arg]
    """The same document /api/v1/schema/ serves (to signed-in users only), generated without a
    request so that collection needs no database."""
    generated = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(generated))


schema = schemathesis.openapi.from_dict(_schema_document())
schema.app = application


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


@schema.parametrize()
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_no_server_errors(case, operator, published_room):  # type: ignore[no-untyped-def]
    # A fresh token per example (the logout endpoints revoke the one they are called with),
    # made past the per-user cap that api_token_issue enforces: hypothesis runs many examples.
    _, token = AuthToken.objects.create(user=operator)
    case.call_and_validate(headers={"Authorization": f"Token {token}"}, checks=[not_a_server_error])
