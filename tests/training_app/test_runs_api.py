"""The training runs API: operators only, config errors as 400 naming the field, live
metrics polled incrementally, cancel/resume, the YAML config, endpoint registration, and
list query counts that do not grow with the number of runs."""

from __future__ import annotations

from io import StringIO

import pytest
import yaml
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from training_app.models import StageMetric, StageRun, TrainingRun
from training_app.services import runs

pytestmark = pytest.mark.django_db


def _fields(response) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {e["field"]: e["message"] for e in response.json()["errors"]}


def test_non_operators_are_refused(run_config_dict, merchant_api, labeler, operator, enqueued):  # type: ignore[no-untyped-def]
    run = runs.run_create(config=run_config_dict, created_by=operator)
    labeler_api = APIClient()
    labeler_api.force_authenticate(user=labeler)
    anonymous = APIClient()
    for client, expected in ((merchant_api, 403), (labeler_api, 403), (anonymous, 401)):
        assert client.get("/api/v1/training-runs/").status_code == expected
        assert (
            client.post("/api/v1/training-runs/", run_config_dict, format="json").status_code
            == expected
        )
        assert client.get(f"/api/v1/training-runs/{run.pk}/").status_code == expected
        assert client.get(f"/api/v1/training-runs/{run.pk}/metrics/").status_code == expected
        assert client.post(f"/api/v1/training-runs/{run.pk}/cancel/").status_code == expected
        assert client.get(f"/api/v1/training-runs/{run.pk}/config.yaml").status_code == expected
    assert TrainingRun.objects.count() == 1
    assert not StageRun.objects.filter(cancel_requested=True).exists()


