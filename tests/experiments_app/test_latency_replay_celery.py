"""A latency replay end to end on a REAL Celery worker listening on the ``eval`` queue (as the
Procfile's ``eval`` process), over Redis and the test PostgreSQL database, against the
scripted model server: queued on commit, routed to ``eval``, every level stored."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

from experiments_app.models import LatencyReport, LiveReply
from experiments_app.services import latency_replay
from tests.experiments_app.test_latency_replay import EndlessServer, jsonl
from tests.training_app.solo_worker import solo_worker
from training_app.models import ModelEndpoint

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]


def test_a_replay_on_a_real_eval_worker(
    published_room: Any, operator: Any, tmp_path, settings
) -> None:  # type: ignore[no-untyped-def]
    with solo_worker(tmp_path, settings, "eval") as log, EndlessServer() as server:
        server.delay_s = 0.02
        endpoint = ModelEndpoint.objects.create(
            name="scripted", base_url=server.base_url, model_name="scripted-model", timeout_s=5
        )
        report = latency_replay.latency_replay_queue(
            room=published_room,
            endpoint=endpoint,
            concurrency=[1, 3],
            request_set="upload",
            upload=jsonl(6),
            upload_name="set.jsonl",
            created_by=operator,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            report.refresh_from_db()
            if report.is_finished:
                break
            time.sleep(0.2)
        assert report.status == LatencyReport.Status.SUCCEEDED, log.read_text()[-3000:]
        assert "experiments_app.tasks.run_latency_replay" in log.read_text()
        calls = len(server.requests)
    assert calls == 12
    assert report.progress_done == report.progress_total == 12
    assert [level["concurrency"] for level in report.results] == [1, 3]
    for level in report.results:
        latencies = np.asarray(level["latencies_ms"])
        assert latencies.size == 6 and (latencies > 20).all()
        assert level["p95_ms"] == pytest.approx(np.percentile(latencies, 95), abs=1e-3)
    assert LiveReply.objects.filter(room=published_room, source="replay").count() == 12
