"""COPY rows into a (temporary staging) table on PostgreSQL with psycopg 3.

Staging + ``INSERT ... SELECT ... ON CONFLICT`` is the fastest idempotent bulk write
PostgreSQL offers: COPY streams the rows, and the conflict handling stays set-based.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def copy_into_staging(
    cursor: Any, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    """Empty ``table`` (a staging table), then COPY ``rows`` into it through the Django
    cursor's psycopg cursor. Emptying first matters: ON COMMIT DELETE ROWS only fires at a
    real commit, not when the caller runs inside an outer transaction."""
    raw = getattr(cursor, "cursor", cursor)  # Django's CursorWrapper -> psycopg cursor
    raw.execute(f"TRUNCATE {table}")
    statement = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
    with raw.copy(statement) as copy:
        for row in rows:
            copy.write_row(row)
