"""Latency replay jobs (``services.latency_replay``): validation naming the field (nothing
saved), a replay through the eager ``eval`` task on the scripted model server (numbers against
numpy, progress as requests finish), cancel (queued and mid-level), failures with a clear
error, redelivery (a live holder is left alone, a stale one is taken over keeping its stored
levels, a finished report is not run again) and a lost lease (the old worker stops writing)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from experiments_app.latency import summarize_level
from experiments_app.models import Experiment, ExperimentArm, LatencyReport, LiveReply
from experiments_app.selectors.promotion import promotion_report
from experiments_app.services import latency_replay as replay
from tests.inference.scripted_server import ScriptedServer, SseReply, chunk
from tests.model_worker import REAL_MODEL_MARKS
from training_app.models import ModelEndpoint

Status = LatencyReport.Status


def say(text: str, delay_s: float = 0.0) -> SseReply:
    usage = {"prompt_tokens": 40, "completion_tokens": 6, "total_tokens": 46}
    return SseReply(
        [chunk(role="assistant", content=text), chunk(finish_reason="stop", usage=usage)],
        first_delay_s=delay_s,
    )


class EndlessServer(ScriptedServer):
    """Answers every request after ``delay_s`` (``gate``: waits for it to be set first)."""

    delay_s = 0.0
    gate: threading.Event | None = None

    def next_step(self, path: str, body: dict[str, Any]) -> Any:
        super().next_step(path, body)
        if self.gate is not None:
            self.gate.wait(10)
        return say("Reply", self.delay_s)


@pytest.fixture
def server() -> Iterator[EndlessServer]:
    with EndlessServer() as srv:
        yield srv


@pytest.fixture
def scripted(server: EndlessServer, db: Any) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        name="scripted", base_url=server.base_url, model_name="scripted-model", timeout_s=5
    )


@pytest.fixture
def eager() -> Iterator[None]:
    from console.celery import app

    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = before


def jsonl(n: int, **extra: Any) -> bytes:
    rows = [
        {"comment": f"How much is item {i}?", "product_sku": "SW-1001", "uv_id": f"uv-{i}"} | extra
        for i in range(n)
    ]
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def queue(room: Any, endpoint: Any, **overrides: Any) -> LatencyReport:
    args: dict[str, Any] = {
        "room": room,
        "endpoint": endpoint,
        "concurrency": [1, 2],
        "request_set": "upload",
        "upload": jsonl(4),
        "upload_name": "set.jsonl",
        "enqueue": False,
    }
    return replay.latency_replay_queue(**(args | overrides))


def errors_of(call: Callable[[], Any]) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as caught:
        call()
    return caught.value.message_dict


# --- validation -------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"concurrency": []}, "concurrency", "1 to 8 distinct whole numbers"),
        ({"concurrency": [0]}, "concurrency", "0 is out of range"),
        ({"concurrency": [1, 65]}, "concurrency", "between 1 and 64"),
        ({"concurrency": [1, "4"]}, "concurrency", "'4' is not a whole number"),
        ({"concurrency": [True]}, "concurrency", "True is not a whole number"),
        ({"concurrency": [1, 1]}, "concurrency", "Each level may appear once"),
        ({"concurrency": list(range(1, 10))}, "concurrency", "9 levels; at most 8"),
        ({"limit": 0}, "limit", "between 1 and 2000"),
        ({"arm": "gpt"}, "arm", "Choose harness, react"),
        ({"request_set": "s3"}, "request_set", "Choose demo"),
        ({"upload": None}, "upload", "Attach a JSONL file"),
        ({"upload": b'{"comment": "ok"}\nnot json\n'}, "upload", "set.jsonl:2: not valid JSON"),
        ({"upload": b'{"comment": ""}\n'}, "upload", "set.jsonl:1: 'comment' must be a non-empty"),
        ({"upload": b'{"comment": "a", "recent_comments": "x"}\n'}, "upload", ":1: 'recent_"),
        ({"upload": b"[1]\n"}, "upload", "set.jsonl:1: each line must be a JSON object"),
        ({"upload": b"\n \n"}, "upload", "set.jsonl: no requests in the file"),
        ({"upload": b"\xff\xfe{}"}, "upload", "not UTF-8"),
        ({"upload": jsonl(2001)}, "upload", "2001 requests; at most 2000"),
        ({"upload": jsonl(1, comment="x" * 2001)}, "upload", "at most 2000"),
        ({"endpoint": None}, "endpoint", "Pick the model endpoint"),
    ],
)
def test_bad_input_names_the_field_and_saves_nothing(
    published_room: Any,
    scripted: ModelEndpoint,
    overrides: dict[str, Any],
    field: str,
    message: str,
) -> None:
    rest = dict(overrides)
    endpoint = rest.pop("endpoint", scripted)
    errors = errors_of(lambda: queue(published_room, endpoint, **rest))
    assert list(errors) == [field]
    assert any(message in m for m in errors[field]), errors
    assert LatencyReport.objects.count() == 0


@pytest.mark.django_db
def test_upload_size_limit(published_room: Any, scripted: ModelEndpoint, settings: Any) -> None:
    settings.HAT_MAX_UPLOAD_BYTES = 100
    errors = errors_of(lambda: queue(published_room, scripted, upload=jsonl(10)))
    assert errors["upload"][0].endswith("bytes; at most 100.")


@pytest.mark.django_db
def test_every_bad_line_is_reported_up_to_twenty(
    published_room: Any, scripted: ModelEndpoint
) -> None:
    errors = errors_of(lambda: queue(published_room, scripted, upload=b"nope\n" * 30))
    assert errors["upload"][:2] == [
        "set.jsonl:1: not valid JSON: Expecting value",
        "set.jsonl:2: not valid JSON: Expecting value",
    ]
    assert len(errors["upload"]) == 20


@pytest.mark.django_db
def test_room_and_endpoint_must_be_usable(
    room: Any,
    published_room: Any,
    other_room: Any,
    scripted: ModelEndpoint,
    merchant: Any,
    other_merchant: Any,
    operator: Any,
) -> None:
    # a room without a published harness
    errors = errors_of(lambda: queue(other_room, scripted))
    assert "has no published harness version" in errors["room"][0]
    # a room the user cannot see is "no such room", whatever else is wrong
    errors = errors_of(lambda: queue(published_room, None, created_by=other_merchant))
    assert errors == {"room": ["No such room."]}
    # inactive endpoint
    off = ModelEndpoint.objects.create(name="off", base_url="http://x:1/v1", is_active=False)
    errors = errors_of(lambda: queue(published_room, off, created_by=operator))
    assert errors == {"endpoint": ["Model endpoint 'off' is inactive; pick an active one."]}
    # a merchant replays only on the endpoints the room replies through
    errors = errors_of(lambda: queue(published_room, scripted, created_by=merchant))
    assert "is not one this room replies through" in errors["endpoint"][0]
    assert LatencyReport.objects.count() == 0
    published_room.reply_endpoint = scripted
    published_room.save()
    report = queue(published_room, scripted, created_by=merchant)
    assert report.created_by == merchant
    # ...or through an arm of one of its experiments
    arm_endpoint = ModelEndpoint.objects.create(name="arm-model", base_url="http://x:2/v1")
    experiment = Experiment.objects.create(name="e")
    experiment.rooms.add(published_room)
    ExperimentArm.objects.create(
        experiment=experiment,
        name="hat",
        kind="harness",
        harness_version=published_room.harness.published_version,
        endpoint=arm_endpoint,
        weight=10_000,
        position=0,
    )
    assert queue(published_room, arm_endpoint, created_by=merchant).endpoint == arm_endpoint
    # an operator replays on any active endpoint
    published_room.reply_endpoint = None
    published_room.save()
    assert queue(published_room, scripted, created_by=operator).status == Status.QUEUED


@pytest.mark.django_db
def test_the_demo_set_queues_with_everything_the_run_needs(
    published_room: Any, scripted: ModelEndpoint, operator: Any
) -> None:
    report = queue(
        published_room,
        scripted,
        request_set="demo",
        upload=None,
        concurrency=[1, 4, 8],
        limit=30,
        arm="react",
        created_by=operator,
    )
    assert report.status == Status.QUEUED and report.percent == 0 and not report.is_finished
    assert report.request_file == replay.DEMO_REQUEST_FILE
    assert report.requests == 30 and len(report.request_items) == 30
    assert report.progress_total == 90 and report.progress_done == 0
    assert report.arm == "react"
    assert report.harness_version == published_room.harness.published_version
    assert report.parameters == {
        "concurrency": [1, 4, 8],
        "limit": 30,
        "arm": "react",
        "request_set": "demo",
    }
    shipped = (replay.demo_request_path()).read_text().splitlines()[0]
    assert report.request_items[0] == json.loads(shipped)
    # without an arm the room's serving agent at queue time
    assert queue(published_room, scripted).arm == published_room.serving_arm


# --- running ----------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_queued_replay_runs_on_the_eval_task(
    published_room: Any, scripted: ModelEndpoint, server: EndlessServer, eager: None
) -> None:
    server.delay_s = 0.01
    # given a replay queued with the task enqueued on commit (eager: it runs at commit)
    report = queue(published_room, scripted, enqueue=True)
    report.refresh_from_db()
    # then every request went through the full reply path, once per level
    assert report.status == Status.SUCCEEDED, report.error
    assert report.progress_done == report.progress_total == 8 and report.percent == 100
    assert report.started_at is not None and report.finished_at is not None
    assert report.error == "" and report.worker
    assert len(server.requests) == 8
    replies = LiveReply.objects.filter(room=published_room, source="replay")
    assert replies.count() == 8 and not replies.filter(fallback=True).exists()
    assert len(set(replies.values_list("request_id", flat=True))) == 8
    # and the stored numbers are the percentiles of the stored raw latencies
    assert [level["concurrency"] for level in report.results] == [1, 2]
    for level in report.results:
        latencies = np.asarray(level["latencies_ms"])
        assert latencies.size == 4 and (latencies > 10).all()
        assert level["p50_ms"] == pytest.approx(np.percentile(latencies, 50), abs=1e-3)
        assert level["p95_ms"] == pytest.approx(np.percentile(latencies, 95), abs=1e-3)
        assert level["max_ms"] == pytest.approx(latencies.max())
        assert level["share_under_15s"] == 1.0 and level["fallbacks"] == 0
        assert len(level["ttfts_ms"]) == 4 and "partial" not in level


def run_in_thread(report_id: int) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []

    def target() -> None:
        from django.db import connection

        try:
            out.append(replay.latency_replay_run(report_id))
        finally:
            connection.close()

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, out


def wait_until(condition: Callable[[], bool], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError("timed out")


@pytest.mark.django_db(transaction=True)
def test_progress_moves_as_requests_finish(
    published_room: Any, scripted: ModelEndpoint, server: EndlessServer
) -> None:
    server.delay_s = 0.15
    report = queue(published_room, scripted, concurrency=[1], upload=jsonl(6))
    thread, out = run_in_thread(report.pk)
    seen: set[int] = set()
    while thread.is_alive():
        row = LatencyReport.objects.values("status", "progress_done").get(pk=report.pk)
        if row["status"] == Status.RUNNING:
            seen.add(row["progress_done"])
        time.sleep(0.03)
    thread.join()
    assert out[0].status == Status.SUCCEEDED
    # the bar moved request by request, not only at the end
    assert {1, 2, 3, 4, 5} & seen and len(seen) >= 3, seen


@pytest.mark.django_db(transaction=True)
def test_cancel_mid_level_keeps_the_partial_level(
    published_room: Any, scripted: ModelEndpoint, server: EndlessServer
) -> None:
    server.delay_s = 0.1
    report = queue(published_room, scripted, concurrency=[2, 4], upload=jsonl(40))
    thread, out = run_in_thread(report.pk)
    wait_until(lambda: LatencyReport.objects.get(pk=report.pk).progress_done >= 4)
    replay.latency_replay_cancel(report=LatencyReport.objects.get(pk=report.pk))
    thread.join(20)
    report.refresh_from_db()
    assert out[0].status == report.status == Status.CANCELLED
    assert report.finished_at is not None and report.cancel_requested
    # the first level stopped early: stored, marked partial; the second never started
    (level,) = report.results
    assert level["concurrency"] == 2 and level["partial"] is True
    assert 4 <= level["requests"] < 40
    assert report.progress_done == level["requests"] == len(server.requests)
    assert report.percent < 100


@pytest.mark.django_db(transaction=True)
def test_a_queued_replay_cancelled_never_runs(
    published_room: Any, scripted: ModelEndpoint, server: EndlessServer
) -> None:
    report = queue(published_room, scripted)
    report = replay.latency_replay_cancel(report=report)
    assert report.status == Status.CANCELLED and report.finished_at is not None
    assert replay.latency_replay_run(report.pk).status == Status.CANCELLED
    assert server.requests == []
    # cancelling a finished report changes nothing
    assert replay.latency_replay_cancel(report=report).status == Status.CANCELLED


@pytest.mark.django_db(transaction=True)
def test_an_exception_fails_the_report_with_a_clear_error(
    published_room: Any, scripted: ModelEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(**kwargs: Any) -> Any:
        raise RuntimeError("database on fire")

    monkeypatch.setattr(replay, "live_reply", broken)
    report = queue(published_room, scripted)
    assert replay.latency_replay_run(report.pk).status == Status.FAILED
    report.refresh_from_db()
    assert report.error == "a replay worker failed: RuntimeError: database on fire"
    assert report.finished_at is not None and report.results == []


@pytest.mark.django_db(transaction=True)
def test_an_endpoint_gone_after_queueing_fails_with_a_sentence(
    published_room: Any, scripted: ModelEndpoint, server: EndlessServer
) -> None:
    report = queue(published_room, scripted)
    scripted.is_active = False
    scripted.save()
    assert replay.latency_replay_run(report.pk).status == Status.FAILED
    report.refresh_from_db()
    assert report.error == "Model endpoint 'scripted' was deactivated after queueing."
    deleted = queue(published_room, ModelEndpoint.objects.create(name="d", base_url="http://x/v1"))
    ModelEndpoint.objects.filter(name="d").delete()
    replay.latency_replay_run(deleted.pk)
    deleted.refresh_from_db()
    assert deleted.status == Status.FAILED
    assert deleted.error == "The model endpoint was deleted after the replay was queued."
    assert server.requests == []


@pytest.mark.django_db(transaction=True)
def test_an_outage_is_fallbacks_not_a_failure(published_room: Any) -> None:
    down = ModelEndpoint.objects.create(name="down", base_url="http://127.0.0.1:9/v1", timeout_s=1)
    report = queue(published_room, down, concurrency=[2], upload=jsonl(3))
    assert replay.latency_replay_run(report.pk).status == Status.SUCCEEDED
    report.refresh_from_db()
    assert report.results[0]["fallbacks"] == 3 and report.results[0]["ttft_p50_ms"] is None


# --- redelivery and the lease -----------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_redelivery_leaves_a_live_holder_alone_and_takes_over_a_stale_one(
    published_room: Any, scripted: ModelEndpoint, server: EndlessServer
) -> None:
    report = queue(published_room, scripted, concurrency=[1, 2], upload=jsonl(3))
    stored = summarize_level(
        concurrency=1, latencies_ms=[5, 6, 7], ttfts_ms=[1, 2, 3], fallbacks=0, wall_s=0.1
    ).as_json()
    partial = {**stored, "concurrency": 2, "partial": True}
    # given a worker that stored level 1 and part of level 2, heartbeat fresh
    LatencyReport.objects.filter(pk=report.pk).update(
        status=Status.RUNNING,
        worker="dead-worker",
        started_at=timezone.now(),
        updated_at=timezone.now(),
        results=[stored, partial],
        progress_done=5,
    )
    # when a redelivered message finds it: busy, nothing touched
    outcome = replay.latency_replay_run(report.pk)
    assert outcome == replay.RunOutcome(Status.RUNNING, busy=True)
    assert LatencyReport.objects.get(pk=report.pk).worker == "dead-worker"
    assert server.requests == []
    # when its heartbeat is stale: taken over; level 1 kept, level 2 run again from scratch
    stale = timezone.now() - timedelta(seconds=replay.STALE_AFTER_S + 1)
    LatencyReport.objects.filter(pk=report.pk).update(updated_at=stale)
    assert replay.latency_replay_run(report.pk).status == Status.SUCCEEDED
    report.refresh_from_db()
    assert report.worker != "dead-worker"
    assert report.results[0] == stored
    assert report.results[1]["concurrency"] == 2 and "partial" not in report.results[1]
    assert report.results[1]["requests"] == 3
    assert len(server.requests) == 3  # only the level that was not stored
    assert report.progress_done == report.progress_total == 6
    # a finished report redelivered again is not run again
    assert replay.latency_replay_run(report.pk) == replay.RunOutcome(Status.SUCCEEDED)
    assert len(server.requests) == 3


@pytest.mark.django_db(transaction=True)
def test_a_stale_report_cancelled_meanwhile_is_settled(
    published_room: Any, scripted: ModelEndpoint
) -> None:
    report = queue(published_room, scripted)
    stale = timezone.now() - timedelta(seconds=replay.STALE_AFTER_S + 1)
    LatencyReport.objects.filter(pk=report.pk).update(
        status=Status.RUNNING, worker="dead", updated_at=stale, cancel_requested=True
    )
    assert replay.latency_replay_run(report.pk) == replay.RunOutcome(Status.CANCELLED)


@pytest.mark.django_db(transaction=True)
def test_a_worker_that_lost_its_lease_stops_writing(
    published_room: Any,
    scripted: ModelEndpoint,
    server: EndlessServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(replay, "HEARTBEAT_INTERVAL_S", 0.05)
    server.delay_s = 0.05
    report = queue(published_room, scripted, concurrency=[1, 2], upload=jsonl(30))
    thread, out = run_in_thread(report.pk)
    wait_until(lambda: LatencyReport.objects.get(pk=report.pk).progress_done >= 2)
    # another worker takes the report over (as after a stale heartbeat)
    LatencyReport.objects.filter(pk=report.pk).update(worker="new-worker", progress_done=0)
    thread.join(20)
    assert not thread.is_alive()
    report.refresh_from_db()
    # the old worker stopped: no result, status and progress of the new holder untouched
    assert out[0].status == Status.RUNNING
    assert report.worker == "new-worker" and report.results == [] and report.progress_done == 0
    assert len(server.requests) < 30


@pytest.mark.django_db
def test_promotion_gate_reads_only_succeeded_reports(published_room: Any) -> None:
    from training_app.models import TrainingRun

    trained = ModelEndpoint.objects.create(name="run-7", base_url="http://127.0.0.1:9/v1")
    TrainingRun.objects.create(
        name="hat", base_model_dir="/models/base", stages=["hsa_sft"], result_endpoint=trained
    )

    def latency() -> Any:
        return promotion_report(trained, [published_room]).conditions[-1]

    LatencyReport.objects.create(
        endpoint=trained,
        room=published_room,
        request_file="x",
        requests=1,
        results=[{"concurrency": 1, "p95_ms": 100.0}],
    )
    assert latency().name == "latency" and latency().passed
    # a newer replay still running (its partial level slow) or failed is no evidence yet
    for status in (Status.QUEUED, Status.RUNNING, Status.FAILED, Status.CANCELLED):
        LatencyReport.objects.create(
            endpoint=trained,
            room=published_room,
            request_file="x",
            requests=1,
            status=status,
            results=[{"concurrency": 1, "p95_ms": 99_000.0, "partial": True}],
        )
        assert latency().passed, status


def real_model(test: Any) -> Any:
    """The marks of the project's real-model tests (``model``; skipped without the model)."""
    for mark in REAL_MODEL_MARKS:
        test = mark(test)
    return test


