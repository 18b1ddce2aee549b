"""The judge API: operators only, create/update with versioning, synchronous score and
compare through a scripted server, calibrations, and the eval-run judge field."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.inference.scripted_server import ScriptedServer
from tests.training_app.judge_data import blind_test, pair_answer, reply_answer, text_answer
from training_app.evals.judge import DEFAULT_RUBRIC
from training_app.models import EvalSet, JudgeCalibration, ModelEndpoint

pytestmark = pytest.mark.django_db


@pytest.fixture
def server() -> Any:
    with ScriptedServer() as scripted:
        yield scripted


@pytest.fixture
def endpoint(server: ScriptedServer) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        name="judge-model", base_url=server.base_url, model_name="scripted-model", timeout_s=5
    )


@pytest.fixture
def judge_id(operator_api: APIClient, endpoint: ModelEndpoint) -> int:
    response = operator_api.post(
        "/api/v1/judges/", {"name": "Strict", "endpoint": "judge-model"}, format="json"
    )
    assert response.status_code == 201, response.content
    return int(response.json()["id"])


def test_only_operators_reach_the_judge_api(merchant_api: APIClient, judge_id: int) -> None:
    for url in (
        "/api/v1/judges/",
        f"/api/v1/judges/{judge_id}/",
        f"/api/v1/judges/{judge_id}/versions/",
        "/api/v1/judge-calibrations/",
    ):
        assert merchant_api.get(url).status_code == 403, url
    response = merchant_api.post(
        f"/api/v1/judges/{judge_id}/score/", {"comment": "c", "reply": "r"}, format="json"
    )
    assert response.status_code == 403


def test_create_list_and_read_with_the_current_version_and_its_trust(
    operator_api: APIClient, judge_id: int
) -> None:
    listed = operator_api.get("/api/v1/judges/").json()
    assert listed["count"] == 1
    judge = listed["results"][0]
    assert judge["rubric"] == DEFAULT_RUBRIC.strip()
    current = judge["current_version"]
    assert current["number"] == 1 and current["model_name"] == "scripted-model"
    assert current["trust"]["state"] == "uncalibrated"
    detail = operator_api.get(f"/api/v1/judges/{judge_id}/").json()
    assert detail["current_version"]["id"] == current["id"]


def test_bad_inputs_are_400s_naming_the_field(operator_api: APIClient, judge_id: int) -> None:
    response = operator_api.post(
        "/api/v1/judges/", {"name": "Other", "endpoint": "nope"}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "endpoint"
    response = operator_api.post(
        "/api/v1/judges/", {"name": "Strict", "endpoint": "judge-model"}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "name"
    response = operator_api.patch(f"/api/v1/judges/{judge_id}/", {"min_kappa": 2}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "min_kappa"


def test_an_edit_makes_a_new_version_only_for_rubric_or_model(
    operator_api: APIClient, judge_id: int
) -> None:
    url = f"/api/v1/judges/{judge_id}/"
    same = operator_api.patch(url, {"description": "strict one"}, format="json").json()
    assert same["new_version"] is False and same["judge"]["current_version"]["number"] == 1
    changed = operator_api.patch(url, {"rubric": "Be brief."}, format="json").json()
    assert changed["new_version"] is True
    assert changed["judge"]["current_version"]["number"] == 2
    versions = operator_api.get(f"{url}versions/").json()
    assert [v["number"] for v in versions["results"]] == [2, 1]
    assert versions["results"][0]["rubric"] == "Be brief."


def test_score_and_compare_synchronously(
    operator_api: APIClient, judge_id: int, server: ScriptedServer
) -> None:
    server.enqueue(reply_answer(effectiveness=3))
    scored = operator_api.post(
        f"/api/v1/judges/{judge_id}/score/",
        {"comment": "How much?", "facts": {"price": 89}, "reply": "89.", "timeout_s": 5},
        format="json",
    )
    assert scored.status_code == 201, scored.content
    body = scored.json()
    assert body["kind"] == "reply" and body["parsed"] is True
    assert body["result"]["effectiveness_value"] == 0.5
    assert body["trust"]["state"] == "uncalibrated"
    server.enqueue(pair_answer("1"), pair_answer("1"))
    compared = operator_api.post(
        f"/api/v1/judges/{judge_id}/compare/",
        {"comment": "c", "reply_one": "a", "reply_two": "b"},
        format="json",
    ).json()
    assert compared["result"]["verdict"] == "tie"
    assert compared["result"]["order_disagreement"] is True
    server.enqueue(text_answer("1"))
    unparsed = operator_api.post(
        f"/api/v1/judges/{judge_id}/score/", {"comment": "c", "reply": "r"}, format="json"
    ).json()
    assert unparsed["parsed"] is False and unparsed["error"].startswith("unparsed:")
    response = operator_api.post(
        f"/api/v1/judges/{judge_id}/score/",
        {"comment": "c", "reply": "r", "timeout_s": 1000},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "timeout_s"


def test_calibrations_are_created_listed_and_read(
    operator_api: APIClient,
    judge_id: int,
    endpoint: ModelEndpoint,
    published_room: Any,
    monkeypatch: Any,
) -> None:
    from training_app.tasks import run_judge_calibration

    queued: list[int] = []
    monkeypatch.setattr(run_judge_calibration, "delay", queued.append)
    test = blind_test(published_room, endpoint, [["one", "one"]])
    version_id = operator_api.get(f"/api/v1/judges/{judge_id}/").json()["current_version"]["id"]
    response = operator_api.post(
        "/api/v1/judge-calibrations/",
        {"version_id": version_id, "blind_test_id": test.pk},
        format="json",
    )
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["status"] == "queued" and created["judge"] == judge_id
    listed = operator_api.get("/api/v1/judge-calibrations/").json()
    assert [c["id"] for c in listed["results"]] == [created["id"]]
    assert (
        operator_api.get(f"/api/v1/judge-calibrations/{created['id']}/").json()["id"]
        == (created["id"])
    )
    missing = operator_api.post(
        "/api/v1/judge-calibrations/",
        {"version_id": version_id, "blind_test_id": 99999},
        format="json",
    )
    assert missing.status_code == 400
    assert missing.json()["errors"][0]["field"] == "blind_test_id"
    assert JudgeCalibration.objects.count() == 1


def test_an_eval_run_takes_an_optional_judge_version(
    operator_api: APIClient, judge_id: int, endpoint: ModelEndpoint, monkeypatch: Any
) -> None:
    from training_app.tasks import run_eval

    monkeypatch.setattr(run_eval, "delay", lambda _id: None)
    eval_set = EvalSet.objects.create(
        name="QA",
        kind=EvalSet.Kind.LIVE_STREAM_QA,
        file="eval_sets/x.json",
        content_hash="x",
        items=3,
    )
    version_id = operator_api.get(f"/api/v1/judges/{judge_id}/").json()["current_version"]["id"]
    body = {"eval_set_id": eval_set.pk, "model_label": "HAT", "endpoint": "judge-model"}
    plain = operator_api.post("/api/v1/eval-runs/", body, format="json")
    assert plain.status_code == 201, plain.content
    assert plain.json()["judge_version"] is None
    judged = operator_api.post(
        "/api/v1/eval-runs/", {**body, "judge_version_id": version_id}, format="json"
    )
    assert judged.status_code == 201 and judged.json()["judge_version"] == version_id
    missing = operator_api.post(
        "/api/v1/eval-runs/", {**body, "judge_version_id": 99999}, format="json"
    )
    assert missing.status_code == 400
    assert missing.json()["errors"][0]["field"] == "judge_version_id"


def test_the_judge_list_does_not_query_per_judge(
    operator_api: APIClient, endpoint: ModelEndpoint, django_assert_max_num_queries: Any
) -> None:
    from training_app.services import judges

    for index in range(4):
        judges.judge_create(name=f"judge {index}", endpoint=endpoint)
    with django_assert_max_num_queries(6):
        body = operator_api.get("/api/v1/judges/").json()
    assert body["count"] == 4
    assert all(j["current_version"]["trust"]["state"] == "uncalibrated" for j in body["results"])
