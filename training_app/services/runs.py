"""Writes for training runs and their stages (reads: ``training_app.selectors.runs``).

Lifecycle: ``run_create`` stores the run and one ``StageRun`` per stage (pending) and queues
the first; ``stage_execute`` (the Celery task ``run_stage``) takes the stage's lease, runs
the stage runner with a heartbeat thread renewing the lease, and on success queues the next
stage with the previous stage's final model as its starting point. Cancel is cooperative
(the runner polls ``should_stop`` and saves a checkpoint); resume re-queues a cancelled or
failed stage, which continues from its newest checkpoint. The watchdog requeues a running
stage whose heartbeat went stale (its worker died): the lease lets exactly one worker run it.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from harness_app.selectors import room_catalog_snapshot
from training_app.models import ModelEndpoint, StageAttempt, StageMetric, StageRun, TrainingRun
from training_app.pipeline.contract import (
    StageInputs,
    StageOutcome,
    StageRunner,
    StageSpec,
    newest_checkpoint,
    stage_runner,
)
from training_app.pipeline.gpu_profile import load_gpu_profile, trainer_overrides, write_bundle
from training_app.pipeline.launcher import follow_stage_process, stage_cli_command, write_job
from training_app.services.run_config import RunConfig, run_config_validate

log = logging.getLogger(__name__)
LOG_TAIL_LINES = 200
REPORTER_FLUSH_S = 1.0
CANCEL_CACHE_S = 2.0


# --- create, start, cancel, resume -------------------------------------------------------


@transaction.atomic
def run_create(*, config: Any, created_by: Any, start: bool = True) -> TrainingRun:
    """Validate ``config`` (RunConfigError names every bad field; nothing is stored then),
    store the run and its stages, and queue the first stage on commit."""
    checked: RunConfig = run_config_validate(config)
    run = TrainingRun.objects.create(
        name=checked.name,
        base_model_dir=checked.base_model_dir,
        teacher=checked.teacher,
        catalog_tasks=checked.catalog_tasks,
        hsa_policy=checked.hsa_policy,
        stages=checked.stages,
        params=checked.params,
        seed=checked.seed,
        created_by=created_by if getattr(created_by, "pk", None) else None,
    )
    run.harness_versions.set(checked.harness_versions)
    run.datasets.set(checked.datasets)
    StageRun.objects.bulk_create(
        StageRun(run=run, kind=kind, order=index) for index, kind in enumerate(checked.stages)
    )
    if start:
        run_start(run=run)
    return run


class StartError(ValueError):
    pass


@transaction.atomic
def run_start(*, run: TrainingRun) -> TrainingRun:
    """Queue a draft run's first stage (a run created with ``start=False``)."""
    locked = TrainingRun.objects.select_for_update().get(pk=run.pk)
    if locked.status != TrainingRun.Status.DRAFT:
        raise StartError(f"run {run.pk} is {locked.status}, not a draft: it has started already")
    first = run.stage_runs.order_by("order").filter(status=StageRun.Status.PENDING).first()
    if first is not None:
        _queue_stage(first)
        _set_run_status(run.pk, TrainingRun.Status.QUEUED)
    run.refresh_from_db()
    return run


@transaction.atomic
def run_cancel(*, run: TrainingRun) -> TrainingRun:
    """Ask the running stage to stop (it saves a checkpoint and ends after its current step);
    queued and pending stages are cancelled at once."""
    stages = StageRun.objects.select_for_update().filter(run=run)
    now = timezone.now()
    for stage in stages:
        if stage.status == StageRun.Status.RUNNING:
            stage.cancel_requested = True
            stage.save(update_fields=["cancel_requested", "updated_at"])
        elif stage.status in (StageRun.Status.QUEUED, StageRun.Status.PENDING):
            stage.status = StageRun.Status.CANCELLED
            stage.cancel_requested = True
            stage.finished_at = now
            stage.save(update_fields=["status", "cancel_requested", "finished_at", "updated_at"])
    if not stages.filter(status=StageRun.Status.RUNNING).exists():
        _set_run_status(run.pk, TrainingRun.Status.CANCELLED)
    run.refresh_from_db()
    return run


class ResumeError(ValueError):
    pass


