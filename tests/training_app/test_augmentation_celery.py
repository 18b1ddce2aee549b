"""An HSA augmentation job end to end on a REAL Celery worker over the Redis broker, against
the test PostgreSQL database: enqueue on commit, progress, the stored artifact."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.training_app.solo_worker import solo_worker
from training_app import services
from training_app.models import AugmentationJob

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]
GOLD = ROOT / "training_app" / "demo_data" / "gold_trajectories.jsonl"


@pytest.fixture
def worker(tmp_path, settings):  # type: ignore[no-untyped-def]
    with solo_worker(tmp_path, settings, "default") as log:
        yield log


def test_job_runs_on_a_real_worker(published_room, operator, worker):  # type: ignore[no-untyped-def]
    version = published_room.harness.published_version
    gold = services.dataset_create_gold(
        harness_version=version, name="gold", data=GOLD.read_bytes(), created_by=operator
    )
    job = services.augmentation_job_create(
        source=gold, policy="hsa-train", seed=4, variants=1, created_by=operator
    )
    seen_running = False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job.refresh_from_db()
        seen_running |= job.status == AugmentationJob.Status.RUNNING
        if job.is_finished:
            break
        time.sleep(0.2)
    assert job.status == "succeeded", worker.read_text()[-3000:]
    assert job.progress_done == job.progress_total == 82
    assert job.output is not None and job.output.examples == 82
    assert len(job.output.file.open("rb").read().splitlines()) == 82