def test_create_and_get(run_config_dict, operator_api, enqueued):  # type: ignore[no-untyped-def]
    response = operator_api.post("/api/v1/training-runs/", run_config_dict, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["status"] == "queued" and body["teacher"] == "gold"
    assert [(s["kind"], s["status"]) for s in body["stage_runs"]] == [
        ("hsa_sft", "queued"),
        ("hsa_rl", "pending"),
    ]
    assert body["params"]["hsa_sft"]["learning_rate"] == 5e-5  # SftParams' default
    detail = operator_api.get(f"/api/v1/training-runs/{body['id']}/").json()
    assert detail["id"] == body["id"]
    stage_id = body["stage_runs"][0]["id"]
    stage = operator_api.get(f"/api/v1/training-runs/{body['id']}/stages/{stage_id}/").json()
    assert stage["log_tail"] == [] and stage["attempt_rows"] == []


def test_bad_config_is_400_naming_each_field(run_config_dict, operator_api):  # type: ignore[no-untyped-def]
    config = run_config_dict | {
        "hsa_policy": "hsa-heldout",
        "stages": ["hsa_rl", "hsa_sft"],
        "params": {"hsa_sft": {"max_steps": -3}},
    }
    response = operator_api.post("/api/v1/training-runs/", config, format="json")
    assert response.status_code == 400
    errors = _fields(response)
    assert set(errors) == {"hsa_policy", "stages"}
    assert "held-out" in errors["hsa_policy"]
    ok_stages = run_config_dict | {"params": {"hsa_sft": {"max_steps": -3}}}
    response = operator_api.post("/api/v1/training-runs/", ok_stages, format="json")
    assert list(_fields(response)) == ["params.hsa_sft.max_steps"]
    response = operator_api.post("/api/v1/training-runs/", {"stages": ["x"]}, format="json")
    assert response.status_code == 400
    assert {"name", "harness_versions", "stages.0"} <= set(_fields(response))
    assert TrainingRun.objects.count() == 0


def test_metrics_poll_only_returns_new_steps(run_config_dict, operator_api, operator, enqueued):  # type: ignore[no-untyped-def]
    run = runs.run_create(config=run_config_dict, created_by=operator)
    stage = run.stage_runs.get(order=0)
    reporter = runs.DatabaseStageReporter(stage.pk, flush_s=3600)
    for step in range(1, 6):
        reporter.progress(step, 10)
        reporter.metrics(step, {"loss": 1.0 / step, "learning_rate": 1e-5})
    reporter.flush()
    url = f"/api/v1/training-runs/{run.pk}/metrics/"
    body = operator_api.get(url).json()
    first = body["stages"][0]
    assert (first["progress_step"], first["progress_total"], first["percent"]) == (5, 10, 50)
    assert first["series"]["loss"]["step"] == [1, 2, 3, 4, 5]
    assert first["series"]["loss"]["value"][1] == pytest.approx(0.5)
    later = operator_api.get(url, {"after": f"{stage.pk}:3"}).json()
    assert later["stages"][0]["series"]["loss"]["step"] == [4, 5]
    assert later["stages"][1]["series"] == {}
    bad = operator_api.get(url, {"after": "x"})
    assert bad.status_code == 400 and "after" in _fields(bad)
    # a resumed attempt that repeats a step overwrites it instead of duplicating it
    reporter.metrics(5, {"loss": 0.1})
    reporter.flush()
    assert StageMetric.objects.filter(stage=stage, name="loss", step=5).get().value == 0.1


def test_cancel_resume_yaml_and_endpoint(run_config_dict, operator_api, operator, enqueued):  # type: ignore[no-untyped-def]
    run = runs.run_create(config=run_config_dict, created_by=operator)
    base = f"/api/v1/training-runs/{run.pk}"
    resume = operator_api.post(f"{base}/resume/")
    assert resume.status_code == 400 and "status" in _fields(resume)
    register = operator_api.post(f"{base}/endpoint/")
    assert register.status_code == 400 and "no final model" in _fields(register)["status"]
    cancelled = operator_api.post(f"{base}/cancel/").json()
    assert cancelled["status"] == "cancelled"
    assert {s["status"] for s in cancelled["stage_runs"]} == {"cancelled"}
    resumed = operator_api.post(f"{base}/resume/").json()
    assert [s["status"] for s in resumed["stage_runs"]] == ["queued", "pending"]
    config = operator_api.get(f"{base}/config.yaml")
    assert config["Content-Type"].startswith("application/yaml")
    assert yaml.safe_load(config.content)["stages"] == ["hsa_sft", "hsa_rl"]
    # a finished last stage can be registered as a model endpoint
    StageRun.objects.filter(run=run).update(status="succeeded", final_dir="/models/run/final")
    response = operator_api.post(f"{base}/endpoint/")
    assert response.status_code == 201
    body = response.json()
    assert body["name"] == f"run-{run.pk}" and body["model_name"] == "/models/run/final"
    command = body["serve_command"]
    assert command[command.index("--port") + 1] == str(8100 + run.pk)
    assert "/models/run/final" in command
    printed = StringIO()
    call_command("serve_run", str(run.pk), "--print", stdout=printed)
    assert printed.getvalue().startswith("HF_HUB_OFFLINE=1 ")
    assert f"serve /models/run/final --host 127.0.0.1 --port {8100 + run.pk}" in printed.getvalue()


def test_compare_and_list_query_count(run_config_dict, operator_api, operator, enqueued):  # type: ignore[no-untyped-def]
    created = [runs.run_create(config=run_config_dict, created_by=operator) for _ in range(3)]
    for index, run in enumerate(created):
        stage = run.stage_runs.get(order=0)
        StageMetric.objects.bulk_create(
            StageMetric(stage=stage, step=s, name="loss", value=index + s) for s in (1, 2)
        )
    ids = ",".join(str(r.pk) for r in created[:2])
    series = operator_api.get("/api/v1/training-runs/compare/", {"runs": ids, "metric": "loss"})
    assert series.status_code == 200
    assert [s["value"] for s in series.json()] == [[1.0, 2.0], [2.0, 3.0]]
    bad = operator_api.get("/api/v1/training-runs/compare/", {"runs": "a", "metric": ""})
    assert set(_fields(bad)) == {"runs", "metric"}
    with CaptureQueriesContext(connection) as three:
        assert operator_api.get("/api/v1/training-runs/").status_code == 200
    runs.run_create(config=run_config_dict, created_by=operator)
    with CaptureQueriesContext(connection) as four:
        assert len(operator_api.get("/api/v1/training-runs/").json()["results"]) == 4
    assert len(four) == len(three)


def test_start_a_draft_run(  # type: ignore[no-untyped-def]
    run_config_dict, operator_api, operator, enqueued, django_capture_on_commit_callbacks
):
    run = runs.run_create(config=run_config_dict, created_by=operator, start=False)
    base = f"/api/v1/training-runs/{run.pk}"
    with django_capture_on_commit_callbacks(execute=True):
        started = operator_api.post(f"{base}/start/")
    assert started.status_code == 200 and started.json()["status"] == "queued"
    assert [s["status"] for s in started.json()["stage_runs"]] == ["queued", "pending"]
    with django_capture_on_commit_callbacks(execute=True):
        again = operator_api.post(f"{base}/start/")
    assert again.status_code == 400 and "not a draft" in _fields(again)["status"]
    assert len(enqueued) == 1
