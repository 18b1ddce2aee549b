"""Simulated live-commerce traffic with a known true lift, through the real write paths.

    manage.py simulate_traffic --experiment ID --uvs N --days D --lift X

Heavy-tailed GMV, mostly zero-GMV viewers, day-of-week seasonality and returning UVs
(``experiments_app.stats.simulation``); the experiment's own hash assignment decides who is
treated; events go through the ingestion service and exposures through the assignment code,
then the rollups run. The experiment's start moves back D days (the last simulated day is
yesterday), so only a running experiment without exposures is accepted.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from experiments_app.models import Experiment
from experiments_app.traffic_simulation import SimulationRefused, simulate_traffic


class Command(BaseCommand):
    help = "Send simulated traffic with a known lift into a running experiment."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--experiment", type=int, required=True)
        parser.add_argument("--uvs", type=int, default=20_000, help="simulated viewers")
        parser.add_argument("--days", type=int, default=14)
        parser.add_argument(
            "--lift", type=float, default=0.04334, help="true relative GMV lift (0.04 = +4%%)"
        )
        parser.add_argument(
            "--views-lift", type=float, default=None, help="true views lift (default: --lift)"
        )
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args: Any, **options: Any) -> None:
        experiment = Experiment.objects.filter(pk=options["experiment"]).first()
        if experiment is None:
            raise CommandError(f"no experiment {options['experiment']}")
        try:
            summary = simulate_traffic(
                experiment=experiment,
                uvs=options["uvs"],
                days=options["days"],
                lift=options["lift"],
                views_lift=options["views_lift"],
                seed=options["seed"],
            )
        except SimulationRefused as exc:
            raise CommandError(str(exc)) from None
        truth = summary.plan.sim.truth
        self.stdout.write(
            f"{summary.events_sent} events sent: {summary.accepted} accepted, "
            f"{summary.duplicate} duplicate, {summary.rejected} rejected; "
            f"{summary.exposures} exposures"
        )
        self.stdout.write(
            f"true lift: GMV {truth.gmv_relative:+.3%}, views {truth.views_relative:+.3%} "
            f"(per {truth.per.replace('_', '-')})"
        )
        if summary.rollups is not None:
            self.stdout.write(f"rollups: {summary.rollups.summary()}")
