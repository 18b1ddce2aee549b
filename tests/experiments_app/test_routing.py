"""Live replies routed through a running experiment: sticky arm, its agent and endpoint,
the exposure logged once, and a cheap hot path."""

from __future__ import annotations

import json
from datetime import date

import pytest
from rest_framework.test import APIClient

from experiments_app import services
from experiments_app.assignment import bucket
from experiments_app.models import Assignment, Exposure, LiveReply
from experiments_app.routing import choose_arm, experiment_arm, invalidate_running_experiments
from harness_app import services as harness_services
from tests.inference.scripted_server import ScriptedServer, SseReply, chunk
from training_app.models import ModelEndpoint

pytestmark = pytest.mark.django_db
URL = "/api/v1/live/reply"


def say(text: str) -> SseReply:
    return SseReply(
        [
            chunk(role="assistant", content=text),
            chunk(finish_reason="stop", usage={"prompt_tokens": 40, "completion_tokens": 6}),
        ]
    )


@pytest.fixture
def server():  # type: ignore[no-untyped-def]
    with ScriptedServer() as srv:
        yield srv


@pytest.fixture
def endpoint(db, server) -> ModelEndpoint:  # type: ignore[no-untyped-def]
    """Experiment arms run on the scripted server (overrides the conftest endpoint)."""
    return ModelEndpoint.objects.create(
        name="scripted-arm", base_url=server.base_url, model_name="scripted", timeout_s=5
    )


