"""Training runs without a worker: config validation (every error names its field, nothing is
half-saved), the held-out policy refusal, stage chains, the YAML round trip through
``manage.py train``, cancel and resume bookkeeping, and the watchdog."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from training_app import selectors
from training_app.models import StageRun, TrainingRun
from training_app.services import run_config, runs

pytestmark = pytest.mark.django_db


def _errors(config: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(run_config.RunConfigError) as caught:
        run_config.run_config_validate(config)
    return caught.value.errors


def test_valid_config_fills_defaults(run_config_dict):  # type: ignore[no-untyped-def]
    checked = run_config.run_config_validate(run_config_dict)
    assert checked.stages == ["hsa_sft", "hsa_rl"]
    assert checked.params["hsa_sft"]["max_steps"] == 4  # given
    # the other parameters are the runners' own defaults (SftParams, RlParams)
    from training_app.pipeline.rl import RlParams
    from training_app.pipeline.sft import SftParams

    assert checked.params["hsa_sft"]["learning_rate"] == SftParams().learning_rate
    assert checked.params["hsa_rl"]["steps"] == RlParams().steps  # stage not in params
    assert checked.teacher is None  # gold trajectories
    assert checked.base_model_dir.endswith("smollm2-135m-instruct")


def test_every_bad_field_is_named(run_config_dict):  # type: ignore[no-untyped-def]
    config = run_config_dict | {
        "name": "",
        "stages": ["hsa_sft", "bogus"],
        "seed": -1,
        "teacher": "no-such-endpoint",
        "datasets": [999_999],
        "harness_versions": [{"harness": 999_999, "version": 1}],
        "colour": "blue",
    }
    errors = _errors(config)
    assert set(errors) == {
        "name",
        "stages",
        "seed",
        "teacher",
        "datasets[0]",
        "harness_versions[0]",
        "colour",
    }
    assert "bogus" in errors["stages"]
    assert "no active model endpoint 'no-such-endpoint'" in errors["teacher"]


def test_bad_params_are_named_by_path(run_config_dict):  # type: ignore[no-untyped-def]
    config = run_config_dict | {
        "params": {"hsa_sft": {"max_stepz": 3, "learning_rate": [object]}, "opd": {"steps": 5}}
    }
    errors = _errors(config)
    assert set(errors) == {
        "params.hsa_sft.max_stepz",
        "params.hsa_sft.learning_rate",
        "params.opd",
    }
    assert errors["params.hsa_sft.max_stepz"].startswith("unknown parameter; allowed: bf16")
    assert errors["params.opd"] == "parameters for a stage the run does not have"
    # ranges and types are the runner's own checks (SftParams.from_mapping), by key
    zero = _errors(run_config_dict | {"params": {"hsa_sft": {"max_steps": 0}}})
    assert list(zero) == ["params.hsa_sft.max_steps"] and ">= 1" in zero["params.hsa_sft.max_steps"]
    rl = run_config_dict | {"params": {"hsa_rl": {"aggregation": "mean"}}}
    assert list(_errors(rl)) == ["params.hsa_rl.aggregation"]
    assert (
        run_config.run_config_validate(
            run_config_dict | {"params": {"hsa_rl": {"aggregation": "gdpo", "steps": 2}}}
        ).params["hsa_rl"]["aggregation"]
        == "gdpo"
    )


def test_an_overridden_runner_takes_its_own_params(run_config_dict, settings):  # type: ignore[no-untyped-def]
    settings.HAT_TRAIN_STAGE_RUNNERS = {"hsa_sft": "tests.training_app.stage_runners.tiny"}
    config = run_config_dict | {"params": {"hsa_sft": {"step_sleep_s": 0.5}}}
    assert run_config.run_config_validate(config).params["hsa_sft"]["step_sleep_s"] == 0.5


@pytest.mark.parametrize(
    "policy", ["hsa-heldout", "harness-variant-t1", "bfcl-tool-schemas-heldout"]
)
def test_held_out_policies_are_refused(run_config_dict, policy):  # type: ignore[no-untyped-def]
    errors = _errors(run_config_dict | {"hsa_policy": policy})
    assert list(errors) == ["hsa_policy"]
    assert "held-out policy" in errors["hsa_policy"] and "hsa-train" in errors["hsa_policy"]
    assert TrainingRun.objects.count() == 0


def test_training_policies_and_fixed_harness_are_accepted(run_config_dict):  # type: ignore[no-untyped-def]
    assert run_config.training_policies() == ["bfcl-tool-schemas", "hsa-train"]
    for policy in ("hsa-train", "bfcl-tool-schemas", ""):
        assert run_config.run_config_validate(run_config_dict | {"hsa_policy": policy})


@pytest.mark.parametrize(
    ("stages", "ok"),
    [
        (["hsa_sft"], True),
        (["opd"], True),
        (["hsa_rl"], True),
        (["hsa_sft", "hsa_rl"], True),
        (["opd", "hsa_rl"], True),
        (["hsa_sft", "opd", "hsa_rl"], True),
        (["hsa_rl", "hsa_sft"], False),
        (["hsa_sft", "hsa_sft"], False),
        ([], False),
    ],
)
def test_stage_chains(run_config_dict, stages, ok):  # type: ignore[no-untyped-def]
    config = run_config_dict | {"stages": stages, "params": {}}
    if ok:
        assert run_config.run_config_validate(config).stages == stages
    else:
        assert list(_errors(config)) == ["stages"]


def test_hsa_stages_need_tasks(run_config_dict):  # type: ignore[no-untyped-def]
    errors = _errors(run_config_dict | {"datasets": []})
    assert list(errors) == ["datasets"]
    assert run_config.run_config_validate(run_config_dict | {"datasets": [], "catalog_tasks": True})
    opd_only = run_config_dict | {"datasets": [], "stages": ["opd"], "params": {}}
    assert run_config.run_config_validate(opd_only).stages == ["opd"]


def test_create_stores_stages_in_order_and_queues_the_first(  # type: ignore[no-untyped-def]
    run_config_dict, operator, django_capture_on_commit_callbacks, enqueued
):
    with django_capture_on_commit_callbacks(execute=True):
        run = runs.run_create(config=run_config_dict, created_by=operator)
    stages = list(run.stage_runs.order_by("order"))
    assert [(s.order, s.kind, s.status) for s in stages] == [
        (0, "hsa_sft", "queued"),
        (1, "hsa_rl", "pending"),
    ]
    assert run.status == "queued"
    assert enqueued == [stages[0].pk]


def test_rejected_config_stores_nothing(run_config_dict, operator):  # type: ignore[no-untyped-def]
    with pytest.raises(run_config.RunConfigError):
        runs.run_create(config=run_config_dict | {"seed": "x"}, created_by=operator)
    assert TrainingRun.objects.count() == 0 and StageRun.objects.count() == 0


def test_yaml_round_trip_through_manage_py_train(  # type: ignore[no-untyped-def]
    run_config_dict, operator, tmp_path, enqueued
):
    # given a run created as the console does
    first = runs.run_create(config=run_config_dict, created_by=operator)
    text = run_config.run_config_yaml(first)
    path = tmp_path / "run.yaml"
    path.write_text(text)
    # when the exported YAML goes through manage.py train
    out = StringIO()
    call_command("train", "--config", str(path), "--no-start", stdout=out)
    # then the new run has the same config, and exports the same YAML
    second = TrainingRun.objects.exclude(pk=first.pk).get()
    assert f"training run {second.pk} created" in out.getvalue()
    assert run_config.run_config_export(second) == run_config.run_config_export(first)
    assert yaml.safe_load(run_config.run_config_yaml(second)) == yaml.safe_load(text)
    assert list(second.stage_runs.values_list("kind", "status")) == [
        ("hsa_sft", "pending"),
        ("hsa_rl", "pending"),
    ]
    exported = StringIO()
    call_command("train", "--export", str(first.pk), stdout=exported)
    assert yaml.safe_load(exported.getvalue()) == yaml.safe_load(text)


def test_manage_py_train_reports_field_errors(tmp_path, db):  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\nstages: [hsa_rl, hsa_sft]\nhsa_policy: hsa-heldout\n")
    with pytest.raises(CommandError) as caught:
        call_command("train", "--config", str(path))
    message = str(caught.value)
    assert "stages: stages run in the order" in message
    assert "hsa_policy: 'hsa-heldout' is a held-out policy" in message
    assert "harness_versions: required" in message


def test_cancel_and_resume_bookkeeping(run_config_dict, operator, enqueued):  # type: ignore[no-untyped-def]
    run = runs.run_create(config=run_config_dict, created_by=operator)
    first, second = run.stage_runs.order_by("order")
    # a running stage is asked to stop; the pending one is cancelled at once
    StageRun.objects.filter(pk=first.pk).update(
        status="running", lease_owner="w", lease_expires_at=timezone.now() + timedelta(minutes=1)
    )
    runs.run_cancel(run=run)
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, first.cancel_requested) == ("running", True)
    assert second.status == "cancelled"
    reporter = runs.DatabaseStageReporter(first.pk, cancel_cache_s=0)
    assert reporter.should_stop() is True
    # while the first stage is still saving its checkpoint, resume is refused (it would queue
    # the second stage without the first one's model): found by clicking Resume too early
    assert not selectors.run_can_resume(run)
    with pytest.raises(runs.ResumeError, match="still stopping: stage hsa_sft is running"):
        runs.run_resume(run=run)
    second.refresh_from_db()
    assert second.status == "cancelled"
    # the worker then records the cancelled stage; resume re-queues it and the one after
    StageRun.objects.filter(pk=first.pk).update(
        status="cancelled", lease_owner="", lease_expires_at=None
    )
    with pytest.raises(runs.ResumeError):
        runs.run_resume(run=TrainingRun.objects.create(name="x", base_model_dir="/m", stages=[]))
    assert selectors.run_can_resume(run)
    runs.run_resume(run=run)
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, first.cancel_requested) == ("queued", False)
    assert second.status == "pending"
    run.refresh_from_db()
    assert run.status == "queued"
    assert enqueued == []  # nothing ran on_commit in this test transaction


def _running(stage: StageRun, heartbeat_age_s: float) -> None:
    now = timezone.now()
    StageRun.objects.filter(pk=stage.pk).update(
        status="running",
        lease_owner="dead-worker",
        heartbeat_at=now - timedelta(seconds=heartbeat_age_s),
        lease_expires_at=now - timedelta(seconds=heartbeat_age_s) + timedelta(seconds=30),
    )


def test_watchdog_requeues_a_stale_stage_and_leaves_a_fresh_one(  # type: ignore[no-untyped-def]
    run_config_dict, operator, enqueued, django_capture_on_commit_callbacks
):
    stale_run = runs.run_create(config=run_config_dict, created_by=operator, start=False)
    fresh_run = runs.run_create(config=run_config_dict, created_by=operator, start=False)
    stale = stale_run.stage_runs.get(order=0)
    fresh = fresh_run.stage_runs.get(order=0)
    _running(stale, heartbeat_age_s=31)
    _running(fresh, heartbeat_age_s=5)
    with django_capture_on_commit_callbacks(execute=True):
        requeued = runs.stages_requeue_stale(timeout_s=30)
    assert requeued == [stale.pk]
    stale.refresh_from_db()
    fresh.refresh_from_db()
    assert (stale.status, stale.lease_owner, stale.lease_expires_at) == ("queued", "", None)
    assert "watchdog" in stale.log_tail[-1]
    assert (fresh.status, fresh.lease_owner) == ("running", "dead-worker")
    assert enqueued == [stale.pk]


def test_lease_claim_rules(run_config_dict, operator):  # type: ignore[no-untyped-def]
    run = runs.run_create(config=run_config_dict, created_by=operator, start=False)
    stage = run.stage_runs.get(order=0)
    assert runs.stage_claim(stage_id=stage.pk, owner="a") is False  # pending: not queued yet
    StageRun.objects.filter(pk=stage.pk).update(status="queued")
    assert runs.stage_claim(stage_id=stage.pk, owner="a", lease_s=60) is True
    assert runs.stage_claim(stage_id=stage.pk, owner="b", lease_s=60) is False  # live lease
    assert runs.stage_heartbeat(stage_id=stage.pk, owner="b") is False
    assert runs.stage_heartbeat(stage_id=stage.pk, owner="a") is True
    StageRun.objects.filter(pk=stage.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert runs.stage_claim(stage_id=stage.pk, owner="b", lease_s=60) is True  # expired
    stage.refresh_from_db()
    assert (stage.lease_owner, stage.attempts) == ("b", 2)
    assert runs.stage_heartbeat(stage_id=stage.pk, owner="a") is False  # a lost it


def test_watchdog_cancels_a_stale_stage_that_was_asked_to_stop(  # type: ignore[no-untyped-def]
    run_config_dict, operator, enqueued, django_capture_on_commit_callbacks
):
    run = runs.run_create(config=run_config_dict, created_by=operator, start=False)
    stage = run.stage_runs.get(order=0)
    _running(stage, heartbeat_age_s=60)
    runs.run_cancel(run=run)  # the worker is dead: nobody will read the flag
    with django_capture_on_commit_callbacks(execute=True):
        assert runs.stages_requeue_stale(timeout_s=30) == []
    stage.refresh_from_db()
    run.refresh_from_db()
    assert (stage.status, run.status) == ("cancelled", "cancelled")
    assert enqueued == []


def test_a_draft_run_starts_once(  # type: ignore[no-untyped-def]
    run_config_dict, operator, enqueued, django_capture_on_commit_callbacks
):
    # given a run created without starting it
    run = runs.run_create(config=run_config_dict, created_by=operator, start=False)
    assert run.status == "draft" and enqueued == []
    # when it is started
    with django_capture_on_commit_callbacks(execute=True):
        runs.run_start(run=run)
    # then its first stage is queued, and a second start is refused without queuing again
    first = run.stage_runs.order_by("order").first()
    assert first is not None and enqueued == [first.pk]
    assert TrainingRun.objects.get(pk=run.pk).status == "queued"
    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(runs.StartError, match="not a draft"),
    ):
        runs.run_start(run=run)
    assert enqueued == [first.pk]


def test_stage_inputs_are_pipeline_task_records(run_config_dict, operator, published_room):  # type: ignore[no-untyped-def]
    from harness_app.hsa import trajectory_from_dict
    from harness_app.models import Coupon, Product
    from inference.agents.session import LiveContext
    from training_app.pipeline.catalog_snapshot import demo_catalog

    catalog = demo_catalog()
    for item in catalog["products"]:
        Product.objects.create(room=published_room, **item)
    for item in catalog["coupons"]:
        Coupon.objects.create(
            room=published_room,
            code=item["code"],
            description=item["description"],
            amount=item["amount"],
            threshold=item["threshold"],
            sku=item["sku"],
        )
    run = runs.run_create(
        config=run_config_dict | {"catalog_tasks": True}, created_by=operator, start=False
    )
    inputs = runs.stage_inputs(run.stage_runs.get(order=0))
    version = published_room.harness.published_version
    assert list(inputs.harnesses) == [str(version.pk)]
    assert inputs.init_model_dir == inputs.base_model_dir
    assert (inputs.hsa_policy, inputs.seed, inputs.resume) == ("hsa-train", 7, True)
    gold = [t for t in inputs.tasks if t["id"].startswith("dataset-")]
    generated = [t for t in inputs.tasks if not t["id"].startswith("dataset-")]
    assert len(gold) == 82 and len(generated) > 0
    for task in gold[:5] + generated[:5]:
        assert task["harness_id"] == str(version.pk)
        trajectory_from_dict(task["gold"])
        context = LiveContext(**task["context"])
        assert context.room_name == published_room.name
    first = gold[0]
    assert first["context"]["product_sku"] == first["gold"]["product_sku"]
    assert first["context"]["product_price"]  # from the room's catalog
