"""Judge pages: operators only, the list with trust badges, create, edit (a rubric change is
a new version, said clearly), the detail page's warning, calibrations with agreement, kappa
and the confusion heatmap, the calibrate form, and the eval-run page's judge warning."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client

from tests.training_app.judge_data import blind_test
from training_app.models import EvalRun, EvalSet, Judge, JudgeCalibration, ModelEndpoint
from training_app.services import judges

pytestmark = pytest.mark.django_db


@pytest.fixture
def endpoint() -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        name="judge-model", base_url="http://127.0.0.1:9/v1", model_name="small-model"
    )


@pytest.fixture
def judge(endpoint: ModelEndpoint, operator: Any) -> Judge:
    return judges.judge_create(name="Strict", endpoint=endpoint, created_by=operator)


def _calibrated(judge: Judge, published_room: Any, endpoint: ModelEndpoint, kappa: float) -> Any:
    test = blind_test(published_room, endpoint, [["one", "one"]])
    return JudgeCalibration.objects.create(
        version=judge.versions.get(),
        blind_test=test,
        status=JudgeCalibration.Status.SUCCEEDED,
        progress_done=4,
        progress_total=4,
        report={
            "n": 3,
            "pairs": 4,
            "agreement": 2 / 3,
            "agreement_ci": [0.3333, 1.0],
            "kappa": kappa,
            "kappa_ci": [0.1, 0.9],
            "labels": ["one", "tie", "two"],
            "confusion": [[1, 0, 0], [0, 1, 1], [0, 0, 0]],
            "position_bias_rate": 0.25,
            "unparsed": 1,
            "skipped_no_majority": 0,
            "human_labels": {"one": 1, "tie": 2, "two": 0},
            "confidence": 0.95,
            "n_resamples": 2000,
            "seed": 0,
        },
    )


def test_judge_pages_are_for_operators_only(merchant_client: Client, judge: Judge) -> None:
    for url in ("/judges/", "/judges/new/", f"/judges/{judge.pk}/", f"/judges/{judge.pk}/edit/"):
        assert merchant_client.get(url).status_code == 404, url
    assert merchant_client.post(f"/judges/{judge.pk}/calibrate/").status_code == 404


def test_the_nav_links_judges_for_operators(
    operator_client: Client, merchant_client: Client
) -> None:
    assert 'href="/judges/"' in operator_client.get("/judges/").content.decode()
    assert 'href="/judges/"' not in merchant_client.get("/rooms/").content.decode()


def test_the_list_shows_each_current_versions_trust(
    operator_client: Client, judge: Judge, published_room: Any, endpoint: ModelEndpoint
) -> None:
    html = operator_client.get("/judges/").content.decode()
    assert "Strict" in html and 'data-trust="uncalibrated"' in html
    _calibrated(judge, published_room, endpoint, kappa=0.55)
    html = operator_client.get("/judges/").content.decode()
    assert 'data-trust="calibrated"' in html and "κ 0.55" in html


def test_creating_a_judge(operator_client: Client, endpoint: ModelEndpoint) -> None:
    response = operator_client.post(
        "/judges/new/",
        {"name": "Kind", "endpoint": endpoint.pk, "rubric": "Be kind.", "min_kappa": "0.5"},
    )
    judge = Judge.objects.get(name="Kind")
    assert response.status_code == 302 and response["Location"] == f"/judges/{judge.pk}/"
    assert judge.versions.get().rubric == "Be kind."
    bad = operator_client.post(
        "/judges/new/", {"name": "Kind", "endpoint": endpoint.pk, "rubric": "x", "min_kappa": "0.5"}
    )
    assert bad.status_code == 400 and "exists" in bad.content.decode()


def test_editing_the_rubric_makes_a_new_version_and_says_so(
    operator_client: Client, judge: Judge, endpoint: ModelEndpoint
) -> None:
    page = operator_client.get(f"/judges/{judge.pk}/edit/").content.decode()
    assert "makes a new version" in page and "creates version 2" in page
    form = {"name": "Strict", "endpoint": endpoint.pk, "rubric": judge.rubric, "min_kappa": "0.3"}
    same = operator_client.post(f"/judges/{judge.pk}/edit/", form, follow=True)
    assert "version stays the same" in same.content.decode()
    assert judge.versions.count() == 1
    changed = operator_client.post(
        f"/judges/{judge.pk}/edit/", {**form, "rubric": "Be strict."}, follow=True
    )
    html = changed.content.decode()
    assert "this is version 2, uncalibrated" in html
    assert judge.versions.count() == 2
    assert 'id="version-2"' in html and 'id="version-1"' in html


def test_the_detail_page_warns_loudly_when_uncalibrated_or_below_min_kappa(
    operator_client: Client, judge: Judge, published_room: Any, endpoint: ModelEndpoint
) -> None:
    html = operator_client.get(f"/judges/{judge.pk}/").content.decode()
    assert 'data-judge-warning="uncalibrated"' in html and 'role="alert"' in html
    _calibrated(judge, published_room, endpoint, kappa=0.2)  # min_kappa is 0.4
    html = operator_client.get(f"/judges/{judge.pk}/").content.decode()
    assert 'data-judge-warning="below_min_kappa"' in html


def test_a_calibration_shows_its_numbers_and_heatmap(
    operator_client: Client, judge: Judge, published_room: Any, endpoint: ModelEndpoint
) -> None:
    calibration = _calibrated(judge, published_room, endpoint, kappa=0.5)
    html = operator_client.get(f"/judges/{judge.pk}/").content.decode()
    assert "data-judge-warning" not in html
    assert re.search(r"data-agreement>67%", html)
    assert "0.500" in html and "(0.100\u20130.900)" in html
    assert re.search(r"data-position-bias>25%", html)
    assert re.search(r"data-unparsed>1<", html)
    figure_id = f"confusion-{calibration.pk}"
    assert f'data-plotly-figure="{figure_id}"' in html
    match = re.search(rf'<script id="{figure_id}" type="application/json">(.*?)</script>', html)
    assert match is not None
    figure = json.loads(match.group(1))
    assert figure["data"][0]["type"] == "heatmap"
    assert figure["data"][0]["z"] == [[1, 0, 0], [0, 1, 1], [0, 0, 0]]


def test_the_calibrate_form_queues_a_calibration_with_a_progress_bar(
    operator_client: Client,
    judge: Judge,
    published_room: Any,
    endpoint: ModelEndpoint,
    monkeypatch: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from training_app.tasks import run_judge_calibration

    queued: list[int] = []
    monkeypatch.setattr(run_judge_calibration, "delay", queued.append)
    test = blind_test(published_room, endpoint, [["one", "one"]])
    with django_capture_on_commit_callbacks(execute=True):
        response = operator_client.post(
            f"/judges/{judge.pk}/calibrate/", {"blind_test": test.pk}, follow=True
        )
    calibration = JudgeCalibration.objects.get()
    assert queued == [calibration.pk]
    html = response.content.decode()
    assert "Calibration of version 1 queued" in html
    assert f'data-status-url="/api/v1/judge-calibrations/{calibration.pk}/"' in html
    assert "judge_calibration.js" in html and "data-cal-bar" in html


def test_an_eval_run_page_warns_when_its_judge_is_uncalibrated(
    operator_client: Client, judge: Judge, endpoint: ModelEndpoint
) -> None:
    eval_set = EvalSet.objects.create(
        name="QA", kind=EvalSet.Kind.LIVE_STREAM_QA, file="eval_sets/x.json", content_hash="x"
    )
    run = EvalRun.objects.create(
        eval_set=eval_set, endpoint=endpoint, model_label="HAT", judge_version=judge.versions.get()
    )
    html = operator_client.get(f"/evaluation/runs/{run.pk}/").content.decode()
    assert 'data-judge-trust="uncalibrated"' in html
    assert "⚠ uncalibrated" in html
    plain = EvalRun.objects.create(eval_set=eval_set, endpoint=endpoint, model_label="Base")
    assert (
        "data-judge-trust"
        not in operator_client.get(f"/evaluation/runs/{plain.pk}/").content.decode()
    )


def test_the_eval_run_form_offers_an_optional_judge(
    operator_client: Client, judge: Judge, endpoint: ModelEndpoint, monkeypatch: Any
) -> None:
    from training_app.tasks import run_eval

    monkeypatch.setattr(run_eval, "delay", lambda _id: None)
    page = operator_client.get("/evaluation/runs/new/").content.decode()
    assert "Strict v1 (small-model)" in page
    eval_set = EvalSet.objects.create(
        name="QA",
        kind=EvalSet.Kind.LIVE_STREAM_QA,
        file="eval_sets/x.json",
        content_hash="x",
        items=2,
    )
    version = judge.versions.get()
    response = operator_client.post(
        "/evaluation/runs/new/",
        {
            "eval_set": eval_set.pk,
            "model_label": "HAT",
            "endpoint": endpoint.pk,
            "judge_version": version.pk,
        },
    )
    assert response.status_code == 302
    assert EvalRun.objects.get().judge_version == version


def test_the_list_page_does_not_query_per_judge(
    operator_client: Client,
    endpoint: ModelEndpoint,
    django_assert_max_num_queries: Any,
) -> None:
    for index in range(4):
        judge = judges.judge_create(name=f"judge {index}", endpoint=endpoint)
        judges.judge_update(judge=judge, rubric=f"rubric {index}")
    operator_client.get("/judges/")  # warm the session
    with django_assert_max_num_queries(8):
        html = operator_client.get("/judges/").content.decode()
    assert html.count('data-trust="uncalibrated"') == 4


def test_a_gold_calibration_with_no_parsed_answer_says_so_instead_of_an_empty_matrix(
    operator_client: Client, judge: Judge, published_room: Any, endpoint: ModelEndpoint
) -> None:
    # given a gold-pair calibration whose 4 answers were all unparsed (the demo's 135M judge)
    calibration = _calibrated(judge, published_room, endpoint, kappa=0.5)
    report = {**calibration.report, "n": 0, "agreement": None, "kappa": None, "unparsed": 4}
    report.update(confusion=[[0, 0, 0]] * 3, position_bias_rate=None, reference="gold")
    JudgeCalibration.objects.filter(pk=calibration.pk).update(reference="gold", report=report)
    html = operator_client.get(f"/judges/{judge.pk}/").content.decode()
    # then the page says why there are no numbers, draws no all-zero heatmap, names the gold
    # reference (not humans), and the version stays uncalibrated
    assert "data-no-parsed-answers" in html and "4 of 4 unparsed" in html
    assert f'data-plotly-figure="confusion-{calibration.pk}"' not in html
    assert "gold answer ↓ / judge →" in html and "Pairs without a human majority" not in html
    assert "gold pairs only" in html and "data-judge-warning" in html
