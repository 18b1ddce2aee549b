"""Celery tasks of training_app: take ids, load, call one service.

Long jobs run with ``acks_late`` (a worker that dies mid-job leaves the message for another
worker) and explicit time limits; cancelling is cooperative: the job checks its flag between
examples and is never killed mid-write.
"""

from __future__ import annotations

from celery import shared_task

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
