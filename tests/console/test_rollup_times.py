"""The experiment page says when the rollups last checked the experiment, not only when its
numbers last changed (issue #15.3): a rollup run that finds nothing new moves "last checked"
and leaves "data last changed" where it was."""

# ruff: noqa: F811  (fixtures imported from other test modules)
from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from django.test import Client
from django.urls import reverse
from django.utils import timezone

from experiments_app.models import ExperimentRollup
from experiments_app.readouts import experiment_readout
from experiments_app.rollups import rollups_update
from experiments_app.traffic_simulation import simulate_traffic
from tests.experiments_app.conftest import endpoint, make_experiment  # noqa: F401


def rollup_line(html: str) -> str:
    match = re.search(r"<p class=\"muted small\" data-rollup-times>(.*?)</p>", html, re.S)
    assert match is not None
    return re.sub(r"<[^>]+>", "", match.group(1))


def test_a_run_with_nothing_new_moves_last_checked_only(
    operator_client: Client, published_room: Any, make_experiment: Any
) -> None:
    # given an experiment whose rollups ran once over its traffic
    experiment = make_experiment([published_room])
    simulate_traffic(experiment=experiment, uvs=200, days=2, lift=0.1, seed=1)
    # (the next run re-reads a short overlap of exposures, EXPOSURE_SCAN_OVERLAP, and so
    # rewrites their days once more)
    rollups_update(now=timezone.now() + timedelta(minutes=5))
    changed = ExperimentRollup.objects.get(experiment=experiment).refreshed_at
    assert changed is not None

    # when the runner runs again later and finds nothing new
    later = timezone.now() + timedelta(minutes=10)
    rollups_update(now=later)

    # then the data time stays, the check time moves
    readout = experiment_readout(experiment=experiment)
    assert readout.refreshed_at == changed
    assert readout.checked_at == later
    html = operator_client.get(reverse("console:experiment-detail", args=[experiment.pk]))
    line = rollup_line(html.content.decode())
    assert line == (
        f"Rollups last checked {later:%Y-%m-%d %H:%M:%S} UTC · "
        f"data last changed {changed:%Y-%m-%d %H:%M:%S} UTC."
    )


def test_no_check_since_the_start_is_said(published_room: Any, make_experiment: Any) -> None:
    # a run before this experiment started does not count as a check of it
    rollups_update()
    experiment = make_experiment([published_room])
    assert experiment_readout(experiment=experiment).checked_at is None
    draft = make_experiment([published_room], start=False, name="draft")
    assert experiment_readout(experiment=draft).checked_at is None


def test_a_run_limited_to_one_experiment_checks_only_that_one(
    published_room: Any, make_experiment: Any
) -> None:
    # given two running experiments (disjoint halves of the room's layer), rolled up once
    first = make_experiment([published_room], layer_end=5000)
    second = make_experiment([published_room], name="second", layer_start=5000)
    rollups_update()
    before = ExperimentRollup.objects.get(experiment=second).checked_at
    # when a run is limited to the first (update_rollups --experiment)
    later = timezone.now() + timedelta(minutes=10)
    rollups_update(experiment_ids=[first.pk], now=later)
    # then only the first was checked, and the second, which did not see the events and
    # exposures that run consumed, recomputes on its next run
    assert ExperimentRollup.objects.get(experiment=first).checked_at == later
    rollup = ExperimentRollup.objects.get(experiment=second)
    assert rollup.checked_at == before and rollup.full_refresh_needed
    report = rollups_update(now=later + timedelta(minutes=1))
    assert second.pk in report.full_refresh and first.pk not in report.full_refresh
