"""Both arms end to end through POST /api/v1/live/reply with the REAL SmolLM2-135M model
served by `transformers serve` (text-action tool mode: the 135M model has no tool parser).

A 135M model's answers are not judged here; what is asserted is that the real path works:
the model was called over HTTP, tokens and timings were recorded, the trace is complete, the
reply is non-empty, and nothing fell back for an infrastructure reason. Kept small for CI:
max_tokens 48, one comment per arm.
"""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from experiments_app.models import LiveReply
from harness_app import services
from tests.model_worker import REAL_MODEL_MARKS
from training_app.models import ModelEndpoint

pytestmark = [*REAL_MODEL_MARKS, pytest.mark.django_db]
INFRASTRUCTURE_FAILURES = (
    "model_timeout",
    "model_unavailable",
    "model_protocol",
    "model_rejected",
    "runtime_error",
    "deadline",
)


@pytest.fixture
def real_room(published_room, local_worker):  # type: ignore[no-untyped-def]
    services.products_import(
        room=published_room,
        fmt="json",
        data=json.dumps(
            [{"sku": "SW-1001", "title": "Merino Wool Crew Sweater", "price": "89.00", "stock": 12}]
        ).encode(),
    )
    endpoint = ModelEndpoint.objects.create(
        name="smollm2-test",
        base_url=local_worker.base_url,
        model_name=local_worker.model_id,
        tool_mode=ModelEndpoint.ToolMode.TEXT,
        timeout_s=120,
        max_tokens=48,
    )
    published_room.reply_endpoint = endpoint
    published_room.reply_deadline_ms = 120_000  # 2 shared CPU cores: be generous
    published_room.save()
    return published_room


def ask(room, arm: str) -> dict:  # type: ignore[no-untyped-def]
    room.serving_arm = arm
    room.save()
    _, raw = services.api_key_create(
        room=room, name=f"{arm}-key", scopes=["reply"], created_by=None
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    response = client.post(
        "/api/v1/live/reply",
        {
            "request_id": f"real-{arm}",
            "room": room.pk,
            "uv_id": "uv-1",
            "comment": "How much is this sweater?",
            "context": {"product_sku": "SW-1001"},
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.parametrize("arm", ["harness", "react"])
def test_real_model_answers_through_the_reply_api(real_room, arm):  # type: ignore[no-untyped-def]
    data = ask(real_room, arm)
    record = LiveReply.objects.get(pk=data["trace_id"])
    assert data["arm"] == arm and data["harness_version"] == 1
    assert data["reply"].strip()
    assert record.fallback_reason not in INFRASTRUCTURE_FAILURES, record.trace
    model_calls = [s for s in record.trace["steps"] if s["kind"] == "model_call"]
    assert model_calls and all(s["detail"]["ok"] for s in model_calls)
    assert record.prompt_tokens > 0 and record.completion_tokens > 0
    assert record.ttft_ms is not None and 0 < record.ttft_ms <= record.model_ms
    assert record.trace["agent"] == arm
