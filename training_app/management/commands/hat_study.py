"""``manage.py hat_study [--scale cpu|full|smoke] [--out DIR] [--no-latency]``: the HAT study
(issue #16, docs/RESULTS.md) end to end through the platform: rooms, eval sets, the three
training runs from ``training_app/demo_data/hat_study/runs/``, every eval run of every model,
the paired comparisons, and the HAT endpoint's latency replay beside the base model's.

Long (about an hour at ``cpu`` on 2 cores): start it in the background and rerun the same
command to resume after an interruption (``scripts/hat_study.sh`` does both)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from training_app.evals.study_report import results_markdown
from training_app.services.hat_study import SCALES, StudyError, study_report, study_run


class Command(BaseCommand):
    help = "Run (or resume) the HAT study; results under var/hat_study/<scale>/."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scale", choices=sorted(SCALES), default="cpu")
        parser.add_argument("--out", type=Path, default=None, help="default var/hat_study/SCALE")
        parser.add_argument(
            "--no-latency", action="store_true", help="skip serving the HAT and base models"
        )
        parser.add_argument(
            "--report",
            action="store_true",
            help="run nothing: write results.json and results.md from the runs finished so far",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        scale = SCALES[options["scale"]]
        out = options["out"] or Path(settings.BASE_DIR) / "var" / "hat_study" / scale.name
        if options["report"]:
            results = study_report(scale=scale, out=out)
            (out / "results.md").write_text(results_markdown(results), "utf-8")
            self.stdout.write(f"report of {', '.join(results['scores'])}: {out / 'results.md'}")
            return
        try:
            study_run(
                scale=scale,
                out=out,
                latency=not options["no_latency"],
                echo=self._echo,
            )
        except StudyError as exc:
            raise CommandError(str(exc)) from None

    def _echo(self, line: str) -> None:
        self.stdout.write(line)
        self.stdout.flush()