@transaction.atomic
def run_resume(*, run: TrainingRun) -> TrainingRun:
    """Re-queue the first cancelled or failed stage; it continues from its newest checkpoint
    and the stages after it follow. Refused while a stage still runs (a cancel is saving its
    checkpoint): resuming then would queue a later stage without the running one's model."""
    stages = list(StageRun.objects.select_for_update().filter(run=run).order_by("order"))
    running = [s for s in stages if s.status in (StageRun.Status.RUNNING, StageRun.Status.QUEUED)]
    if running:
        raise ResumeError(
            f"run {run.pk} is still stopping: stage {running[0].kind} is {running[0].status}; "
            "resume when it has stopped"
        )
    stage = next(
        (s for s in stages if s.status in (StageRun.Status.CANCELLED, StageRun.Status.FAILED)),
        None,
    )
    if stage is None:
        raise ResumeError(f"run {run.pk} has no cancelled or failed stage to resume")
    StageRun.objects.filter(run=run, order__gt=stage.order).update(
        status=StageRun.Status.PENDING, cancel_requested=False, finished_at=None
    )
    stage.cancel_requested = False
    stage.error = ""
    stage.finished_at = None
    stage.save(update_fields=["cancel_requested", "error", "finished_at", "updated_at"])
    _queue_stage(stage)
    _set_run_status(run.pk, TrainingRun.Status.QUEUED)
    run.refresh_from_db()
    return run


def _queue_stage(stage: StageRun) -> None:
    StageRun.objects.filter(pk=stage.pk).update(
        status=StageRun.Status.QUEUED, lease_owner="", lease_expires_at=None
    )
    from training_app.tasks import run_stage

    transaction.on_commit(lambda: run_stage.delay(stage.pk))


def _set_run_status(run_id: int, status: str) -> None:
    TrainingRun.objects.filter(pk=run_id).update(status=status, updated_at=timezone.now())


# --- the lease: a database lock that keeps a stage from running twice at once ---------------


def new_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def stage_claim(*, stage_id: int, owner: str, lease_s: float | None = None) -> bool:
    """Take the stage's lease with one conditional UPDATE: it succeeds for a queued stage, or a
    running one whose lease has expired (its worker died); a second delivery that finds a
    live lease gets False and must not run. The database serialises concurrent UPDATEs of the
    row, so exactly one of two racing workers wins."""
    lease_s = lease_s or settings.HAT_TRAIN_HEARTBEAT_TIMEOUT_S
    now = timezone.now()
    claimed = (
        StageRun.objects.filter(pk=stage_id, cancel_requested=False)
        .filter(
            Q(status=StageRun.Status.QUEUED)
            | Q(status=StageRun.Status.RUNNING, lease_expires_at__lt=now)
        )
        .update(
            status=StageRun.Status.RUNNING,
            lease_owner=owner,
            lease_expires_at=now + timedelta(seconds=lease_s),
            heartbeat_at=now,
            attempts=F("attempts") + 1,
            started_at=now,
            attempt_started_at=now,
            finished_at=None,
            updated_at=now,
        )
    )
    return claimed == 1


def stage_heartbeat(*, stage_id: int, owner: str, lease_s: float | None = None) -> bool:
    """Renew the lease; False when this worker no longer holds it (the watchdog requeued the
    stage and someone else took it): the stage must then stop."""
    lease_s = lease_s or settings.HAT_TRAIN_HEARTBEAT_TIMEOUT_S
    now = timezone.now()
    return (
        StageRun.objects.filter(
            pk=stage_id, lease_owner=owner, status=StageRun.Status.RUNNING
        ).update(heartbeat_at=now, lease_expires_at=now + timedelta(seconds=lease_s))
        == 1
    )


