"""Job pages say when the job ran and where they sit (issue #15.3): a training run, an eval
run and an HSA augmentation job show created / started / finished times (and how long it
took) and a breadcrumb back to their list."""

# ruff: noqa: F811  (fixtures imported from other test modules)
from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from django.test import Client
from django.urls import reverse

from tests.training_app.conftest import enqueued, gold_dataset, run_config_dict  # noqa: F401
from training_app.models import AugmentationJob, EvalRun, ModelEndpoint, TrainingRun
from training_app.services import evals, runs

T0 = datetime(2026, 3, 1, 9, 0, 0, tzinfo=UTC)


def times(html: str) -> dict[str, str]:
    """{"Created": iso, "Started": iso | text, "Finished": ..., "Took": text} of the page."""
    found = {}
    for label in ("Created", "Started", "Finished", "Took"):
        match = re.search(rf"{label} <b>(?:<time datetime=\"([^\"]+)\">)?([^<]*)", html)
        if match:
            found[label] = match.group(1) or match.group(2)
    return found


def test_a_training_run_shows_its_stage_times_and_a_breadcrumb(
    operator_client: Client, run_config_dict: dict[str, Any], operator: Any, enqueued: Any
) -> None:
    # given a run whose two stages ran 09:00-09:05 and 09:05-09:12
    run = runs.run_create(config=run_config_dict, created_by=operator)
    first, second = run.stage_runs.order_by("order")
    first.__class__.objects.filter(pk=first.pk).update(
        status="succeeded", started_at=T0, finished_at=T0 + timedelta(minutes=5)
    )
    second.__class__.objects.filter(pk=second.pk).update(
        status="succeeded",
        started_at=T0 + timedelta(minutes=5),
        finished_at=T0 + timedelta(minutes=12),
    )
    TrainingRun.objects.filter(pk=run.pk).update(status="succeeded")

    # when
    html = operator_client.get(reverse("console:training-run-detail", args=[run.pk])).content
    page = html.decode()

    # then
    assert times(page) | {"Created": ""} == {
        "Created": "",
        "Started": "2026-03-01T09:00:00+00:00",
        "Finished": "2026-03-01T09:12:00+00:00",
        "Took": "12 min",
    }
    assert re.search(
        r'class="breadcrumbs"><a href="/training/runs/">Training runs</a>.*Run #' + str(run.pk),
        page,
    )


def test_a_training_run_not_started_says_so(
    operator_client: Client, run_config_dict: dict[str, Any], operator: Any, enqueued: Any
) -> None:
    run = runs.run_create(config=run_config_dict, created_by=operator)
    page = operator_client.get(reverse("console:training-run-detail", args=[run.pk])).content
    found = times(page.decode())
    assert found["Started"] == "not yet" and found["Finished"] == "—" and "Took" not in found


def test_an_eval_run_shows_its_times(operator_client: Client, compact_room: Any) -> None:
    eval_set = evals.eval_set_build_qa(
        harness_version=compact_room.harness.published_version, name="Demo LS", per_type=1
    )
    endpoint = ModelEndpoint.objects.create(name="gold", base_url="http://127.0.0.1:9/v1")
    run = EvalRun.objects.create(
        eval_set=eval_set, endpoint=endpoint, model_label="HAT", status="running", started_at=T0
    )

    page = operator_client.get(reverse("console:eval-run-detail", args=[run.pk])).content
    found = times(page.decode())

    assert found["Started"] == "2026-03-01T09:00:00+00:00"
    assert found["Finished"] == "still running" and "Took" not in found
    assert found["Created"] == run.created_at.isoformat()
    assert 'class="breadcrumbs"><a href="/evaluation/">Evaluation</a>' in page.decode()


def test_an_augmentation_job_shows_its_times_and_a_breadcrumb(
    operator_client: Client, gold_dataset: Any
) -> None:
    job = AugmentationJob.objects.create(
        source=gold_dataset,
        policy="hsa-train",
        status="failed",
        started_at=T0,
        finished_at=T0 + timedelta(seconds=40),
    )

    page = operator_client.get(reverse("console:augmentation-job", args=[job.pk])).content
    html = page.decode()

    assert times(html)["Finished"] == "2026-03-01T09:00:40+00:00"
    assert times(html)["Took"] == "40 s"
    dataset_url = reverse("console:dataset-detail", args=[gold_dataset.pk])
    assert re.search(
        rf'class="breadcrumbs"><a href="/training/datasets/">Training data</a>.*'
        rf'<a href="{dataset_url}">gold</a>.*HSA job #{job.pk}',
        html,
    )


def test_elapsed_reads_like_a_duration() -> None:
    from console.templatetags.job_times import elapsed

    def took(seconds: int) -> str:
        return elapsed(T0, T0 + timedelta(seconds=seconds))

    assert [took(s) for s in (0, 40, 60, 725, 3600, 11_220, 86_400, 187_200)] == [
        "0 s",
        "40 s",
        "1 min",
        "12 min 5 s",
        "1 h",
        "3 h 7 min",
        "1 d",
        "2 d 4 h",
    ]
    assert elapsed(None, T0) == "" and elapsed(T0, T0 - timedelta(seconds=5)) == "0 s"
