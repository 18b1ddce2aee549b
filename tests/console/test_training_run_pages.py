"""Training run pages: operators only (404 for merchants and labelers), the form with errors
at the field, the run page, cancel/resume/register buttons, YAML export and the compare
chart; the list's query count does not grow with the runs."""

# ruff: noqa: F811  (fixtures imported from tests/training_app/conftest.py)
from __future__ import annotations

from typing import Any

import pytest
import yaml
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.training_app.conftest import enqueued, gold_dataset, run_config_dict  # noqa: F401
from training_app.models import StageMetric, StageRun, TrainingRun
from training_app.services import runs

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(run_config_dict: dict[str, Any], operator: Any, enqueued: list[int]) -> TrainingRun:
    return runs.run_create(config=run_config_dict, created_by=operator)


def test_merchants_and_labelers_get_404(  # type: ignore[no-untyped-def]
    run, merchant_client: Client, labeler_client: Client
):
    for client in (merchant_client, labeler_client):
        for url in (
            "/training/runs/",
            "/training/runs/new/",
            "/training/runs/compare/",
            f"/training/runs/{run.pk}/",
            f"/training/runs/{run.pk}/config.yaml",
        ):
            assert client.get(url).status_code == 404, url
        assert client.post(f"/training/runs/{run.pk}/cancel/").status_code == 404
    assert not StageRun.objects.filter(cancel_requested=True).exists()
    assert Client().get("/training/runs/").status_code == 302  # to the login page


def test_form_shows_defaults_and_puts_errors_at_the_field(  # type: ignore[no-untyped-def]
    gold_dataset, operator_client: Client, enqueued
):
    page = operator_client.get("/training/runs/new/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "learning_rate: 5.0e-05" in html  # the runners' defaults shown in the params box
    assert 'value="hsa-heldout"' not in html  # held-out policies are not offered
    version = gold_dataset.harness_version
    data = {
        "name": "from the form",
        "harness_versions": [version.pk],
        "datasets": [gold_dataset.pk],
        "stages": ["hsa_sft", "hsa_rl"],
        "hsa_policy": "hsa-train",
        "teacher": "gold",
        "base_model_dir": "/models/base",
        "params": "hsa_sft:\n  max_steps: 0\n",
        "seed": "3",
    }
    bad = operator_client.post("/training/runs/new/", data)
    assert bad.status_code == 400
    (error,) = bad.context["form"].errors["params"]
    assert error.startswith("params.hsa_sft.max_steps: ")
    heldout = operator_client.post("/training/runs/new/", data | {"hsa_policy": "hsa-heldout"})
    assert "hsa_policy" in heldout.context["form"].errors
    assert TrainingRun.objects.count() == 0

    good = operator_client.post("/training/runs/new/", data | {"params": "hsa_sft: {max_steps: 9}"})
    run = TrainingRun.objects.get()
    assert good.status_code == 302 and good["Location"] == f"/training/runs/{run.pk}/"
    assert run.stages == ["hsa_sft", "hsa_rl"] and run.params["hsa_sft"]["max_steps"] == 9
    assert run.stage_runs.get(order=0).status == "queued"  # enqueued on commit


def test_run_page_buttons_and_yaml(run, operator_client: Client):  # type: ignore[no-untyped-def]
    page = operator_client.get(f"/training/runs/{run.pk}/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "console/training_run.js" in html and "plotly" in html
    assert f'data-metrics-url="/api/v1/training-runs/{run.pk}/metrics/"' in html
    assert "HSA-SFT" in html and "HSA-RL" in html
    assert "Cancel</button>" in html and "Resume</button>" not in html
    assert "<script>" not in html  # the CSP forbids inline scripts

    operator_client.post(f"/training/runs/{run.pk}/cancel/")
    run.refresh_from_db()
    assert run.status == "cancelled"
    html = operator_client.get(f"/training/runs/{run.pk}/").content.decode()
    assert "Resume</button>" in html and "Cancel</button>" not in html
    operator_client.post(f"/training/runs/{run.pk}/resume/")
    assert run.stage_runs.get(order=0).status == "queued"

    exported = operator_client.get(f"/training/runs/{run.pk}/config.yaml")
    assert yaml.safe_load(exported.content)["hsa_policy"] == "hsa-train"

    StageRun.objects.filter(run=run).update(status="succeeded", final_dir="/models/final")
    TrainingRun.objects.filter(pk=run.pk).update(status="succeeded")
    html = operator_client.get(f"/training/runs/{run.pk}/").content.decode()
    assert "Register as endpoint" in html and f"manage.py serve_run {run.pk}" in html
    operator_client.post(f"/training/runs/{run.pk}/endpoint/")
    run.refresh_from_db()
    assert run.result_endpoint is not None and run.result_endpoint.model_name == "/models/final"


def test_compare_chart_and_list_queries(  # type: ignore[no-untyped-def]
    run_config_dict, operator, operator_client: Client, enqueued
):
    created = [runs.run_create(config=run_config_dict, created_by=operator) for _ in range(2)]
    for index, item in enumerate(created):
        StageMetric.objects.create(
            stage=item.stage_runs.get(order=0), step=1, name="loss", value=index
        )
    ids = [str(r.pk) for r in created]
    page = operator_client.get("/training/runs/compare/", {"runs": ids, "metric": "loss"})
    assert page.status_code == 200
    figure = page.context["figure"]
    assert [trace["y"] for trace in figure["data"]] == [[0.0], [1.0]]
    assert 'data-plotly-figure="compare-figure"' in page.content.decode()
    with CaptureQueriesContext(connection) as two:
        assert operator_client.get("/training/runs/").status_code == 200
    runs.run_create(config=run_config_dict, created_by=operator)
    with CaptureQueriesContext(connection) as three:
        html = operator_client.get("/training/runs/").content.decode()
    assert len(three) == len(two)
    assert html.count('role="progressbar"') == 6


def test_start_a_draft_run_from_its_page(  # type: ignore[no-untyped-def]
    run_config_dict, operator, operator_client: Client, enqueued, django_capture_on_commit_callbacks
):
    draft = runs.run_create(config=run_config_dict, created_by=operator, start=False)
    page = operator_client.get(f"/training/runs/{draft.pk}/").content.decode()
    assert f"/training/runs/{draft.pk}/start/" in page
    with django_capture_on_commit_callbacks(execute=True):
        response = operator_client.post(f"/training/runs/{draft.pk}/start/", follow=True)
    assert TrainingRun.objects.get(pk=draft.pk).status == "queued" and len(enqueued) == 1
    assert "Started: the first stage is queued" in response.content.decode()
    assert f"/training/runs/{draft.pk}/start/" not in response.content.decode()
    # a second start is refused on the page, nothing is queued again
    again = operator_client.post(f"/training/runs/{draft.pk}/start/", follow=True)
    assert "not a draft" in again.content.decode() and len(enqueued) == 1
