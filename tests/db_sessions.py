"""Tests that start a worker process on the test database wait for its session to end."""

from __future__ import annotations

import time

from django.db import connection


def wait_for_other_sessions_to_close(timeout_s: float = 10.0) -> None:
    """A worker's database session ends a moment after its process: wait for it, so the test
    database can be dropped at teardown ("is being accessed by other users" otherwise)."""
    database = connection.settings_dict["NAME"]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                [database],
            )
            row = cursor.fetchone()
            if row is not None and row[0] == 0:
                return
        time.sleep(0.1)
