"""The generation job: each side's agent answers each pair through Celery (eager here) on a
scripted OpenAI-compatible server that answers per model name, so every reply is known.
Progress, per-item failures, redelivery (only missing replies), and one small integration
test with the real local model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from experiments_app.models import BlindTest
from experiments_app.services import blind_tests as services
from tests.inference.scripted_server import JsonReply, ScriptedServer, SseReply, Step, chunk
from tests.model_worker import REAL_MODEL_MARKS
from training_app.models import ModelEndpoint

pytestmark = pytest.mark.django_db


def _say(text: str) -> SseReply:
    return SseReply(
        [
            chunk(role="assistant", content=text),
            chunk(
                finish_reason="stop",
                usage={"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
            ),
        ]
    )


class PerModelServer(ScriptedServer):
    """Answers ``<model> on <comment>``; a comment containing ``FAIL`` gets a 500 for the
    models in ``failing``."""

    failing: set[str]

    def next_step(self, path: str, body: dict[str, Any]) -> Step | None:
        super().next_step(path, body)
        model = str(body.get("model"))
        user = [m for m in body.get("messages", []) if m.get("role") == "user"]
        comment = str(user[-1].get("content", "")) if user else ""
        if "FAIL" in comment and model in self.failing:
            return JsonReply({"error": {"message": "boom"}}, status=500)
        return _say(f"{model} on {comment.splitlines()[-1][:60]}")


@pytest.fixture
def server() -> Iterator[PerModelServer]:
    srv = PerModelServer()
    srv.failing = set()
    with srv:
        yield srv


@pytest.fixture
def eager() -> Iterator[None]:
    from console.celery import app

    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = before


def endpoints(base_url: str, **extra: Any) -> tuple[ModelEndpoint, ModelEndpoint]:
    return (
        ModelEndpoint.objects.create(
            name="left-model", base_url=base_url, model_name="m-one", timeout_s=5, **extra
        ),
        ModelEndpoint.objects.create(
            name="right-model", base_url=base_url, model_name="m-two", timeout_s=5, **extra
        ),
    )


def spec(
    room: Any, e1: ModelEndpoint, e2: ModelEndpoint, rows: list[dict[str, Any]], **kw: Any
) -> services.BlindTestSpec:
    return services.BlindTestSpec(
        name="models",
        room=room,
        compare=BlindTest.Compare.ENDPOINTS,
        endpoint_one=e1,
        endpoint_two=e2,
        request_source=BlindTest.RequestSource.UPLOAD,
        reply_source=BlindTest.ReplySource.GENERATED,
        upload="\n".join(json.dumps(r) for r in rows).encode(),
        upload_name="rows.jsonl",
        labels_per_pair=2,
        **kw,
    )


ROWS = [
    {"comment": "How much is the sweater?", "product_sku": "SW-1001"},
    {"comment": "Is the jacket warm?", "product_sku": "JK-2001"},
    {"comment": "Do you ship abroad?"},
]


def test_the_job_fills_both_sides_and_opens_the_test(
    compact_room, operator, server, eager, django_capture_on_commit_callbacks
) -> None:
    e1, e2 = endpoints(server.base_url)
    with django_capture_on_commit_callbacks(execute=True):
        test = services.blind_test_create(
            spec=spec(compact_room, e1, e2, ROWS, gold_pairs=1), created_by=operator
        )
    test.refresh_from_db()
    assert test.status == BlindTest.Status.OPEN, test.error
    assert (test.progress_done, test.progress_total) == (6, 6)
    assert test.error == ""
    pairs = list(test.pairs.filter(is_gold=False).order_by("position"))
    assert len(pairs) == 3 and all(p.ready for p in pairs)
    for pair in pairs:
        assert pair.reply_one.startswith("m-one on ")
        assert pair.reply_two.startswith("m-two on ")
        assert pair.comment in pair.reply_one
    # six model calls: one per reply (the gold pair is built, not generated)
    assert len(server.requests) == 6
    assert sorted(r.body["model"] for r in server.requests) == ["m-one"] * 3 + ["m-two"] * 3


def test_a_failed_reply_is_recorded_and_the_rest_is_kept_then_retried(
    compact_room, operator, server, eager, django_capture_on_commit_callbacks
) -> None:
    e1, e2 = endpoints(server.base_url)
    server.failing = {"m-two"}
    rows = [*ROWS, {"comment": "FAIL this one please"}]
    with django_capture_on_commit_callbacks(execute=True):
        test = services.blind_test_create(
            spec=spec(compact_room, e1, e2, rows), created_by=operator
        )
    test.refresh_from_db()
    assert test.status == BlindTest.Status.OPEN
    assert test.error.startswith("1 replies failed and their pairs are left out: pair ")
    assert "right-model" in test.error
    assert (test.progress_done, test.progress_total) == (7, 8)
    failed = test.pairs.get(comment="FAIL this one please")
    assert failed.reply_one.startswith("m-one") and failed.reply_two == "" and not failed.ready
    assert test.pairs.filter(ready=True).count() == 3
    # the model recovers; the operator retries: only the one missing reply is generated
    server.failing = set()
    calls = len(server.requests)
    with django_capture_on_commit_callbacks(execute=True):
        services.blind_test_open(test=test)
    test.refresh_from_db()
    assert (test.status, test.error) == (BlindTest.Status.OPEN, "")
    assert len(server.requests) == calls + 1
    assert test.pairs.filter(ready=True).count() == 4
    assert (test.progress_done, test.progress_total) == (8, 8)


def test_every_reply_failing_fails_the_test(
    compact_room, operator, server, eager, django_capture_on_commit_callbacks
) -> None:
    e1, e2 = endpoints(server.base_url)
    server.failing = {"m-one", "m-two"}
    with django_capture_on_commit_callbacks(execute=True):
        test = services.blind_test_create(
            spec=spec(compact_room, e1, e2, [{"comment": "FAIL a"}, {"comment": "FAIL b"}]),
            created_by=operator,
        )
    test.refresh_from_db()
    assert test.status == BlindTest.Status.FAILED
    assert test.error.startswith("4 replies failed")


def test_the_job_waits_for_a_side_endpoint_that_is_not_up(
    compact_room, operator, server, monkeypatch
) -> None:
    from celery.exceptions import Retry

    from experiments_app.tasks import generate_blind_replies

    monkeypatch.setattr(generate_blind_replies, "delay", lambda _id: None)
    up, down = endpoints(server.base_url)
    down.base_url = "http://127.0.0.1:9/v1"
    down.save()
    test = services.blind_test_create(spec=spec(compact_room, up, down, ROWS), created_by=operator)
    # when a worker (not eager) runs the job while one side's model does not answer yet,
    # it asks to be retried and generates nothing (rather than failing every reply)
    with pytest.raises(Retry):
        generate_blind_replies(test.pk)
    test.refresh_from_db()
    assert test.status == BlindTest.Status.GENERATING and test.error == ""
    assert not server.requests and not test.pairs.filter(is_gold=False, ready=True).exists()
    # and once both answer, the same task generates every reply
    down.base_url = server.base_url
    down.save()
    assert generate_blind_replies(test.pk)["generated"] == 6
    test.refresh_from_db()
    assert test.status == BlindTest.Status.OPEN


def test_a_redelivered_job_generates_only_what_is_missing(
    compact_room, operator, server, monkeypatch
) -> None:
    from experiments_app import tasks

    monkeypatch.setattr(tasks.generate_blind_replies, "delay", lambda _id: None)
    e1, e2 = endpoints(server.base_url)
    test = services.blind_test_create(spec=spec(compact_room, e1, e2, ROWS), created_by=operator)
    first = test.pairs.order_by("position").first()
    assert first is not None
    # a first delivery stored side one of the first pair, then its worker died
    type(first).objects.filter(pk=first.pk).update(reply_one="kept from the first delivery")
    report = tasks.generate_blind_replies(test.pk)
    assert report == {"generated": 5, "failed": 0, "skipped": False}
    first.refresh_from_db()
    assert first.reply_one == "kept from the first delivery" and first.ready
    assert len(server.requests) == 5
    # a third delivery after the job finished does nothing
    assert tasks.generate_blind_replies(test.pk)["skipped"] is True
    assert len(server.requests) == 5


def test_closing_a_generating_test_stops_the_job(
    compact_room, operator, server, monkeypatch
) -> None:
    from experiments_app import tasks

    monkeypatch.setattr(tasks.generate_blind_replies, "delay", lambda _id: None)
    e1, e2 = endpoints(server.base_url)
    test = services.blind_test_create(spec=spec(compact_room, e1, e2, ROWS), created_by=operator)
    services.blind_test_close(test=test)
    assert tasks.generate_blind_replies(test.pk)["skipped"] is True
    assert server.requests == []


# --- the real local model ---------------------------------------------------------------------


def real_model(test: Any) -> Any:
    """The marks of the project's real-model tests (``model``; skipped without the model)."""
    for mark in REAL_MODEL_MARKS:
        test = mark(test)
    return test


@real_model
def test_real_model_generates_a_couple_of_pairs(
    compact_room, operator, local_worker, eager, django_capture_on_commit_callbacks
) -> None:
    common = {
        "base_url": local_worker.base_url,
        "model_name": local_worker.model_id,
        "tool_mode": ModelEndpoint.ToolMode.TEXT,
        "timeout_s": 120,
    }
    e1 = ModelEndpoint.objects.create(name="smollm2-short", max_tokens=24, **common)
    e2 = ModelEndpoint.objects.create(name="smollm2-long", max_tokens=48, **common)
    compact_room.reply_deadline_ms = 240_000  # 2 shared CPU cores: be generous
    compact_room.save()
    with django_capture_on_commit_callbacks(execute=True):
        test = services.blind_test_create(
            spec=spec(compact_room, e1, e2, ROWS[:2]), created_by=operator
        )
    test.refresh_from_db()
    assert test.status == BlindTest.Status.OPEN, test.error
    assert test.error == ""
    pairs = list(test.pairs.all())
    assert len(pairs) == 2 and all(
        p.ready and p.reply_one.strip() and p.reply_two.strip() for p in pairs
    )