def stages_requeue_stale(*, timeout_s: float | None = None) -> list[int]:
    """The watchdog: a running stage whose heartbeat is older than ``timeout_s`` lost its
    worker. Put it back in the queue (expiring the lease, so the new delivery may claim it)
    and enqueue it; it resumes from its newest checkpoint."""
    timeout_s = timeout_s or settings.HAT_TRAIN_HEARTBEAT_TIMEOUT_S
    cutoff = timezone.now() - timedelta(seconds=timeout_s)
    requeued: list[int] = []
    stale = StageRun.objects.filter(status=StageRun.Status.RUNNING, heartbeat_at__lt=cutoff)
    for stage_id in stale.values_list("pk", flat=True):
        with transaction.atomic():
            # Conditional on the heartbeat still being stale: a worker that renewed it in the
            # meantime keeps its stage. A stage the operator asked to stop is not requeued:
            # its worker is gone, so it is simply cancelled (resumable from its checkpoint).
            stale_stage = StageRun.objects.filter(
                pk=stage_id, status=StageRun.Status.RUNNING, heartbeat_at__lt=cutoff
            )
            if stale_stage.filter(cancel_requested=True).update(
                status=StageRun.Status.CANCELLED,
                lease_owner="",
                lease_expires_at=None,
                finished_at=timezone.now(),
                updated_at=timezone.now(),
            ):
                StageAttempt.objects.filter(stage_id=stage_id, ended_at__isnull=True).update(
                    ended_at=timezone.now(), outcome="lost (stale heartbeat)"
                )
                _after_stage(StageRun.objects.get(pk=stage_id))
                continue
            updated = stale_stage.update(
                status=StageRun.Status.QUEUED,
                lease_owner="",
                lease_expires_at=None,
                updated_at=timezone.now(),
            )
            if updated:
                StageAttempt.objects.filter(stage_id=stage_id, ended_at__isnull=True).update(
                    ended_at=timezone.now(), outcome="lost (stale heartbeat)"
                )
                _append_log(stage_id, [f"watchdog: heartbeat older than {timeout_s:g}s, requeued"])
                from training_app.tasks import run_stage

                transaction.on_commit(functools.partial(run_stage.delay, stage_id))
                requeued.append(stage_id)
    if requeued:
        log.warning("training watchdog requeued stages %s", requeued)
    return requeued


class _Heartbeat(threading.Thread):
    """Renews the lease every interval on its own database connection; sets ``lost`` when
    the lease is gone, which the reporter turns into a stop request."""

    def __init__(self, stage_id: int, owner: str, interval_s: float) -> None:
        super().__init__(name=f"heartbeat-stage-{stage_id}", daemon=True)
        self.stage_id, self.owner, self.interval_s = stage_id, owner, interval_s
        self.done = threading.Event()
        self.lost = threading.Event()

    def run(self) -> None:
        try:
            while not self.done.wait(self.interval_s):
                try:
                    if not stage_heartbeat(stage_id=self.stage_id, owner=self.owner):
                        self.lost.set()
                        return
                except Exception:  # a database hiccup: try again next beat
                    log.exception("heartbeat of stage %s failed", self.stage_id)
                    close_old_connections()
        finally:
            connection.close()


# --- the reporter --------------------------------------------------------------------------


class DatabaseStageReporter:
    """The Django ``StageReporter``: buffers progress, metrics and log lines and writes them
    at most every ``flush_s``; ``should_stop`` reads the cancel flag at most every
    ``cancel_cache_s`` (and says yes at once when the heartbeat lost the lease)."""

    def __init__(
        self,
        stage_id: int,
        *,
        heartbeat: _Heartbeat | None = None,
        flush_s: float = REPORTER_FLUSH_S,
        cancel_cache_s: float = CANCEL_CACHE_S,
    ) -> None:
        self.stage_id = stage_id
        self.heartbeat = heartbeat
        self.flush_s, self.cancel_cache_s = flush_s, cancel_cache_s
        self._progress: tuple[int, int] | None = None
        self._metrics: dict[tuple[str, int], float] = {}
        self._lines: list[str] = []
        self._last_flush = 0.0
        self._cancel_checked = 0.0
        self._cancel = False
        self.last_step = 0

    def progress(self, step: int, total: int) -> None:
        self._progress = (max(0, int(step)), max(0, int(total)))
        self.last_step = max(0, int(step))
        self._maybe_flush()

    def metrics(self, step: int, values: Mapping[str, float]) -> None:
        for name, value in values.items():
            self._metrics[(str(name)[:100], max(0, int(step)))] = float(value)
        self._maybe_flush()

    def log(self, line: str) -> None:
        self._lines.append(str(line)[:2000])
        self._maybe_flush()

    def should_stop(self) -> bool:
        if self.heartbeat is not None and self.heartbeat.lost.is_set():
            return True
        now = time.monotonic()
        if now - self._cancel_checked >= self.cancel_cache_s:
            self._cancel_checked = now
            self._cancel = bool(
                StageRun.objects.filter(pk=self.stage_id)
                .values_list("cancel_requested", flat=True)
                .first()
            )
        return self._cancel

    def _maybe_flush(self) -> None:
        if time.monotonic() - self._last_flush >= self.flush_s:
            self.flush()

    def flush(self) -> None:
        self._last_flush = time.monotonic()
        if self._progress is not None:
            step, total = self._progress
            StageRun.objects.filter(pk=self.stage_id).update(
                progress_step=min(step, total) if total else step,
                progress_total=max(total, step),
                updated_at=timezone.now(),
            )
            self._progress = None
        if self._metrics:
            StageMetric.objects.bulk_create(
                [
                    StageMetric(stage_id=self.stage_id, name=name, step=step, value=value)
                    for (name, step), value in self._metrics.items()
                ],
                update_conflicts=True,
                unique_fields=["stage", "name", "step"],
                update_fields=["value"],
            )
            self._metrics = {}
        if self._lines:
            _append_log(self.stage_id, self._lines)
            self._lines = []