@real_model
@pytest.mark.django_db(transaction=True)
def test_a_replay_against_the_real_local_model(compact_room: Any, local_worker: Any) -> None:
    endpoint = ModelEndpoint.objects.create(
        name="smollm2",
        base_url=local_worker.base_url,
        model_name=local_worker.model_id,
        tool_mode=ModelEndpoint.ToolMode.TEXT,
        max_tokens=32,
        timeout_s=120,
    )
    compact_room.reply_deadline_ms = 240_000  # shared CPU cores: be generous
    compact_room.save()
    report = replay.latency_replay_queue(
        room=compact_room,
        endpoint=endpoint,
        concurrency=[1, 2],
        request_set="demo",
        limit=2,
        enqueue=False,
    )
    assert replay.latency_replay_run(report.pk).status == Status.SUCCEEDED
    report.refresh_from_db()
    assert report.progress_done == report.progress_total == 4
    assert [level["requests"] for level in report.results] == [2, 2]
    replies = LiveReply.objects.filter(room=compact_room, source="replay")
    assert replies.count() == 4 and set(replies.values_list("endpoint", flat=True)) == {endpoint.pk}
    # the requests reached the model: a first token was measured for each
    for level in report.results:
        assert len(level["ttfts_ms"]) == 2 and all(t > 0 for t in level["ttfts_ms"])
        assert level["p50_ms"] == pytest.approx(np.percentile(level["latencies_ms"], 50), abs=1e-3)


