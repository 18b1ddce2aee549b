"""A real Celery worker process (``--pool=solo``, as the Procfile's ``worker`` and ``eval``)
on the Redis broker and the test database, for the integration tests of one queue."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import connection

from tests.db_sessions import wait_for_other_sessions_to_close

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def solo_worker(tmp_path: Path, settings: Any, queue: str) -> Iterator[Path]:
    """Start the worker for ``queue``; yields its log file; stops it afterwards."""
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
        "HF_HUB_OFFLINE": "1",
    }
    log_path = tmp_path / f"worker-{queue}.log"
    log = log_path.open("wb")
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
            queue,
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            f"test-{queue}-{uuid.uuid4().hex[:6]}@%h",
            "--loglevel=INFO",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield log_path
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        wait_for_other_sessions_to_close()