def _append_log(stage_id: int, lines: list[str]) -> None:
    with transaction.atomic():
        stage = StageRun.objects.select_for_update().only("log_tail").get(pk=stage_id)
        stage.log_tail = (list(stage.log_tail) + lines)[-LOG_TAIL_LINES:]
        stage.save(update_fields=["log_tail"])


# --- running one stage (the Celery task's body) ---------------------------------------------


def resolve_stage_runner(kind: str) -> StageRunner:
    """The runner for ``kind``: HAT_TRAIN_STAGE_RUNNERS (``module.function``) when set there,
    else the pipeline's own."""
    dotted = settings.HAT_TRAIN_STAGE_RUNNERS.get(kind)
    if dotted:
        module, _, name = dotted.rpartition(".")
        runner: StageRunner = getattr(importlib.import_module(module), name)
        return runner
    return stage_runner(kind)


def _run_stage(
    spec: StageSpec, inputs: StageInputs, workdir: Path, reporter: DatabaseStageReporter
) -> StageOutcome:
    """Run the stage as ``HAT_TRAIN_LAUNCH`` says: ``in_process`` (the CPU profile: the runner
    in this worker), ``process`` (``stage_cli`` in a child process, followed through its
    events file) or ``accelerate`` (the GPU profile in ``HAT_TRAIN_GPU_PROFILE``: the bundle's
    ``launch.sh``, one process per GPU, followed the same way)."""
    mode = settings.HAT_TRAIN_LAUNCH
    runner = settings.HAT_TRAIN_STAGE_RUNNERS.get(spec.kind, "")
    if mode == "in_process":
        return resolve_stage_runner(spec.kind)(spec, inputs, workdir, reporter)
    if mode == "accelerate":
        profile = load_gpu_profile(Path(settings.HAT_TRAIN_GPU_PROFILE))
        inputs = dataclasses.replace(
            inputs, trainer_overrides=trainer_overrides(profile, spec.kind)
        )
        job_file = write_job(spec, inputs, workdir, runner=runner)
        bundle = write_bundle(
            profile,
            spec.kind,
            out_dir=workdir / "launch",
            job_file=job_file,
            model_dir=inputs.init_model_dir,
        )
        command = ["bash", str(bundle["launch"])]
    else:
        command = stage_cli_command(write_job(spec, inputs, workdir, runner=runner))
    reporter.log(f"launching: {' '.join(command)}")
    return follow_stage_process(command, workdir, reporter)


def stage_workdir(stage: StageRun) -> Path:
    return Path(settings.HAT_TRAIN_DIR) / f"run-{stage.run_id}" / f"{stage.order}-{stage.kind}"