def key_client(room) -> APIClient:  # type: ignore[no-untyped-def]
    _, raw = harness_services.api_key_create(
        room=room, name="backend", scopes=["reply"], created_by=None
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def ask(client, room, request_id, uv="uv-7"):  # type: ignore[no-untyped-def]
    body = {"request_id": request_id, "room": room.pk, "uv_id": uv, "comment": "Hi!"}
    response = client.post(URL, json.dumps(body), content_type="application/json")
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.parametrize("arm_index", [0, 1])
def test_reply_is_answered_by_the_units_arm_and_the_exposure_is_logged_once(
    published_room, make_experiment, server, arm_index
):
    # given a running 50/50 experiment (control: ReAct agent, treatment: Harness agent) and a
    # viewer whose hash puts them in arm ``arm_index``
    experiment = make_experiment([published_room], weights=(5000, 5000))
    arm = experiment.arms.get(position=arm_index)
    uv = next(
        u
        for u in (f"uv-{i}" for i in range(100))
        if (bucket(experiment.arm_salt, u) >= 5000) == bool(arm_index)
    )
    prefix = "Final Answer: " if arm.kind == "react" else ""  # ReAct answers in its format
    server.enqueue(say(f"{prefix}Hello there!"), say(f"{prefix}Welcome back!"))
    client = key_client(published_room)
    # when the viewer comments twice on one day
    first = ask(client, published_room, "r-1", uv)
    second = ask(client, published_room, "r-2", uv)
    # then the arm's agent answers both on the arm's endpoint, and one exposure is logged
    assert (first["arm"], first["fallback"], first["reply"]) == (arm.kind, False, "Hello there!")
    assert (second["arm"], second["reply"]) == (arm.kind, "Welcome back!")
    records = LiveReply.objects.filter(pk__in=[first["trace_id"], second["trace_id"]])
    assert {(r.experiment_id, r.experiment_arm_id) for r in records} == {(experiment.pk, arm.pk)}
    assert len(server.requests) == 2
    assert Assignment.objects.get(experiment=experiment).unit_key == uv
    exposure = Exposure.objects.get(experiment=experiment)
    assert (exposure.uv_id, exposure.arm_id, exposure.room_id) == (uv, arm.pk, published_room.pk)


def test_assignment_matches_the_documented_hash(published_room, make_experiment):
    experiment = make_experiment([published_room], weights=(8000, 2000))
    arms = list(experiment.arms.order_by("position"))
    for i in range(60):
        uv = f"viewer-{i}"
        choice = experiment_arm(room=published_room, uv_id=uv)
        assert choice is not None
        expected = arms[0] if bucket(experiment.arm_salt, uv) < 8000 else arms[1]
        assert choice.experiment_arm_id == expected.pk


def test_first_assignment_is_sticky_across_a_weight_change(published_room, make_experiment):
    experiment = make_experiment([published_room], weights=(8000, 2000))
    control, treatment = experiment.arms.order_by("position")
    # a UV whose arm bucket is in [5000, 8000): control at 80/20, treatment at 50/50
    uv = next(
        u for u in (f"u{i}" for i in range(500)) if 5000 <= bucket(experiment.arm_salt, u) < 8000
    )
    fresh = next(
        u for u in (f"f{i}" for i in range(500)) if 5000 <= bucket(experiment.arm_salt, u) < 8000
    )
    assert experiment_arm(room=published_room, uv_id=uv).experiment_arm_id == control.pk  # type: ignore[union-attr]
    services.experiment_change_allocation(
        experiment=experiment, weights={"control": 5000, "treatment": 5000}
    )
    invalidate_running_experiments()
    assert experiment_arm(room=published_room, uv_id=uv).experiment_arm_id == control.pk  # type: ignore[union-attr]
    assert experiment_arm(room=published_room, uv_id=fresh).experiment_arm_id == treatment.pk  # type: ignore[union-attr]
    phases = dict(Assignment.objects.values_list("unit_key", "phase__number"))
    assert phases == {uv: 1, fresh: 2}


def test_uncovered_units_get_the_room_default_and_no_exposure(
    published_room, make_experiment, endpoint
):
    published_room.reply_endpoint = endpoint
    published_room.save()
    experiment = make_experiment([published_room], coverage=3000)
    uncovered = next(
        u for u in (f"u{i}" for i in range(200)) if bucket(experiment.coverage_salt, u) >= 3000
    )
    assert experiment_arm(room=published_room, uv_id=uncovered) is None
    choice = choose_arm(room=published_room, uv_id=uncovered)
    assert choice.experiment_id is None and choice.arm == published_room.serving_arm
    assert not Exposure.objects.exists()


def test_lowering_coverage_keeps_assigned_units_but_admits_no_new_ones(
    published_room, make_experiment
):
    experiment = make_experiment([published_room], coverage=8000)
    band = [
        u
        for u in (f"u{i}" for i in range(400))
        if 3000 <= bucket(experiment.coverage_salt, u) < 8000
    ]
    assigned, newcomer = band[0], band[1]
    assert experiment_arm(room=published_room, uv_id=assigned) is not None
    services.experiment_change_allocation(experiment=experiment, coverage=3000)
    invalidate_running_experiments()
    assert experiment_arm(room=published_room, uv_id=assigned) is not None
    assert experiment_arm(room=published_room, uv_id=newcomer) is None


def test_room_day_units_share_one_arm_per_room_and_day(published_room, make_experiment):
    experiment = make_experiment([published_room], unit="room_day", weights=(5000, 5000))
    today = date(2026, 11, 30)  # any day: the unit is the room-day, whatever today is
    arms = {
        experiment_arm(room=published_room, uv_id=f"v{i}", day=today).experiment_arm_id  # type: ignore[union-attr]
        for i in range(20)
    }
    assert len(arms) == 1
    assignment = Assignment.objects.get(experiment=experiment)
    assert assignment.unit_key == f"{published_room.pk}:2026-11-30"
    assert Exposure.objects.count() == 20


def test_routing_through_an_experiment_costs_one_query(
    published_room, make_experiment, django_assert_num_queries
):
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the one-statement assign-and-expose is PostgreSQL's (SQLite: a few queries)")
    make_experiment([published_room])
    experiment_arm(room=published_room, uv_id="warm-up")  # loads the running-experiment cache
    with django_assert_num_queries(1):
        assert experiment_arm(room=published_room, uv_id="new-viewer") is not None
    with django_assert_num_queries(1):
        assert experiment_arm(room=published_room, uv_id="new-viewer") is not None


def test_no_running_experiment_costs_no_query(published_room, django_assert_num_queries):
    experiment_arm(room=published_room, uv_id="warm-up")
    with django_assert_num_queries(0):
        assert experiment_arm(room=published_room, uv_id="someone") is None


def test_stopping_routes_back_to_the_default(
    published_room, make_experiment, django_capture_on_commit_callbacks
):
    experiment = make_experiment([published_room])
    assert experiment_arm(room=published_room, uv_id="x") is not None
    with django_capture_on_commit_callbacks(execute=True):
        services.experiment_stop(experiment=experiment)
    assert experiment_arm(room=published_room, uv_id="x") is None
