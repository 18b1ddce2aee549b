"""Celery tasks of training_app: take ids, load, call one service.

Long jobs run with ``acks_late`` (a worker that dies mid-job leaves the message for another
worker) and explicit time limits; cancelling is cooperative: the job checks its flag between
examples and is never killed mid-write.
"""

from __future__ import annotations

from celery import Task, shared_task
from django.conf import settings

from training_app import services


@shared_task(
    name="training_app.run_augmentation_job",
    acks_late=True,
    soft_time_limit=3_300,
    time_limit=3_600,
    queue="default",
)
def run_augmentation_job(job_id: int) -> None:
    services.augmentation_job_run(job_id)


@shared_task(
    name="training_app.run_stage",
    acks_late=True,
    # A worker that dies mid-stage is handled by the watchdog (stale heartbeat -> requeue);
    # a message redelivered later finds the stage running or done and exits.
    reject_on_worker_lost=False,
    soft_time_limit=settings.HAT_TRAIN_STAGE_TIME_LIMIT_S - 60,
    time_limit=settings.HAT_TRAIN_STAGE_TIME_LIMIT_S,
)
def run_stage(stage_id: int) -> str:
    """One training stage, under a database lease: a second delivery that finds the stage
    held by a live worker exits without running it."""
    return services.runs.stage_execute(stage_id)


@shared_task(name="training_app.requeue_stale_stages")
def requeue_stale_stages() -> list[int]:
    """Beat's watchdog: requeue running stages whose heartbeat went stale."""
    return services.runs.stages_requeue_stale()


@shared_task(
    name="training_app.run_eval",
    acks_late=True,
    soft_time_limit=settings.HAT_EVAL_RUN_TIME_LIMIT_S - 60,
    time_limit=settings.HAT_EVAL_RUN_TIME_LIMIT_S,
)
def run_eval(run_id: int) -> str:
    """One eval run; a redelivered message continues after the items already stored."""
    return services.evals.eval_run_execute(run_id)


@shared_task(
    bind=True,
    name="training_app.run_judge_calibration",
    acks_late=True,
    soft_time_limit=settings.HAT_EVAL_RUN_TIME_LIMIT_S - 60,
    time_limit=settings.HAT_EVAL_RUN_TIME_LIMIT_S,
)
def run_judge_calibration(self: Task, calibration_id: int) -> str:
    """A judge version on a blind test's labeled pairs; a redelivered message continues
    after the pairs already judged. Waits up to ``HAT_JOB_ENDPOINT_WAIT_S`` for the judge's
    endpoint to answer."""
    from training_app.models import JudgeCalibration
    from training_app.selectors.endpoints import (
        ENDPOINT_RETRY_S,
        endpoint_wait_retries,
        endpoints_unreachable,
    )
    from training_app.services.judges import judge_calibration_execute

    if not self.request.is_eager and self.request.retries < endpoint_wait_retries():
        queued = JudgeCalibration.objects.filter(pk=calibration_id, status="queued")
        calibration = queued.select_related("version__endpoint").first()
        if calibration and endpoints_unreachable([calibration.version.endpoint]):
            raise self.retry(countdown=ENDPOINT_RETRY_S, max_retries=None)

    return judge_calibration_execute(calibration_id)