def stage_execute(stage_id: int, *, worker_id: str | None = None) -> str:
    """Run one stage if this worker can take its lease. Returns what happened: ``skipped``
    (someone else holds it, or it is not runnable), ``succeeded``, ``cancelled``, ``failed``
    or ``lost`` (the lease was taken over while running)."""
    owner = worker_id or new_worker_id()
    if not stage_claim(stage_id=stage_id, owner=owner):
        log.info("stage %s: not claimable (running elsewhere, finished or cancelled)", stage_id)
        return "skipped"
    stage = StageRun.objects.select_related("run").get(pk=stage_id)
    run = stage.run
    workdir = stage_workdir(stage)
    workdir.mkdir(parents=True, exist_ok=True)
    checkpoint = newest_checkpoint(workdir)
    start_step = _checkpoint_step(checkpoint)
    StageRun.objects.filter(pk=stage_id).update(
        workdir=str(workdir),
        attempt_start_step=start_step,
        progress_step=start_step,
        error="",
    )
    _set_run_status(run.pk, TrainingRun.Status.RUNNING)
    attempt = StageAttempt.objects.create(
        stage=stage, number=stage.attempts, worker=owner, start_step=start_step
    )
    heartbeat = _Heartbeat(stage_id, owner, settings.HAT_TRAIN_HEARTBEAT_INTERVAL_S)
    reporter = DatabaseStageReporter(stage_id, heartbeat=heartbeat)
    reporter.last_step = start_step
    reporter.log(
        f"attempt {stage.attempts} on {owner}: "
        + (f"resuming from {checkpoint.name}" if checkpoint else "starting from step 0")
    )
    heartbeat.start()
    outcome: StageOutcome | None = None
    error = ""
    try:
        spec = StageSpec(kind=stage.kind, params=dict(run.params.get(stage.kind, {})))  # type: ignore[arg-type]
        outcome = _run_stage(spec, stage_inputs(stage), workdir, reporter)
    except Exception as exc:  # recorded on the stage for the operator; the worker lives on
        log.exception("stage %s failed", stage_id)
        error = f"{type(exc).__name__}: {exc}"
        reporter.log(f"failed: {error}")
    finally:
        heartbeat.done.set()
        heartbeat.join(timeout=10)
        try:
            reporter.flush()
        except Exception:
            log.exception("stage %s: last flush failed", stage_id)
    newest = newest_checkpoint(workdir)
    end_step = outcome.steps_done if outcome else reporter.last_step
    return _stage_finish(stage, owner, attempt, outcome, error, newest, end_step, heartbeat)


def _stage_finish(
    stage: StageRun,
    owner: str,
    attempt: StageAttempt,
    outcome: StageOutcome | None,
    error: str,
    newest: Path | None,
    end_step: int,
    heartbeat: _Heartbeat,
) -> str:
    now = timezone.now()
    with transaction.atomic():
        current = StageRun.objects.select_for_update().get(pk=stage.pk)
        if current.lease_owner != owner or current.status != StageRun.Status.RUNNING:
            # The watchdog gave the stage to another worker: its attempt owns the outcome.
            result = "lost"
            attempt.outcome, attempt.ended_at, attempt.end_step = result, now, end_step
            attempt.save(update_fields=["outcome", "ended_at", "end_step"])
            return result
        current.checkpoint_dir = str(newest) if newest else ""
        current.lease_owner, current.lease_expires_at = "", None
        current.finished_at = now
        if outcome is not None and not outcome.stopped and outcome.final_dir is not None:
            result = StageRun.Status.SUCCEEDED
            current.final_dir = str(outcome.final_dir)
            current.summary = dict(outcome.summary)
            current.progress_step = max(current.progress_step, outcome.steps_done)
            current.progress_total = max(current.progress_total, current.progress_step)
        elif outcome is not None and outcome.stopped and current.cancel_requested:
            result = StageRun.Status.CANCELLED
            current.summary = dict(outcome.summary)
        else:
            result = StageRun.Status.FAILED
            current.error = error or (
                "the runner stopped without a final model"
                + (" (lease lost)" if heartbeat.lost.is_set() else "")
            )
        current.status = result
        current.save()
        attempt.outcome, attempt.ended_at, attempt.end_step = result, now, end_step
        attempt.save(update_fields=["outcome", "ended_at", "end_step"])
        _after_stage(current)
    return str(result)


def _after_stage(stage: StageRun) -> None:
    """Chain: a succeeded stage queues the next; the run's status follows its stages."""
    run_id = stage.run_id
    if stage.status == StageRun.Status.SUCCEEDED:
        following = (
            StageRun.objects.filter(run_id=run_id, order__gt=stage.order, status="pending")
            .order_by("order")
            .first()
        )
        if following is not None:
            _queue_stage(following)
            _set_run_status(run_id, TrainingRun.Status.QUEUED)
        else:
            _set_run_status(run_id, TrainingRun.Status.SUCCEEDED)
    elif stage.status == StageRun.Status.CANCELLED:
        StageRun.objects.filter(run_id=run_id, status=StageRun.Status.PENDING).update(
            status=StageRun.Status.CANCELLED
        )
        _set_run_status(run_id, TrainingRun.Status.CANCELLED)
    else:
        _set_run_status(run_id, TrainingRun.Status.FAILED)


def _checkpoint_step(checkpoint: Path | None) -> int:
    if checkpoint is None:
        return 0
    number = checkpoint.name.partition("-")[2]
    return int(number) if number.isdigit() else 0


