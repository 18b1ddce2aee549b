"""Evaluation pages: operators only; a set built from the form; a run started from the form
(errors on the named field), executed against an instant gold endpoint, its page with the
score and per-item results; the score table from picked runs (numbers, CSV, refusal of two
runs for one model and benchmark); the paired comparison."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from bench.gold_model import GoldModelServer
from training_app.evals.qa_set_document import loads_qa_set
from training_app.models import EvalRun, EvalSet, ModelEndpoint
from training_app.services import evals

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def artifacts(tmp_path, settings, monkeypatch):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "artifacts"
    from training_app.tasks import run_eval

    monkeypatch.setattr(run_eval, "delay", lambda run_id: None)


def _items(eval_set: EvalSet) -> Any:
    with eval_set.file.open("rb") as handle:
        return loads_qa_set(handle.read()).items


@pytest.mark.parametrize(
    "path",
    ["/evaluation/", "/evaluation/runs/new/", "/evaluation/score-table/", "/evaluation/compare/"],
)
def test_only_operators_see_the_evaluation_pages(
    path, operator_client, merchant_client, labeler_client
) -> None:
    assert operator_client.get(path).status_code == 200
    for client in (merchant_client, labeler_client):
        assert client.get(path).status_code in (403, 404)


def test_build_a_set_then_run_it_and_read_the_results(operator_client, compact_room) -> None:
    version = compact_room.harness.published_version
    # when the operator builds a small Live-Stream set from the form
    response = operator_client.post(
        "/evaluation/",
        {
            "action": "build",
            "build-name": "Small LS",
            "build-harness_version": version.pk,
            "build-variant_set": "",
            "build-per_type": 1,
            "build-seed": 0,
        },
    )
    eval_set = EvalSet.objects.get()
    assert (
        response.status_code == 302 and response["Location"] == f"/evaluation/sets/{eval_set.pk}/"
    )
    items = _items(eval_set)
    wrong = {items[0].id}
    with GoldModelServer(items, wrong_items=wrong) as server:
        endpoint = ModelEndpoint.objects.create(
            name="gold", base_url=server.base_url, tool_mode="text"
        )
        # a bad setting goes back on its field, nothing is created
        bad = operator_client.post(
            "/evaluation/runs/new/",
            {
                "eval_set": eval_set.pk,
                "model_label": "HAT",
                "endpoint": endpoint.pk,
                "max_concurrency": 60,
            },
        )
        assert bad.status_code == 400 and EvalRun.objects.count() == 0
        assert "takes at most 8 requests at once" in bad.content.decode()
        response = operator_client.post(
            "/evaluation/runs/new/",
            {"eval_set": eval_set.pk, "model_label": "HAT", "endpoint": endpoint.pk},
        )
        run = EvalRun.objects.get()
        assert response["Location"] == f"/evaluation/runs/{run.pk}/"
        status = operator_client.get(f"/evaluation/runs/{run.pk}/status/").json()
        assert status == {
            "status": "queued",
            "progress_done": 0,
            "progress_total": len(items),
            "percent": 0,
            "finished": False,
        }
        evals.eval_run_execute(run.pk)
    page = operator_client.get(f"/evaluation/runs/{run.pk}/").content.decode()
    n = len(items)
    expected = round(100 * (n - 1) / n, 1)
    assert f"<b>{expected}</b>" in page
    assert f"{n - 1} of {n} items passed" in page
    assert items[0].id in page and "reply_length" in page
    failed = operator_client.get(f"/evaluation/runs/{run.pk}/?failed=1").content.decode()
    assert items[0].id in failed and items[1].id not in failed
    assert operator_client.get(f"/evaluation/runs/{run.pk}/status/").json()["finished"] is True


def test_an_upload_with_bad_lines_lists_them_under_the_field(operator_client) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = operator_client.post(
        "/evaluation/",
        {
            "action": "upload",
            "upload-name": "bad",
            "upload-file": SimpleUploadedFile(
                "bad.jsonl", b'{"record": "header"}\n{"record": "item"}\n'
            ),
        },
    )
    body = response.content.decode()
    assert response.status_code == 400 and "line 1" in body
    assert EvalSet.objects.count() == 0


def test_score_table_and_compare_from_runs(operator_client, compact_room) -> None:
    eval_set = evals.eval_set_build_qa(
        harness_version=compact_room.harness.published_version, name="LS", per_type=1
    )
    items = _items(eval_set)
    runs = {}
    for label, wrong in (("Base", {i.id for i in items[:4]}), ("HAT", set())):
        with GoldModelServer(items, wrong_items=wrong) as server:
            endpoint = ModelEndpoint.objects.create(
                name=label.lower(), base_url=server.base_url, tool_mode="text"
            )
            run = evals.eval_run_create(eval_set=eval_set, model_label=label, endpoint=endpoint)
            evals.eval_run_execute(run.pk)
            runs[label] = run
    query = f"?runs={runs['Base'].pk}&runs={runs['HAT'].pk}"
    page = operator_client.get("/evaluation/score-table/" + query).content.decode()
    base_score = 100 * (len(items) - 4) / len(items)
    assert f'data-cell="Base:live_stream_qa"><b>{base_score:.1f}</b>' in page
    assert 'data-cell="HAT:live_stream_qa"><b>100.0</b>' in page
    assert 'data-plotly-figure="score-table-figure"' in page
    rows = list(
        csv.DictReader(
            io.StringIO(
                operator_client.get(
                    "/evaluation/score-table/" + query + "&format=csv"
                ).content.decode()
            )
        )
    )
    assert {r["model"]: float(r["live_stream_qa"]) for r in rows} == {
        "Base": pytest.approx(base_score, abs=0.01),
        "HAT": 100.0,
    }
    # two runs for one model and benchmark are refused, naming them
    twice = evals.eval_run_create(
        eval_set=eval_set, model_label="HAT", endpoint=runs["HAT"].endpoint
    )
    with GoldModelServer(items) as server:
        ModelEndpoint.objects.filter(pk=runs["HAT"].endpoint_id).update(base_url=server.base_url)
        evals.eval_run_execute(twice.pk)
    refused = operator_client.get(f"/evaluation/score-table/{query}&runs={twice.pk}")
    assert refused.status_code == 400 and f"#{twice.pk}" in refused.content.decode()
    # paired comparison: HAT passes the 4 items Base failed
    compared = operator_client.get(
        f"/evaluation/compare/?a={runs['Base'].pk}&b={runs['HAT'].pk}"
    ).content.decode()
    assert "4 items only B passed, 0 only A passed" in compared
