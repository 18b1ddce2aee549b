"""The evaluation API: operators only; sets built, uploaded and added; runs created (400s
naming the field, nothing created), read with progress, cancelled, their items paged; the
score table (JSON and CSV) and the paired comparison from executed runs; bad query
parameters are 400s naming them."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bench.gold_model import GoldModelServer
from training_app.evals.qa_set_document import loads_qa_set
from training_app.models import EvalRun, EvalSet, ModelEndpoint
from training_app.services import evals

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_broker(tmp_path, settings, monkeypatch):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "artifacts"
    from training_app.tasks import run_eval

    monkeypatch.setattr(run_eval, "delay", lambda run_id: None)


def _fields(response: Any) -> set[str]:
    return {e["field"] for e in response.json()["errors"]}


def test_merchants_and_anonymous_get_no_evaluation(merchant_api, client) -> None:
    for path in (
        "/api/v1/eval-sets/",
        "/api/v1/eval-runs/",
        "/api/v1/eval-runs/score-table/?runs=1",
    ):
        assert merchant_api.get(path).status_code == 403
        assert client.get(path).status_code in (401, 403)


def test_sets_runs_items_table_and_compare(
    operator_api, compact_room, django_assert_max_num_queries
) -> None:
    version = compact_room.harness.published_version
    # a set needs its harness version when built
    missing = operator_api.post("/api/v1/eval-sets/", {"action": "build"}, format="json")
    assert missing.status_code == 400 and "harness_version_id" in _fields(missing)
    response = operator_api.post(
        "/api/v1/eval-sets/",
        {"action": "build", "harness_version_id": version.pk, "per_type": 1, "name": "LS"},
        format="json",
    )
    assert response.status_code == 201, response.json()
    eval_set = EvalSet.objects.get(pk=response.json()["id"])
    assert response.json()["benchmark"] == "live_stream_qa"
    with eval_set.file.open("rb") as handle:
        items = loads_qa_set(handle.read()).items
    runs: dict[str, int] = {}
    for label, wrong in (("Base", {items[0].id, items[1].id}), ("HAT", set())):
        with GoldModelServer(items, wrong_items=wrong) as server:
            ModelEndpoint.objects.create(
                name=label.lower(), base_url=server.base_url, tool_mode="text"
            )
            bad = operator_api.post(
                "/api/v1/eval-runs/",
                {
                    "eval_set_id": eval_set.pk,
                    "model_label": label,
                    "endpoint": label.lower(),
                    "max_concurrency": 50,
                },
                format="json",
            )
            assert bad.status_code == 400 and _fields(bad) == {"max_concurrency"}
            created = operator_api.post(
                "/api/v1/eval-runs/",
                {"eval_set_id": eval_set.pk, "model_label": label, "endpoint": label.lower()},
                format="json",
            )
            assert created.status_code == 201 and created.json()["status"] == "queued"
            runs[label] = created.json()["id"]
            evals.eval_run_execute(runs[label])
    assert EvalRun.objects.count() == 2
    detail = operator_api.get(f"/api/v1/eval-runs/{runs['Base']}/").json()
    assert detail["status"] == "succeeded" and detail["percent"] == 100
    assert detail["summary"]["passed"] == len(items) - 2
    with django_assert_max_num_queries(8):
        page = operator_api.get(f"/api/v1/eval-runs/{runs['Base']}/items/?failed=1").json()
    assert {r["item_id"] for r in page["results"]} == {items[0].id, items[1].id}
    with django_assert_max_num_queries(8):
        assert operator_api.get("/api/v1/eval-runs/").status_code == 200
    table = operator_api.get(
        f"/api/v1/eval-runs/score-table/?runs={runs['Base']},{runs['HAT']}"
    ).json()
    cells = {r["model"]: r["cells"]["live_stream_qa"]["estimate"] for r in table["table"]["rows"]}
    assert cells == {"Base": pytest.approx(100 * (len(items) - 2) / len(items)), "HAT": 100.0}
    text = operator_api.get(
        f"/api/v1/eval-runs/score-table/?runs={runs['Base']},{runs['HAT']}&export=csv"
    ).content.decode()
    assert {r["model"] for r in csv.DictReader(io.StringIO(text))} == {"Base", "HAT"}
    compared = operator_api.get(
        f"/api/v1/eval-runs/compare/?a={runs['Base']}&b={runs['HAT']}"
    ).json()
    assert compared["mcnemar"]["only_b"] == 2 and compared["mcnemar"]["only_a"] == 0
    assert compared["difference"]["estimate"] == pytest.approx(2 / len(items))


@pytest.mark.parametrize(
    "query",
    ["", "?runs=", "?runs=abc", "?runs=1,,x", "?runs=999999", "?runs=" + ",".join(["1"] * 60)],
)
def test_bad_run_lists_are_400s_naming_the_parameter(operator_api, query) -> None:
    response = operator_api.get("/api/v1/eval-runs/score-table/" + query)
    assert response.status_code == 400 and _fields(response) == {"runs"}


def test_an_upload_with_problems_is_a_400_with_the_lines(operator_api) -> None:
    response = operator_api.post(
        "/api/v1/eval-sets/",
        {"action": "upload", "file": SimpleUploadedFile("x.jsonl", b'{"record": "header"}\n')},
        format="multipart",
    )
    assert response.status_code == 400
    assert any("line 1" in e["message"] for e in response.json()["errors"])
    assert EvalSet.objects.count() == 0


def test_cancel_a_queued_run(operator_api) -> None:
    eval_set = evals.eval_set_ifeval()
    ModelEndpoint.objects.create(name="x", base_url="http://127.0.0.1:9/v1")
    run = operator_api.post(
        "/api/v1/eval-runs/",
        {"eval_set_id": eval_set.pk, "model_label": "A", "endpoint": "x"},
        format="json",
    ).json()
    cancelled = operator_api.post(f"/api/v1/eval-runs/{run['id']}/cancel/").json()
    assert cancelled["status"] == "cancelled"
    unknown = operator_api.post(
        "/api/v1/eval-runs/",
        {"eval_set_id": eval_set.pk, "model_label": "A", "endpoint": "nope"},
        format="json",
    )
    assert unknown.status_code == 400 and _fields(unknown) == {"endpoint"}


def test_a_run_on_another_harness_version_or_variant(operator_api, compact_room, operator) -> None:
    from tests import publish_gate_edits as edits

    gate_set = edits.build_gate_set(compact_room, operator)
    published = compact_room.harness.published_version
    moved = edits.draft(
        compact_room, edits.renamed(published.content, "get_product", "product_facts"), operator
    )
    ModelEndpoint.objects.create(name="m", base_url="http://127.0.0.1:9/v1", tool_mode="text")
    body = {"eval_set_id": gate_set.pk, "model_label": "HAT", "endpoint": "m"}
    created = operator_api.post(
        "/api/v1/eval-runs/",
        {**body, "harness_version_id": moved.pk, "variant_set": "t1"},
        format="json",
    )
    assert created.status_code == 201, created.json()
    assert (created.json()["harness_version"], created.json()["variant_set"]) == (moved.pk, "t1")
    run = EvalRun.objects.get(pk=created.json()["id"])
    qa = evals.run_qa_document(run)
    assert all(i.variant is not None for i in qa.items)  # each item under a T1 variant
    for bad, field in (
        ({"harness_version_id": 2**31 - 1}, "harness_version_id"),
        ({"harness_version_id": 2**40}, "harness_version_id"),
        ({"variant_set": "t3"}, "variant_set"),
    ):
        response = operator_api.post("/api/v1/eval-runs/", {**body, **bad}, format="json")
        assert response.status_code == 400 and _fields(response) == {field}, response.json()
    ifeval = evals.eval_set_ifeval()
    refused = operator_api.post(
        "/api/v1/eval-runs/",
        {**body, "eval_set_id": ifeval.pk, "harness_version_id": moved.pk},
        format="json",
    )
    assert refused.status_code == 400 and _fields(refused) == {"harness_version_id"}
