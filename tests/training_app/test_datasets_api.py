"""Gold datasets and HSA augmentation jobs through the API and services."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from harness_app.harness.serialization import harness_from_dict
from harness_app.hsa import trajectory_from_dict, verify_pair
from training_app import services
from training_app.models import AugmentationJob, Dataset

pytestmark = pytest.mark.django_db
GOLD = (
    Path(__file__).resolve().parents[2] / "training_app" / "demo_data" / "gold_trajectories.jsonl"
)


@pytest.fixture(autouse=True)
def artifacts(tmp_path, settings):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "artifacts"


def upload(client, room, data: bytes, name="demo gold"):  # type: ignore[no-untyped-def]
    f = io.BytesIO(data)
    f.name = "gold.jsonl"
    return client.post(
        "/api/v1/datasets/",
        {"name": name, "harness_id": room.harness.pk, "harness_version": 1, "file": f},
        format="multipart",
    )


def test_gold_upload_verifies_every_line_against_the_version(published_room, operator_api):
    response = upload(operator_api, published_room, GOLD.read_bytes())
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["kind"], body["examples"], body["harness_version"]) == ("gold", 82, 1)
    download = operator_api.get(f"/api/v1/datasets/{body['id']}/download/")
    assert download.status_code == 200
    assert b"".join(download.streaming_content) == GOLD.read_bytes()


def test_bad_lines_are_named_and_nothing_is_saved(published_room, operator_api):
    lines = GOLD.read_text().splitlines()[:3]
    bad_tool = json.loads(lines[1])
    bad_tool["tool_calls"][0]["name"] = "get_price"
    bad_args = json.loads(lines[2])
    bad_args["tool_calls"][0]["arguments"] = {"sku": 5}
    data = "\n".join([lines[0], json.dumps(bad_tool), json.dumps(bad_args), "{not json"]).encode()
    response = upload(operator_api, published_room, data)
    assert response.status_code == 400
    errors = {e["line"]: e["message"] for e in response.json()["errors"]}
    assert set(errors) == {2, 3, 4}
    assert "get_price" in errors[2]
    assert Dataset.objects.count() == 0


def test_merchants_cannot_reach_training(published_room, merchant_api):
    assert upload(merchant_api, published_room, GOLD.read_bytes()).status_code == 403
    assert merchant_api.get("/api/v1/augmentation-jobs/").status_code == 403


def test_augmentation_job_writes_verified_examples(
    published_room, operator, django_capture_on_commit_callbacks
):
    version = published_room.harness.published_version
    gold = services.dataset_create_gold(
        harness_version=version, name="gold", data=GOLD.read_bytes(), created_by=operator
    )
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        job = services.augmentation_job_create(
            source=gold, policy="hsa-train", seed=11, variants=2, created_by=operator
        )
    assert len(callbacks) == 1  # enqueued only after commit
    services.augmentation_job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "succeeded" and job.progress_done == job.progress_total == 164
    output = job.output
    assert (
        output.kind == "augmented"
        and output.source == gold
        and output.examples == 164 - job.failures
    )
    lines = output.file.open("rb").read().decode().splitlines()
    assert len(lines) == output.examples and job.failures == 0
    for line in lines[:40]:
        example = json.loads(line)
        harness = harness_from_dict(example["harness"])
        assert verify_pair(harness, trajectory_from_dict(example["trajectory"])) == []
        assert example["provenance"]["policy"] == "hsa-train" and example["provenance"]["verified"]


def test_same_seed_gives_the_same_bytes(published_room, operator):
    version = published_room.harness.published_version
    gold = services.dataset_create_gold(
        harness_version=version, name="gold", data=GOLD.read_bytes(), created_by=operator
    )
    shas = []
    for _ in range(2):
        job = services.augmentation_job_create(
            source=gold, policy="harness-variant-t1", seed=5, variants=1, created_by=operator
        )
        services.augmentation_job_run(job.pk)
        job.refresh_from_db()
        shas.append(job.output.sha256)
    assert shas[0] == shas[1]


def test_cancel_stops_between_examples(published_room, operator):
    version = published_room.harness.published_version
    gold = services.dataset_create_gold(
        harness_version=version, name="gold", data=GOLD.read_bytes(), created_by=operator
    )
    job = services.augmentation_job_create(
        source=gold, policy="hsa-train", seed=1, variants=1, created_by=operator
    )

    def cancel_after_first_progress(done: int, total: int) -> None:
        AugmentationJob.objects.filter(pk=job.pk).update(cancel_requested=True)

    services.augmentation_job_run(job.pk, on_progress=cancel_after_first_progress)
    job.refresh_from_db()
    assert job.status == "cancelled" and job.output is None
    assert 0 < job.progress_done < job.progress_total
    assert Dataset.objects.filter(kind="augmented").count() == 0


def test_job_api_validates_and_reports_progress(published_room, operator_api, operator):
    version = published_room.harness.published_version
    gold = services.dataset_create_gold(
        harness_version=version, name="gold", data=GOLD.read_bytes(), created_by=operator
    )
    bad = operator_api.post(
        "/api/v1/augmentation-jobs/", {"dataset": gold.pk, "policy": "nope"}, format="json"
    )
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "policy"
    created = operator_api.post(
        "/api/v1/augmentation-jobs/",
        {"dataset": gold.pk, "policy": "hsa-heldout", "seed": 3},
        format="json",
    )
    assert created.status_code == 201
    status = operator_api.get(f"/api/v1/augmentation-jobs/{created.json()['id']}/").json()
    assert (status["status"], status["progress_total"], status["percent"]) == ("queued", 82, 0)
    cancelled = operator_api.post(
        f"/api/v1/augmentation-jobs/{created.json()['id']}/cancel/"
    ).json()
    assert cancelled["status"] == "cancelled"


def test_hsa_preview_shows_mapping_and_diff(published_room, merchant_api, other_merchant):
    url = f"/api/v1/harnesses/{published_room.harness.pk}/versions/1/hsa-preview/"
    response = merchant_api.post(
        url, {"transforms": ["tool_schemas.rename_tools"], "seed": 2}, format="json"
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    renames = body["mapping"]["tool_renames"]
    assert renames and set(renames) <= {
        "get_product",
        "check_stock",
        "list_coupons",
        "get_shipping",
    }
    augmented_tools = {t["name"] for t in body["augmented"]["tools"]}
    assert set(renames.values()) <= augmented_tools
    assert any("tool" in change for change in body["changes"])
    again = merchant_api.post(
        url, {"transforms": ["tool_schemas.rename_tools"], "seed": 2}, format="json"
    )
    assert again.json() == body  # same seed, same preview
    bad = merchant_api.post(url, {"transforms": ["nope"]}, format="json")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "transforms"
    from tests.conftest import _client_for

    assert (
        _client_for(other_merchant).post(url, {"policy": "hsa-train"}, format="json").status_code
        == 404
    )


def test_deeply_nested_or_nul_lines_are_named_and_nothing_is_saved(published_room, operator_api):
    first = GOLD.read_text().splitlines()[0]
    nul = json.loads(first)
    nul["final_answer"] += "\x00"
    data = "\n".join([first, "[" * 100_000 + "]" * 100_000, json.dumps(nul)]).encode()
    response = upload(operator_api, published_room, data)
    assert response.status_code == 400, response.content[:300]
    errors = {e["line"]: e["message"] for e in response.json()["errors"]}
    assert set(errors) == {2, 3}
    assert errors[2] == "[0]" * 64 + ": nested deeper than 64 levels of arrays/objects"
    assert errors[3] == "final_answer: must not contain the NUL character (U+0000)"
    assert Dataset.objects.count() == 0
