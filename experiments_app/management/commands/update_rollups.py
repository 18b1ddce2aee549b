"""Bring the experiment rollups up to date now (what the Celery beat task does)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from experiments_app.rollups import rollups_update


class Command(BaseCommand):
    help = "Roll up new events and exposures into the experiments' per-arm statistics."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--full", action="store_true", help="recompute every experiment from scratch"
        )
        parser.add_argument(
            "--experiment", type=int, action="append", help="only this experiment (repeatable)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        report = rollups_update(full=options["full"], experiment_ids=options["experiment"])
        self.stdout.write(report.summary())