@pytest.mark.django_db(transaction=True)
def test_the_watchdog_takes_over_a_dead_workers_replay(
    published_room: Any, scripted: ModelEndpoint, server: EndlessServer, eager: None
) -> None:
    # given a replay whose worker died mid-level (heartbeat stale, its message gone), one
    # with a fresh heartbeat, and a dead one whose cancel was asked
    dead, alive, cancelled = (queue(published_room, scripted) for _ in range(3))
    stale = timezone.now() - timedelta(seconds=replay.STALE_AFTER_S + 1)
    LatencyReport.objects.filter(pk__in=[dead.pk, cancelled.pk]).update(
        status=Status.RUNNING, worker="killed", updated_at=stale
    )
    LatencyReport.objects.filter(pk=cancelled.pk).update(cancel_requested=True)
    LatencyReport.objects.filter(pk=alive.pk).update(
        status=Status.RUNNING, worker="alive", updated_at=timezone.now()
    )
    # when beat's watchdog runs (the eval task eager: the requeued replay runs here)
    from experiments_app.tasks import requeue_stale_latency_replays

    assert requeue_stale_latency_replays() == [dead.pk]
    # then the dead worker's replay ran to the end on a new worker, the live one is left
    # alone, and the cancelled one is settled without running
    dead.refresh_from_db()
    assert dead.status == Status.SUCCEEDED and dead.worker != "killed"
    assert dead.progress_done == dead.progress_total
    assert LatencyReport.objects.get(pk=alive.pk).worker == "alive"
    assert LatencyReport.objects.get(pk=cancelled.pk).status == Status.CANCELLED
    assert len(server.requests) == dead.progress_total
