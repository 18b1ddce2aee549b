"""Stages executed for real in this process (the Celery task's body, without a broker): the
lease under concurrent claims on PostgreSQL, the chain passing the previous stage's final
model on, cooperative cancel that saves a checkpoint, resume from that checkpoint, the
heartbeat, and registering the result as a model endpoint. The stage runner is the tiny
transformers Trainer loop (tests/training_app/stage_runners.py): real steps, real
``checkpoint-N`` folders, real ``resume_from_checkpoint``."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from django.db import connection

from training_app.models import StageAttempt, StageMetric, StageRun, TrainingRun
from training_app.services import runs

pytestmark = pytest.mark.django_db(transaction=True)


def _cancel_at_step(
    stage: StageRun, step: int, *, seen_heartbeats: set[object] | None = None
) -> threading.Thread:
    """A started thread that cancels the stage's run once it reports ``step`` (recording
    the heartbeats it sees while the stage runs, when asked)."""

    def cancel() -> None:
        try:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                current = StageRun.objects.get(pk=stage.pk)
                if seen_heartbeats is not None and current.status == "running":
                    seen_heartbeats.add(current.heartbeat_at)
                if current.progress_step >= step:
                    runs.run_cancel(run=TrainingRun.objects.get(pk=stage.run_id))
                    return
                time.sleep(0.1)
        finally:
            connection.close()

    thread = threading.Thread(target=cancel)
    thread.start()
    return thread


def test_two_concurrent_claims_one_wins(run_config_dict, operator):  # type: ignore[no-untyped-def]
    run = runs.run_create(config=run_config_dict, created_by=operator, start=False)
    stage = run.stage_runs.get(order=0)
    for round_ in range(5):
        StageRun.objects.filter(pk=stage.pk).update(
            status="queued", lease_owner="", lease_expires_at=None
        )
        barrier = threading.Barrier(4)
        wins: list[str] = []

        def claim(name: str, barrier: threading.Barrier = barrier, wins: list[str] = wins) -> None:
            try:
                barrier.wait()
                if runs.stage_claim(stage_id=stage.pk, owner=name, lease_s=60):
                    wins.append(name)
            finally:
                connection.close()

        threads = [threading.Thread(target=claim, args=(f"w{round_}-{i}",)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        stage.refresh_from_db()
        assert len(wins) == 1, wins
        assert stage.lease_owner == wins[0] and stage.status == "running"
    assert stage.attempts == 5


def test_second_delivery_with_a_live_lease_does_not_run(  # type: ignore[no-untyped-def]
    run_config_dict, operator, tiny_runners, enqueued
):
    run = runs.run_create(config=run_config_dict, created_by=operator, start=False)
    stage = run.stage_runs.get(order=0)
    StageRun.objects.filter(pk=stage.pk).update(status="queued")
    assert runs.stage_claim(stage_id=stage.pk, owner="first-worker", lease_s=60)
    assert runs.stage_execute(stage.pk, worker_id="second-worker") == "skipped"
    stage.refresh_from_db()
    assert (stage.lease_owner, stage.attempts, stage.progress_step) == ("first-worker", 1, 0)
    assert not StageAttempt.objects.filter(stage=stage).exists()


def test_chain_runs_stages_in_order_with_the_previous_final_model(  # type: ignore[no-untyped-def]
    run_config_dict, operator, tiny_runners, enqueued
):
    config = run_config_dict | {
        "base_model_dir": str(tiny_runners),
        "params": {"hsa_sft": {"max_steps": 3, "save_steps": 2}, "hsa_rl": {"max_steps": 2}},
    }
    run = runs.run_create(config=config, created_by=operator, start=False)
    run = runs.run_start(run=run)
    first, second = run.stage_runs.order_by("order")
    assert enqueued == [first.pk]

    assert runs.stage_execute(first.pk) == "succeeded"
    first.refresh_from_db()
    second.refresh_from_db()
    assert enqueued == [first.pk, second.pk]  # the chain queued the next stage
    assert (first.progress_step, first.progress_total) == (3, 3)
    assert Path(first.final_dir, "config.json").is_file()
    assert first.summary["init_model_dir"] == str(tiny_runners)  # the base model
    losses = StageMetric.objects.filter(stage=first, name="loss").order_by("step")
    assert list(losses.values_list("step", flat=True)) == [1, 2, 3]
    assert all(value > 0 for value in losses.values_list("value", flat=True))
    assert second.status == "queued"
    assert TrainingRun.objects.get(pk=run.pk).status == "queued"

    assert runs.stage_execute(second.pk) == "succeeded"
    second.refresh_from_db()
    assert second.summary["init_model_dir"] == first.final_dir  # previous stage's final
    run.refresh_from_db()
    assert run.status == "succeeded"

    endpoint = runs.run_register_endpoint(run=run)
    assert endpoint.base_url == f"http://127.0.0.1:{8100 + run.pk}/v1"
    assert endpoint.model_name == str(Path(second.final_dir).resolve())
    assert (endpoint.role, endpoint.tool_mode) == ("student", "text")
    assert runs.run_register_endpoint(run=run) == endpoint  # idempotent
    command = runs.run_serve_command(run)
    assert command is not None and "serve" in command and str(8100 + run.pk) in command


def test_cancel_saves_a_checkpoint_and_resume_continues_from_it(  # type: ignore[no-untyped-def]
    run_config_dict, operator, tiny_runners, enqueued, settings
):
    settings.HAT_TRAIN_HEARTBEAT_INTERVAL_S = 0.2
    config = run_config_dict | {
        "base_model_dir": str(tiny_runners),
        "stages": ["hsa_sft"],
        "params": {"hsa_sft": {"max_steps": 8, "save_steps": 2, "step_sleep_s": 0.4}},
    }
    run = runs.run_create(config=config, created_by=operator)
    stage = run.stage_runs.get()
    heartbeats: set[object] = set()

    canceller = _cancel_at_step(stage, 3, seen_heartbeats=heartbeats)
    assert runs.stage_execute(stage.pk) == "cancelled"
    canceller.join()
    stage.refresh_from_db()
    run.refresh_from_db()
    assert run.status == "cancelled"
    assert len(heartbeats) >= 3  # the heartbeat thread renewed the lease while it ran
    stopped_at = int(Path(stage.checkpoint_dir).name.split("-")[1])
    assert 3 <= stopped_at < 8  # the stop saved a checkpoint at the step it stopped
    assert stage.final_dir == "" and stage.lease_owner == ""

    runs.run_resume(run=run)
    assert runs.stage_execute(stage.pk) == "succeeded"
    stage.refresh_from_db()
    attempts = list(stage.attempt_rows.values_list("number", "start_step", "outcome"))
    assert attempts == [(1, 0, "cancelled"), (2, stopped_at, "succeeded")]
    assert (stage.progress_step, stage.progress_total, stage.attempts) == (8, 8, 2)
    assert any("resuming from checkpoint-" in line for line in stage.log_tail)
    # the resumed attempt did not redo the steps before the checkpoint: each step logged once
    steps = list(
        StageMetric.objects.filter(stage=stage, name="loss").values_list("step", flat=True)
    )
    assert sorted(steps) == list(range(1, 9))


def test_a_failing_runner_fails_the_stage_and_the_run(  # type: ignore[no-untyped-def]
    run_config_dict, operator, tiny_runners, enqueued, settings
):
    settings.HAT_TRAIN_STAGE_RUNNERS = {"hsa_sft": "os.path.nonexistent_function"}
    run = runs.run_create(config=run_config_dict, created_by=operator)
    stage = run.stage_runs.get(order=0)
    assert runs.stage_execute(stage.pk) == "failed"
    stage.refresh_from_db()
    run.refresh_from_db()
    assert stage.status == "failed" and "AttributeError" in stage.error
    assert run.status == "failed"
    assert stage.can_resume


def test_manage_py_train_inline_runs_the_chain_here(  # type: ignore[no-untyped-def]
    run_config_dict, tiny_runners, tmp_path
):
    import yaml
    from django.core.management import call_command

    config = run_config_dict | {
        "base_model_dir": str(tiny_runners),
        "stages": ["hsa_sft", "opd"],
        "params": {"hsa_sft": {"max_steps": 2}, "opd": {"max_steps": 2}},
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    from io import StringIO

    out = StringIO()
    call_command("train", "--config", str(path), "--inline", stdout=out)
    run = TrainingRun.objects.get()
    assert run.status == "succeeded", out.getvalue()
    first, second = run.stage_runs.order_by("order")
    assert (first.status, second.status) == ("succeeded", "succeeded")
    assert second.summary["init_model_dir"] == first.final_dir
    assert f"training run {run.pk}: succeeded" in out.getvalue()


def test_a_stage_in_a_child_process_reports_cancels_and_resumes(  # type: ignore[no-untyped-def]
    run_config_dict, operator, tiny_runners, enqueued, settings
):
    """HAT_TRAIN_LAUNCH=process: the worker starts stage_cli and follows it; metrics and
    progress reach the database, cancel reaches the child as STOP, resume continues from the
    checkpoint the child saved."""
    settings.HAT_TRAIN_LAUNCH = "process"
    settings.HAT_TRAIN_HEARTBEAT_INTERVAL_S = 0.2
    config = run_config_dict | {
        "base_model_dir": str(tiny_runners),
        "stages": ["hsa_sft"],
        # long enough that the cancel lands before the end: it crosses the database (cancel
        # cache 2 s), the STOP file (checked once a second) and a loaded CI machine
        "params": {"hsa_sft": {"max_steps": 30, "save_steps": 2, "step_sleep_s": 0.4}},
    }
    run = runs.run_create(config=config, created_by=operator)
    stage = run.stage_runs.get()

    canceller = _cancel_at_step(stage, 2)
    assert runs.stage_execute(stage.pk) == "cancelled"
    canceller.join()
    stage.refresh_from_db()
    stopped_at = int(Path(stage.checkpoint_dir).name.split("-")[1])
    assert 2 <= stopped_at < 30
    assert any("launching:" in line and "stage_cli" in line for line in stage.log_tail)
    assert (Path(stage.workdir) / "job.json").is_file()

    runs.run_resume(run=run)
    assert runs.stage_execute(stage.pk) == "succeeded"
    stage.refresh_from_db()
    assert (stage.progress_step, stage.progress_total) == (30, 30)
    assert Path(stage.final_dir, "config.json").is_file()
    steps = StageMetric.objects.filter(stage=stage, name="loss").values_list("step", flat=True)
    assert sorted(steps) == list(range(1, 31))  # every step once, across both attempts


def test_the_gpu_profile_launch_writes_the_bundle_and_follows_launch_sh(  # type: ignore[no-untyped-def]
    run_config_dict, operator, tiny_runners, enqueued, settings, tmp_path, monkeypatch
):
    """HAT_TRAIN_LAUNCH=accelerate: no GPU here to run it, so the follower is replaced by a
    recorder; the job carries the profile's trainer overrides and launch.sh runs
    ``accelerate launch`` on it."""
    import json

    import yaml

    from training_app.pipeline.contract import StageOutcome

    profile = tmp_path / "gpu.yaml"
    profile.write_text(yaml.safe_dump({"gpus_per_machine": 4, "vllm_mode": "colocate"}))
    settings.HAT_TRAIN_LAUNCH = "accelerate"
    settings.HAT_TRAIN_GPU_PROFILE = str(profile)
    launched: list[list[str]] = []

    def record(command, workdir, reporter, **kwargs):  # type: ignore[no-untyped-def]
        launched.append(list(command))
        return StageOutcome(final_dir=Path(tiny_runners), stopped=False, steps_done=0)

    monkeypatch.setattr(runs, "follow_stage_process", record)
    config = run_config_dict | {
        "base_model_dir": str(tiny_runners),
        "stages": ["opd"],
        "params": {},
    }
    run = runs.run_create(config=config, created_by=operator)
    stage = run.stage_runs.get()
    result = runs.stage_execute(stage.pk)
    stage.refresh_from_db()
    assert result == "succeeded", stage.error
    ((shell, script),) = launched
    assert shell == "bash" and script.endswith("launch/launch.sh")
    text = Path(script).read_text()
    assert "accelerate launch" in text and "training_app.pipeline.stage_cli" in text
    job = json.loads((Path(stage_workdir := runs.stage_workdir(stage)) / "job.json").read_text())
    overrides = job["inputs"]["trainer_overrides"]
    assert overrides["bf16"] is True and overrides["use_vllm"] is True
    assert overrides["vllm_mode"] == "colocate"
    assert (stage_workdir / "launch" / "accelerate.yaml").is_file()
