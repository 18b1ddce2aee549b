"""``manage.py serve_run RUN_ID``: serve a finished training run's final model with
``transformers serve`` on the port its registered endpoint points at (HAT_TRAIN_SERVE_PORT +
run id), offline. Runs in the foreground (Ctrl-C stops it); ``--print`` only shows the
command."""

from __future__ import annotations

import os
import shlex
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from inference.workers.profiles import OFFLINE_ENV
from training_app.models import TrainingRun
from training_app.services import runs


class Command(BaseCommand):
    help = "Serve a training run's final model where its endpoint points."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("run_id", type=int)
        parser.add_argument("--print", action="store_true", help="print the command only")

    def handle(self, *args: Any, **options: Any) -> None:
        run = TrainingRun.objects.filter(pk=options["run_id"]).first()
        if run is None:
            raise CommandError(f"no training run {options['run_id']}")
        command = runs.run_serve_command(run)
        if command is None:
            raise CommandError(f"run {run.pk} has no final model: its last stage has not succeeded")
        if options["print"]:
            env = " ".join(f"{k}={v}" for k, v in OFFLINE_ENV.items())
            self.stdout.write(f"{env} {shlex.join(command)}")
            return
        os.execvpe(command[0], command, os.environ | OFFLINE_ENV)