def stage_inputs(stage: StageRun) -> StageInputs:
    """What the runner reads: the model to start from (the base for the first stage, the
    previous stage's final model after), the run's harnesses, their rooms' catalogs (as they
    are now) and the task records."""
    run = stage.run
    previous = (
        StageRun.objects.filter(run_id=run.pk, order__lt=stage.order, status="succeeded")
        .order_by("-order")
        .first()
    )
    init_dir = Path(previous.final_dir) if previous and previous.final_dir else None
    versions = list(run.harness_versions.select_related("harness__room"))
    harnesses = {str(v.pk): v.content for v in versions}
    catalogs = {str(v.pk): room_catalog_snapshot(v.harness.room) for v in versions}
    return StageInputs(
        init_model_dir=init_dir or Path(run.base_model_dir),
        base_model_dir=Path(run.base_model_dir),
        harnesses=harnesses,
        tasks=run_task_records(run, harnesses=harnesses, catalogs=catalogs),
        catalogs=catalogs,
        hsa_policy=run.hsa_policy,
        seed=run.seed,
        resume=True,
    )


def run_task_records(
    run: TrainingRun,
    *,
    harnesses: Mapping[str, Mapping[str, Any]],
    catalogs: Mapping[str, Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """The run's task records (``training_app.pipeline.task_set``'s format): every line of
    its gold datasets, for the dataset's harness version, then, with ``catalog_tasks``, the
    *train* split of tasks generated from each harness version's room catalog (disjoint
    from the Live-Stream QA eval templates)."""
    import json

    from training_app.pipeline.task_set import generate_tasks, task_from_gold

    records: list[dict[str, Any]] = []
    for dataset in run.datasets.order_by("pk"):
        harness_id = str(dataset.harness_version_id)
        if harness_id not in harnesses:
            continue  # validated at create time; a dataset of another version is not used
        with dataset.file.open("rb") as handle:
            lines = [line for line in handle if line.strip()]
        for index, line in enumerate(lines):
            records.append(
                task_from_gold(
                    json.loads(line),
                    task_id=f"dataset-{dataset.pk}-{index + 1}",
                    harness_id=harness_id,
                    catalog=catalogs[harness_id],
                )
            )
    if run.catalog_tasks:
        for harness_id, harness in harnesses.items():
            if catalogs[harness_id].get("products"):
                records.extend(
                    generate_tasks(
                        catalogs[harness_id], harness, harness_id, split="train", seed=run.seed
                    )
                )
    return records


# --- turning a result into a model endpoint --------------------------------------------------


class EndpointRegistrationError(ValueError):
    pass


@transaction.atomic
def run_register_endpoint(*, run: TrainingRun, name: str = "") -> ModelEndpoint:
    """Register the run's final model as a student ``ModelEndpoint`` served by
    ``transformers serve`` on HAT_TRAIN_SERVE_PORT + run id (``run_serve_command`` says how
    to start it). Idempotent: a run has at most one result endpoint."""
    from inference.workers.profiles import served_model_id

    if run.result_endpoint_id:
        assert run.result_endpoint is not None
        return run.result_endpoint
    final = run_final_dir(run)
    if final is None:
        raise EndpointRegistrationError(
            f"run {run.pk} has no final model yet: its last stage has not succeeded"
        )
    from training_app.services.endpoints import endpoint_create

    endpoint = endpoint_create(
        name=name or f"run-{run.pk}",
        base_url=f"http://127.0.0.1:{run_serve_port(run)}/v1",
        model_name=served_model_id(final),
        role=ModelEndpoint.Role.STUDENT,
        tool_mode=ModelEndpoint.ToolMode.TEXT,
        timeout_s=60.0,
        max_concurrency=2,
    )
    TrainingRun.objects.filter(pk=run.pk).update(result_endpoint=endpoint)
    run.result_endpoint = endpoint
    return endpoint


def run_final_dir(run: TrainingRun) -> Path | None:
    last = run.stage_runs.order_by("-order").first()
    if last is None or last.status != StageRun.Status.SUCCEEDED or not last.final_dir:
        return None
    return Path(last.final_dir)


def run_serve_port(run: TrainingRun) -> int:
    return int(settings.HAT_TRAIN_SERVE_PORT) + int(run.pk)


def run_serve_command(run: TrainingRun) -> list[str] | None:
    from inference.workers.profiles import transformers_serve_command

    final = run_final_dir(run)
    if final is None:
        return None
    return transformers_serve_command(final, port=run_serve_port(run))
