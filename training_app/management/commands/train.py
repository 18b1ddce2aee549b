"""``manage.py train --config run.yaml``: create a training run from a YAML config, exactly as
the console's form and the API do (same validation, same stored run), and queue it on the
``train`` queue; ``--wait`` follows it until it ends, ``--inline`` runs its stages in this
process instead of a worker (a machine without a Celery worker, or a debugger)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from training_app.models import TrainingRun
from training_app.services import run_config, runs


class Command(BaseCommand):
    help = "Create (and queue) a training run from a YAML config; export one with --export."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--config", type=Path, help="the run's YAML config")
        parser.add_argument("--export", type=int, metavar="RUN_ID", help="print a run's YAML")
        parser.add_argument("--no-start", action="store_true", help="store it, do not queue it")
        parser.add_argument("--inline", action="store_true", help="run the stages here")
        parser.add_argument("--wait", action="store_true", help="wait until the run ends")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["export"] is not None:
            run = TrainingRun.objects.filter(pk=options["export"]).first()
            if run is None:
                raise CommandError(f"no training run {options['export']}")
            self.stdout.write(run_config.run_config_yaml(run), ending="")
            return
        if options["config"] is None:
            raise CommandError("give --config run.yaml (or --export RUN_ID)")
        try:
            text = options["config"].read_text("utf-8")
        except OSError as exc:
            raise CommandError(f"cannot read {options['config']}: {exc}") from None
        try:
            config = run_config.run_config_from_yaml(text)
            run = runs.run_create(
                config=config,
                created_by=None,
                start=not options["no_start"] and not options["inline"],
            )
        except run_config.RunConfigError as exc:
            lines = "\n".join(f"  {field}: {message}" for field, message in exc.errors.items())
            raise CommandError(f"the config has errors:\n{lines}") from None
        self.stdout.write(f"training run {run.pk} created: {run.name} ({', '.join(run.stages)})")
        if options["inline"]:
            self._run_inline(run)
        elif options["wait"] and not options["no_start"]:
            self._wait(run)

    def _run_inline(self, run: TrainingRun) -> None:
        # Eager Celery: the on-commit enqueue of each stage (and of the next one when a stage
        # succeeds) runs the task right here, through the same lease and chain code.
        from celery import current_app

        was_eager = current_app.conf.task_always_eager
        current_app.conf.task_always_eager = True
        try:
            runs.run_start(run=run)
        finally:
            current_app.conf.task_always_eager = was_eager
        run.refresh_from_db()
        for stage in run.stage_runs.order_by("order"):
            self.stdout.write(f"stage {stage.order} {stage.kind}: {stage.status}")
        self.stdout.write(f"training run {run.pk}: {run.status}")
        if run.status != TrainingRun.Status.SUCCEEDED:
            raise CommandError(f"run {run.pk} ended {run.status}")

    def _wait(self, run: TrainingRun) -> None:
        while True:
            run.refresh_from_db()
            if run.is_finished:
                break
            time.sleep(2)
        self.stdout.write(f"training run {run.pk}: {run.status}")
        if run.status != TrainingRun.Status.SUCCEEDED:
            raise CommandError(f"run {run.pk} ended {run.status}")
