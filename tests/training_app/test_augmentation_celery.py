"""An HSA augmentation job end to end on a REAL Celery worker over the Redis broker, against
the test PostgreSQL database: enqueue on commit, progress, the stored artifact."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection

from tests.db_sessions import wait_for_other_sessions_to_close
from training_app import services
from training_app.models import AugmentationJob

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]
GOLD = ROOT / "training_app" / "demo_data" / "gold_trajectories.jsonl"


@pytest.fixture
def worker(tmp_path, settings):  # type: ignore[no-untyped-def]
    broker = django_settings.CELERY_BROKER_URL
    if not broker.startswith("redis://"):
        pytest.skip(f"needs the Redis broker (make test sets CELERY_BROKER_URL); got {broker}")
    settings.MEDIA_ROOT = tmp_path / "artifacts"
    db = connection.settings_dict
    env = os.environ | {
        "DATABASE_URL": (
            f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
        ),
        "CELERY_BROKER_URL": broker,
        "HAT_ARTIFACT_DIR": str(settings.MEDIA_ROOT),
        "HAT_VAR_DIR": str(tmp_path / "var"),
    }
    log = (tmp_path / "worker.log").open("wb")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "console",
            "worker",
            "--pool=solo",
            "-Q",
            "default",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            f"test-{uuid.uuid4().hex[:6]}@%h",
            "--loglevel=INFO",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    yield tmp_path / "worker.log"
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
    wait_for_other_sessions_to_close()


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
