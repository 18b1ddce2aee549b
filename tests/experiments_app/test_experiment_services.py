"""Experiment configuration and lifecycle: specific errors, nothing half-saved."""

from __future__ import annotations

import pytest

from experiments_app import services
from experiments_app.models import Experiment, ExperimentArm, ExperimentPhase
from harness_app import services as harness_services
from tests.factories import RoomFactory

pytestmark = pytest.mark.django_db


def _spec(room, endpoint, weights=(8000, 2000), version=None, **extra):  # type: ignore[no-untyped-def]
    version = version or room.harness.published_version
    arms = [
        services.ArmSpec(f"arm{i}", "react" if i == 0 else "harness", version, endpoint, w)
        for i, w in enumerate(weights)
    ]
    return services.ExperimentSpec(name="Exp", rooms=[room], arms=arms, **extra)


def test_weights_that_do_not_sum_to_100_are_refused_and_nothing_is_saved(
    published_room, endpoint, operator
):
    with pytest.raises(services.ExperimentConfigError) as caught:
        services.experiment_create(
            spec=_spec(published_room, endpoint, weights=(7000, 2000)), created_by=operator
        )
    assert caught.value.errors == [
        ("arms", "weights sum to 90% (70% + 20%); they must sum to 100%")
    ]
    assert Experiment.objects.count() == 0 and ExperimentArm.objects.count() == 0


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"unit": "session"}, "unit"),
        ({"secondary_metrics": ["gmv"]}, "secondary_metrics"),
        ({"guardrails": [{"metric": "latency", "tolerance": 0.1}]}, "guardrails[0].metric"),
        ({"guardrails": [{"metric": "fallback_rate", "tolerance": -1}]}, "guardrails[0].tolerance"),
        ({"coverage": 0}, "coverage"),
        ({"sequential": True}, "planned_units"),
        ({"layer_start": 9000, "layer_end": 100}, "layer_end"),
    ],
)
def test_bad_configuration_names_the_field(published_room, endpoint, operator, extra, field):  # type: ignore[no-untyped-def]
    with pytest.raises(services.ExperimentConfigError) as caught:
        services.experiment_create(
            spec=_spec(published_room, endpoint, **extra), created_by=operator
        )
    assert field in [f for f, _ in caught.value.errors]
    assert Experiment.objects.count() == 0


def test_arm_must_pin_a_version_of_one_of_the_rooms(published_room, other_room, endpoint, operator):
    spec = _spec(published_room, endpoint)
    spec = services.ExperimentSpec(name="x", rooms=[other_room], arms=spec.arms)
    with pytest.raises(services.ExperimentConfigError) as caught:
        services.experiment_create(spec=spec, created_by=operator)
    assert caught.value.errors[0][0] == "arms[0].harness_version"


def test_starting_an_arm_on_an_unpublished_harness_is_refused(
    published_room, endpoint, operator, demo_harness
):
    # given a draft (never published) v2 pinned by the treatment arm
    draft = harness_services.harness_version_create(
        harness=published_room.harness,
        content=demo_harness,
        base_version=1,
        author=operator,
        message="draft",
    )
    published = published_room.harness.published_version
    arms = [
        services.ArmSpec("control", "react", published, endpoint, 5000),
        services.ArmSpec("treatment", "harness", draft, endpoint, 5000),
    ]
    experiment = services.experiment_create(
        spec=services.ExperimentSpec(name="x", rooms=[published_room], arms=arms),
        created_by=operator,
    )
    # when it is started
    with pytest.raises(services.ExperimentConfigError) as caught:
        services.experiment_start(experiment=experiment)
    # then the error names the arm's version, and nothing changed
    field, message = caught.value.errors[0]
    assert field == "arms[1].harness_version"
    assert "version 2" in message and "never published" in message
    experiment.refresh_from_db()
    assert experiment.status == "draft" and experiment.started_at is None
    assert not ExperimentPhase.objects.filter(experiment=experiment).exists()


