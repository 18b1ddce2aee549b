"""The benchmarks' own PostgreSQL database: created on first use, migrated, Django set up."""

from __future__ import annotations

import os

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/hat_bench"


def ensure_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')


def setup_django() -> None:
    """Point Django at ``BENCH_DATABASE_URL`` (created if missing), set it up and migrate."""
    url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL)
    ensure_database(url)
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
