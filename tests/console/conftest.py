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


@pytest.fixture
def scripted_server() -> Any:
    """A scripted OpenAI-compatible server (enqueue replies on it) for deterministic tests."""
    from tests.inference.scripted_server import ScriptedServer

    with ScriptedServer() as server:
        yield server


@pytest.fixture
def scripted_endpoint(scripted_server: Any, db: Any) -> Any:
    from training_app.models import ModelEndpoint

    return ModelEndpoint.objects.create(
        name="scripted",
        base_url=scripted_server.base_url,
        model_name="scripted-model",
        timeout_s=5,
    )


def say(text: str, prompt_tokens: int = 50, completion_tokens: int = 8) -> Any:
    """One streamed assistant message, as the scripted server sends it."""
    from tests.inference.scripted_server import SseReply, chunk

    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    return SseReply(
        [chunk(role="assistant", content=text), chunk(finish_reason="stop", usage=usage)]
    )
