"""Celery tasks of the experiments app (queue ``default``; blind-test replies and latency
replays on ``eval``, routed by ``CELERY_TASK_ROUTES``).

``update_rollups`` is scheduled by Celery beat every ``HAT_ROLLUP_INTERVAL_S`` seconds and can
be queued after a burst of events; it is idempotent and incremental, and a second copy that
starts while one runs returns at once (the run holds a PostgreSQL advisory lock).
"""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task
from django.conf import settings

from experiments_app.rollups import rollups_update


@shared_task(
    name="experiments_app.tasks.update_rollups",
    acks_late=True,
    soft_time_limit=600,
    time_limit=660,
    ignore_result=False,
)
def update_rollups(experiment_ids: list[int] | None = None, full: bool = False) -> dict[str, Any]:
    """Bring the rollups up to date (``experiment_ids``: only those; ``full``: recompute)."""
    report = rollups_update(full=full, experiment_ids=experiment_ids)
    return {
        "events": report.events,
        "uv_days": report.uv_days,
        "experiments": {str(pk): len(days) for pk, days in report.experiments.items()},
        "full_refresh": report.full_refresh,
        "seconds": round(report.seconds, 3),
        "skipped": report.skipped,
    }


@shared_task(
    bind=True,
    name="experiments_app.tasks.generate_blind_replies",
    acks_late=True,
    soft_time_limit=6 * 3600 - 60,
    time_limit=6 * 3600,
)
def generate_blind_replies(self: Task, test_id: int) -> dict[str, Any]:
    """A blind test's missing replies (a redelivered message generates only what is missing).
    Waits up to ``HAT_JOB_ENDPOINT_WAIT_S`` for a side's endpoint that does not answer yet."""
    from experiments_app.models import BlindSide
    from experiments_app.services.blind_tests import blind_test_generate
    from training_app.selectors.endpoints import (
        ENDPOINT_RETRY_S,
        endpoint_wait_retries,
        endpoints_unreachable,
    )

    if not self.request.is_eager and self.request.retries < endpoint_wait_retries():
        sides = BlindSide.objects.filter(test_id=test_id, test__status="generating")
        if endpoints_unreachable(side.endpoint for side in sides.select_related("endpoint")):
            raise self.retry(countdown=ENDPOINT_RETRY_S, max_retries=None)
    report = blind_test_generate(test_id)
    return {"generated": report.generated, "failed": len(report.failed), "skipped": report.skipped}


@shared_task(
    bind=True,
    name="experiments_app.tasks.run_latency_replay",
    acks_late=True,
    soft_time_limit=settings.HAT_EVAL_RUN_TIME_LIMIT_S - 60,
    time_limit=settings.HAT_EVAL_RUN_TIME_LIMIT_S,
)
def run_latency_replay(self: Task, report_id: int) -> str:
    """A latency replay (``services.latency_replay``). A redelivered message finds the
    report held by a live worker (``busy``) and retries after the lease could go stale, so
    a dead worker's replay is taken over; one held by a live worker is left to it."""
    from experiments_app.services import latency_replay

    outcome = latency_replay.latency_replay_run(report_id)
    if outcome.busy and not self.request.is_eager:
        raise self.retry(
            countdown=latency_replay.STALE_AFTER_S,
            max_retries=int(settings.HAT_EVAL_RUN_TIME_LIMIT_S // latency_replay.STALE_AFTER_S) + 2,
        )
    return outcome.status


@shared_task(name="experiments_app.tasks.requeue_stale_latency_replays")
def requeue_stale_latency_replays() -> list[int]:
    """Beat's watchdog for latency replays whose worker died (``services.latency_replay``)."""
    from experiments_app.services import latency_replay

    return latency_replay.latency_replays_requeue_stale()
