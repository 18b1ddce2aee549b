"""Training stages on REAL Celery workers over Redis against the test PostgreSQL database:
a two-stage run end to end on the ``train`` queue, and a worker killed mid-stage (SIGKILL to
its process group): the watchdog on a new worker's beat requeues the stage after its
heartbeat goes stale, and the stage resumes from its newest checkpoint, never running on two
workers at once. The stage runner is the tiny real Trainer loop (stage_runners.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.utils import timezone

from tests.db_sessions import wait_for_other_sessions_to_close
from tests.training_app.conftest import TINY_RUNNER
from training_app.models import StageRun, TrainingRun
from training_app.pipeline.contract import newest_checkpoint
from training_app.services import runs

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]
# Well above the 1 s heartbeat interval: on a loaded 2-core CI machine a live worker's beat
# can be a few seconds late, and only a dead worker may be replaced.
HEARTBEAT_TIMEOUT_S = 15


@pytest.fixture
def start_worker(tmp_path, settings) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:  # type: ignore[no-untyped-def]
    broker = django_settings.CELERY_BROKER_URL
    if not broker.startswith("redis://"):
        pytest.skip(f"needs the Redis broker (make test sets CELERY_BROKER_URL); got {broker}")
    settings.MEDIA_ROOT = tmp_path / "artifacts"
    settings.HAT_TRAIN_DIR = tmp_path / "training"
    settings.HAT_TRAIN_STAGE_RUNNERS = {kind: TINY_RUNNER for kind in ("hsa_sft", "opd", "hsa_rl")}
    db = connection.settings_dict
    env = os.environ | {
        "DATABASE_URL": (
            f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
        ),
        "CELERY_BROKER_URL": broker,
        "HAT_ARTIFACT_DIR": str(settings.MEDIA_ROOT),
        "HAT_VAR_DIR": str(tmp_path / "var"),
        "HAT_TRAIN_DIR": str(settings.HAT_TRAIN_DIR),
        "HAT_TRAIN_STAGE_RUNNERS": ",".join(
            f"{kind}={TINY_RUNNER}" for kind in ("hsa_sft", "opd", "hsa_rl")
        ),
        "HAT_TRAIN_HEARTBEAT_TIMEOUT_S": str(HEARTBEAT_TIMEOUT_S),
        "HAT_TRAIN_HEARTBEAT_INTERVAL_S": "1",
        "HAT_TRAIN_WATCHDOG_INTERVAL_S": "2",
        "HF_HUB_OFFLINE": "1",
    }
    processes: list[subprocess.Popen[bytes]] = []

    def start(
        name: str, *, queues: str = "train", beat: bool = False, real_stages: bool = False
    ) -> subprocess.Popen[bytes]:
        worker_env = dict(env)
        if real_stages:  # the pipeline's own HSA-SFT, OPD and HSA-RL runners
            del worker_env["HAT_TRAIN_STAGE_RUNNERS"]
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "console",
            "worker",
            # as the Procfile's train worker: one prefork child per stage
            "--pool=prefork",
            "--concurrency=1",
            "--max-tasks-per-child=1",
            "-Q",
            queues,
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            f"{name}-{uuid.uuid4().hex[:6]}@%h",
            "--loglevel=INFO",
        ]
        if beat:
            command += ["--beat", "--schedule", str(tmp_path / f"beat-{name}")]
        log = (tmp_path / f"{name}.log").open("wb")
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=worker_env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        process.log_path = tmp_path / f"{name}.log"  # type: ignore[attr-defined]
        processes.append(process)
        return process

    yield start
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    wait_for_other_sessions_to_close()


def _logs(*processes: Any) -> str:
    return "\n".join(p.log_path.read_text(errors="replace")[-3000:] for p in processes)


def _wait(condition: Callable[[], bool], timeout_s: float, *processes: Any) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout_s}s\n{_logs(*processes)}")


def test_two_stage_run_on_a_real_worker(  # type: ignore[no-untyped-def]
    run_config_dict, operator, tiny_model_dir, start_worker
):
    worker = start_worker("train")
    config = run_config_dict | {
        "base_model_dir": str(tiny_model_dir),
        "params": {"hsa_sft": {"max_steps": 3, "save_steps": 2}, "hsa_rl": {"max_steps": 2}},
    }
    run = runs.run_create(config=config, created_by=operator)
    _wait(lambda: TrainingRun.objects.get(pk=run.pk).is_finished, 240, worker)
    run.refresh_from_db()
    first, second = run.stage_runs.order_by("order")
    assert run.status == "succeeded", _logs(worker)
    assert [(s.status, s.progress_step, s.progress_total, s.attempts) for s in (first, second)] == [
        ("succeeded", 3, 3, 1),
        ("succeeded", 2, 2, 1),
    ]
    assert second.summary["init_model_dir"] == first.final_dir
    assert first.metrics.filter(name="loss").count() == 3
    assert Path(second.final_dir, "model.safetensors").is_file()


def test_three_real_stages_end_to_end_on_a_real_worker(  # type: ignore[no-untyped-def]
    compact_room, operator, tiny_model_dir, start_worker
):
    """HSA-SFT -> General OPD -> HSA-RL with the pipeline's real runners (TRL's SFTTrainer,
    DistillationTrainer, GRPOTrainer) on the tiny model, tasks generated from the room's
    catalog on the compact harness, through a real Celery worker."""
    worker = start_worker("pipeline", real_stages=True)
    version = compact_room.harness.published_version
    config = {
        "name": "tiny HAT",
        "base_model_dir": str(tiny_model_dir),
        "harness_versions": [{"harness": version.harness_id, "version": version.number}],
        "catalog_tasks": True,
        "hsa_policy": "hsa-train",
        "stages": ["hsa_sft", "opd", "hsa_rl"],
        "params": {
            "hsa_sft": {
                "max_steps": 4,
                "save_steps": 2,
                "learning_rate": 1e-3,
                "gradient_accumulation_steps": 1,
                "max_length": 1024,
                "heldout_fraction": 0.2,
                "heldout_max_rows": 8,
            },
            "opd": {
                "steps": 3,
                "save_steps": 3,
                "batch_size": 2,
                "learning_rate": 1e-3,
                "max_new_tokens": 16,
                "heldout_prompts": 4,
                "heldout_tokens": 8,
            },
            "hsa_rl": {
                "steps": 1,
                "save_steps": 1,
                "num_generations": 2,
                "prompts_per_step": 1,
                "max_turn_tokens": 24,
                "max_completion_tokens": 96,
                "agent_max_steps": 2,
                "max_prompt_tokens": 1024,
            },
        },
        "seed": 3,
    }
    run = runs.run_create(config=config, created_by=operator)
    _wait(lambda: TrainingRun.objects.get(pk=run.pk).is_finished, 900, worker)
    run.refresh_from_db()
    sft, opd, rl = run.stage_runs.order_by("order")
    assert run.status == "succeeded", _logs(worker) + str(
        [(s.kind, s.status, s.error) for s in (sft, opd, rl)]
    )
    # checkpoints exist and load
    from transformers import AutoModelForCausalLM

    for stage in (sft, opd, rl):
        assert AutoModelForCausalLM.from_pretrained(stage.final_dir) is not None
    # metrics were recorded, and each stage moved what it trains
    assert sft.metrics.filter(name="loss").count() >= 4
    assert sft.summary["heldout_loss_after"] < sft.summary["heldout_loss_before"], sft.summary
    assert opd.summary["heldout_divergence_after"] < opd.summary["heldout_divergence_before"], (
        opd.summary
    )
    reward_names = set(rl.metrics.values_list("name", flat=True))
    for component in ("accuracy", "effectiveness", "tool_rationality", "skill_selection"):
        assert any(component in name for name in reward_names), reward_names


def test_killed_worker_stage_is_requeued_by_the_watchdog_and_resumes(  # type: ignore[no-untyped-def]
    run_config_dict, operator, tiny_model_dir, start_worker
):
    # given a stage running on worker A that has written a checkpoint
    worker_a = start_worker("a")
    config = run_config_dict | {
        "base_model_dir": str(tiny_model_dir),
        "stages": ["hsa_sft"],
        "params": {"hsa_sft": {"max_steps": 10, "save_steps": 2, "step_sleep_s": 1.0}},
    }
    run = runs.run_create(config=config, created_by=operator)
    stage = run.stage_runs.get()
    workdir = runs.stage_workdir(stage)

    def has_checkpoint() -> bool:
        current = StageRun.objects.get(pk=stage.pk)
        return current.status == "running" and newest_checkpoint(workdir) is not None

    _wait(has_checkpoint, 180, worker_a)
    first_owner = StageRun.objects.get(pk=stage.pk).lease_owner
    # when worker A's whole process group is killed (no chance to clean up)
    os.killpg(worker_a.pid, signal.SIGKILL)
    worker_a.wait(timeout=10)
    killed_at = timezone.now()
    checkpoint_at_kill = newest_checkpoint(workdir)
    assert checkpoint_at_kill is not None
    assert StageRun.objects.get(pk=stage.pk).status == "running"  # nobody knows yet
    # and a new worker starts, with beat running the watchdog
    worker_b = start_worker("b", queues="train,default", beat=True)
    _wait(lambda: StageRun.objects.get(pk=stage.pk).is_finished, 240, worker_b)

    # then the stage finished on B, resumed from a checkpoint, after A was dead
    stage.refresh_from_db()
    attempts = list(stage.attempt_rows.order_by("number").values())
    assert stage.status == "succeeded", _logs(worker_b)
    assert (stage.progress_step, stage.progress_total, stage.attempts) == (10, 10, 2), attempts
    first, second = stage.attempt_rows.order_by("number")
    assert first.worker == first_owner and first.outcome == "lost (stale heartbeat)"
    assert second.worker != first.worker and second.outcome == "succeeded"
    assert second.start_step >= int(checkpoint_at_kill.name.split("-")[1]) > 0
    assert second.started_at > killed_at  # never on two workers at once
    watchdog_lines = [line for line in stage.log_tail if line.startswith("watchdog:")]
    assert len(watchdog_lines) == 1
    assert any(f"resuming from checkpoint-{second.start_step}" in line for line in stage.log_tail)
    assert TrainingRun.objects.get(pk=run.pk).status == "succeeded"
