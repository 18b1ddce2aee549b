"""Reads for training runs: lists with their stages, one run, and metric series for the live
charts (incremental: a poll asks only for the steps after the last one it has)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db.models import Prefetch, QuerySet
from django.http import Http404

from training_app.models import StageAttempt, StageMetric, StageRun, TrainingRun

MAX_POINTS_PER_POLL = 20_000


def runs_list() -> QuerySet[TrainingRun]:
    return TrainingRun.objects.select_related(
        "created_by", "result_endpoint", "teacher"
    ).prefetch_related(
        Prefetch(
            "stage_runs", queryset=StageRun.objects.order_by("order").defer("log_tail", "summary")
        )
    )


def run_get(*, run_id: int) -> TrainingRun:
    try:
        return (
            TrainingRun.objects.select_related("created_by", "result_endpoint", "teacher")
            .prefetch_related(
                Prefetch(
                    "stage_runs",
                    queryset=StageRun.objects.order_by("order").prefetch_related(
                        Prefetch("attempt_rows", queryset=StageAttempt.objects.order_by("number"))
                    ),
                ),
                "harness_versions__harness",
                "datasets",
            )
            .get(pk=run_id)
        )
    except (TrainingRun.DoesNotExist, ValueError, TypeError):
        raise Http404("No such training run.") from None


def run_can_resume(run: TrainingRun) -> bool:
    """A stage was cancelled or failed and none is still running or queued (a cancel that is
    saving its checkpoint must finish first)."""
    statuses = {stage.status for stage in run.stage_runs.all()}
    busy = {StageRun.Status.RUNNING, StageRun.Status.QUEUED}
    return bool(statuses & {StageRun.Status.CANCELLED, StageRun.Status.FAILED}) and not (
        statuses & busy
    )


def stage_get(*, run: TrainingRun, stage_id: int) -> StageRun:
    try:
        return StageRun.objects.get(run=run, pk=stage_id)
    except (StageRun.DoesNotExist, ValueError, TypeError):
        raise Http404("No such stage.") from None


def run_metric_series(
    *, run: TrainingRun, after: dict[int, int] | None = None, names: set[str] | None = None
) -> dict[int, dict[str, dict[str, list[float]]]]:
    """``{stage_id: {metric: {"step": [...], "value": [...]}}}`` for the run's stages, only
    the steps after ``after[stage_id]`` (one indexed range scan per poll)."""
    after = after or {}
    series: dict[int, dict[str, dict[str, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: {"step": [], "value": []})
    )
    for stage_id in run.stage_runs.values_list("pk", flat=True):
        rows = StageMetric.objects.filter(stage_id=stage_id, step__gt=after.get(stage_id, -1))
        if names:
            rows = rows.filter(name__in=names)
        for step, name, value in rows.order_by("step", "name").values_list("step", "name", "value")[
            :MAX_POINTS_PER_POLL
        ]:
            point = series[stage_id][name]
            point["step"].append(step)
            point["value"].append(value)
    return {k: dict(v) for k, v in series.items()}


def metric_names(*, runs: list[TrainingRun] | QuerySet[TrainingRun]) -> list[str]:
    return sorted(
        set(
            StageMetric.objects.filter(stage__run__in=runs)
            .values_list("name", flat=True)
            .distinct()
        )
    )


def runs_metric_compare(*, run_ids: list[int], name: str) -> list[dict[str, Any]]:
    """One series per run for metric ``name``: its stages laid end to end (a stage's steps
    offset by the steps of the stages before it), for the compare chart."""
    result: list[dict[str, Any]] = []
    runs = TrainingRun.objects.filter(pk__in=run_ids).order_by("pk")
    for run in runs:
        offset = 0
        steps: list[int] = []
        values: list[float] = []
        for stage in run.stage_runs.order_by("order"):
            rows = StageMetric.objects.filter(stage=stage, name=name).order_by("step")
            for step, value in rows.values_list("step", "value"):
                steps.append(offset + step)
                values.append(value)
            offset += max(stage.progress_total, stage.progress_step)
        result.append({"run_id": run.pk, "name": run.name, "step": steps, "value": values})
    return result
