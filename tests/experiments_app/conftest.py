"""Experiment fixtures: a model endpoint and a helper that configures (and starts) one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from experiments_app import services
from experiments_app.models import Experiment
from experiments_app.routing import invalidate_running_experiments
from harness_app.models import Room
from training_app.models import ModelEndpoint


@pytest.fixture(autouse=True)
def _fresh_routing_cache():  # type: ignore[no-untyped-def]
    invalidate_running_experiments()
    yield
    invalidate_running_experiments()


@pytest.fixture
def endpoint(db) -> ModelEndpoint:  # type: ignore[no-untyped-def]
    return ModelEndpoint.objects.create(
        name="ab-endpoint", base_url="http://127.0.0.1:9/v1", model_name="m", timeout_s=2
    )


MakeExperiment = Callable[..., Experiment]


@pytest.fixture
def make_experiment(operator, endpoint) -> MakeExperiment:  # type: ignore[no-untyped-def]
    """``make_experiment(rooms, unit="uv", weights=(8000, 2000), start=True, salt=None,
    **spec)``: arm 0 is a ReAct control, the others Harness arms, all on the first room's
    published version. ``salt`` fixes the arm and coverage salts (random otherwise), so which
    units land in which arm - and so a readout of simulated traffic - is the same every run."""

    def make(
        rooms: Sequence[Room],
        *,
        unit: str = "uv",
        weights: Sequence[int] = (8000, 2000),
        start: bool = True,
        name: str = "Harness vs ReAct",
        salt: str | None = None,
        **spec: Any,
    ) -> Experiment:
        version = rooms[0].harness.published_version
        assert version is not None, "the first room needs a published harness"
        arms = [
            services.ArmSpec(
                name="control" if i == 0 else f"treatment{i if len(weights) > 2 else ''}",
                kind="react" if i == 0 else "harness",
                harness_version=version,
                endpoint=endpoint,
                weight=w,
            )
            for i, w in enumerate(weights)
        ]
        experiment = services.experiment_create(
            spec=services.ExperimentSpec(name=name, rooms=rooms, arms=arms, unit=unit, **spec),
            created_by=operator,
        )
        if salt is not None:
            experiment.arm_salt, experiment.coverage_salt = f"{salt}-arm", f"{salt}-coverage"
            experiment.save(update_fields=["arm_salt", "coverage_salt", "updated_at"])
        if start:
            experiment = services.experiment_start(experiment=experiment)
        return experiment

    return make