def test_inactive_endpoint_refused_at_start(published_room, endpoint, make_experiment):
    experiment = make_experiment([published_room], start=False)
    endpoint.is_active = False
    endpoint.save()
    with pytest.raises(services.ExperimentConfigError, match="inactive"):
        services.experiment_start(experiment=experiment)


def test_overlapping_running_experiments_are_refused_unless_mutually_exclusive(
    published_room, make_experiment
):
    make_experiment([published_room], layer="reply", layer_start=0, layer_end=5000)
    clash = make_experiment([published_room], start=False, name="clash")
    with pytest.raises(services.ExperimentConfigError) as caught:
        services.experiment_start(experiment=clash)
    assert caught.value.errors[0][0] == "rooms" and "layer" in caught.value.errors[0][1]
    # same layer and unit, disjoint range: fine
    exclusive = make_experiment(
        [published_room], layer="reply", layer_start=5000, layer_end=10_000, name="exclusive"
    )
    assert exclusive.status == "running"


def test_start_creates_phase_one_and_stop_closes_it(published_room, make_experiment):
    experiment = make_experiment([published_room])
    phase = ExperimentPhase.objects.get(experiment=experiment)
    assert (phase.number, phase.coverage) == (1, 10_000)
    assert sorted(phase.weights.values()) == [2000, 8000]
    assert "control 80% / treatment 20%" in phase.note
    services.experiment_stop(experiment=experiment)
    phase.refresh_from_db()
    experiment.refresh_from_db()
    assert experiment.status == "stopped" and phase.ended_at == experiment.stopped_at
    with pytest.raises(services.ExperimentConfigError, match="only a running"):
        services.experiment_stop(experiment=experiment)


def test_changing_weights_or_coverage_starts_a_new_phase(published_room, make_experiment):
    experiment = make_experiment([published_room])
    phase = services.experiment_change_allocation(
        experiment=experiment, weights={"control": 5000, "treatment": 5000}
    )
    assert phase.number == 2
    assert phase.note == "weights control 80% / treatment 20% -> control 50% / treatment 50%"
    assert ExperimentPhase.objects.get(experiment=experiment, number=1).ended_at is not None
    third = services.experiment_change_allocation(experiment=experiment, coverage=2500)
    assert (third.number, third.coverage, third.note) == (3, 2500, "coverage 100% -> 25%")
    with pytest.raises(services.ExperimentConfigError, match="nothing changed"):
        services.experiment_change_allocation(experiment=experiment, coverage=2500)
    with pytest.raises(services.ExperimentConfigError, match="sum to 100%"):
        services.experiment_change_allocation(
            experiment=experiment, weights={"control": 5000, "treatment": 4000}
        )
    assert ExperimentPhase.objects.filter(experiment=experiment).count() == 3


def test_only_drafts_can_be_edited(published_room, endpoint, make_experiment):
    experiment = make_experiment([published_room])
    with pytest.raises(services.ExperimentConfigError, match="only drafts"):
        services.experiment_update(experiment=experiment, spec=_spec(published_room, endpoint))


def test_edit_replaces_the_arms_of_a_draft(published_room, endpoint, make_experiment):
    experiment = make_experiment([published_room], start=False)
    services.experiment_update(
        experiment=experiment, spec=_spec(published_room, endpoint, weights=(3334, 3333, 3333))
    )
    assert list(experiment.arms.values_list("name", "weight")) == [
        ("arm0", 3334),
        ("arm1", 3333),
        ("arm2", 3333),
    ]


def test_multi_room_experiment_with_rooms_of_two_merchants(
    published_room, other_merchant, make_experiment
):
    second = RoomFactory(owner=other_merchant, name="B2")
    experiment = make_experiment([published_room, second], unit="room")
    assert set(experiment.rooms.all()) == {published_room, second}
