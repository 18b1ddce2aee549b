"""An eval run end to end on a REAL Celery worker listening on the ``eval`` queue (as the
Procfile's ``eval`` process), over Redis and the test PostgreSQL database, against an
instant gold-answering endpoint: enqueued on commit, routed to ``eval``, every item scored."""

from __future__ import annotations

import time

import pytest

from bench.gold_model import GoldModelServer
from tests.training_app.solo_worker import solo_worker
from training_app.evals.qa_set_document import loads_qa_set
from training_app.models import EvalRun, ModelEndpoint
from training_app.services import evals

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]


def test_an_eval_run_on_a_real_eval_worker(compact_room, operator, tmp_path, settings) -> None:  # type: ignore[no-untyped-def]
    with solo_worker(tmp_path, settings, "eval") as log:
        eval_set = evals.eval_set_build_qa(
            harness_version=compact_room.harness.published_version, name="LS", per_type=1
        )
        with eval_set.file.open("rb") as handle:
            items = loads_qa_set(handle.read()).items
        wrong = {items[1].id}
        with GoldModelServer(items, wrong_items=wrong) as server:
            endpoint = ModelEndpoint.objects.create(
                name="gold", base_url=server.base_url, tool_mode="text"
            )
            run = evals.eval_run_create(
                eval_set=eval_set, model_label="HAT", endpoint=endpoint, created_by=operator
            )
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                run.refresh_from_db()
                if run.is_finished:
                    break
                time.sleep(0.2)
        assert run.status == EvalRun.Status.SUCCEEDED, log.read_text()[-3000:]
        assert "training_app.run_eval" in log.read_text()
    assert run.progress_done == run.progress_total == len(items)
    failed = set(run.item_results.filter(passed=False).values_list("item_id", flat=True))
    assert failed == wrong
    assert run.summary["passed"] == len(items) - 1
