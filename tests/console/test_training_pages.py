"""Training data pages: gold upload with line errors, augmentation jobs with progress, and
the HSA preview (side by side, renames highlighted)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from training_app import services
from training_app.models import AugmentationJob, Dataset

pytestmark = pytest.mark.django_db
GOLD = (
    Path(__file__).resolve().parents[2] / "training_app" / "demo_data" / "gold_trajectories.jsonl"
)


@pytest.fixture(autouse=True)
def artifacts(tmp_path, settings):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "artifacts"


def test_operator_uploads_gold_and_starts_a_job(
    client, operator, published_room, django_capture_on_commit_callbacks
):
    client.force_login(operator)
    version = published_room.harness.published_version
    response = client.post(
        "/training/datasets/",
        {
            "name": "demo gold",
            "harness_version": version.pk,
            "file": SimpleUploadedFile("gold.jsonl", GOLD.read_bytes()),
        },
    )
    dataset = Dataset.objects.get()
    assert (
        response.status_code == 302 and response["Location"] == f"/training/datasets/{dataset.pk}/"
    )
    page = client.get(response["Location"]).content.decode()
    assert "82 examples" in page and "Start augmentation" in page
    with django_capture_on_commit_callbacks(execute=False):
        started = client.post(
            f"/training/datasets/{dataset.pk}/", {"policy": "hsa-train", "seed": 3, "variants": 2}
        )
    job = AugmentationJob.objects.get()
    assert started["Location"] == f"/training/jobs/{job.pk}/"
    job_page = client.get(started["Location"]).content.decode()
    assert 'role="progressbar"' in job_page and "0 / 164" in job_page
    assert f"/api/v1/augmentation-jobs/{job.pk}/" in job_page  # polled for progress
    services.augmentation_job_run(job.pk)
    done = client.get(started["Location"]).content.decode()
    assert "164 / 164" in done and "width: 100%" in done and "Succeeded" in done


def test_bad_gold_lines_are_listed_with_line_numbers(client, operator, published_room):
    client.force_login(operator)
    lines = GOLD.read_text().splitlines()
    data = "\n".join([lines[0], lines[1].replace('"get_product"', '"get_price"')]).encode()
    response = client.post(
        "/training/datasets/",
        {
            "name": "bad",
            "harness_version": published_room.harness.published_version.pk,
            "file": SimpleUploadedFile("gold.jsonl", data),
        },
    )
    assert response.status_code == 400
    body = response.content.decode()
    assert "1 line(s) do not fit the harness" in body and "get_price" in body
    assert Dataset.objects.count() == 0


def test_cancel_button_requests_a_cooperative_stop(client, operator, published_room):
    client.force_login(operator)
    gold = services.dataset_create_gold(
        harness_version=published_room.harness.published_version,
        name="g",
        data=GOLD.read_bytes(),
        created_by=operator,
    )
    job = services.augmentation_job_create(
        source=gold, policy="hsa-train", seed=0, variants=1, created_by=operator
    )
    response = client.post(f"/training/jobs/{job.pk}/cancel/")
    assert response.status_code == 302
    job.refresh_from_db()
    assert job.status == "cancelled" and job.cancel_requested


def test_training_pages_do_not_exist_for_merchants(client, merchant):
    client.force_login(merchant)
    assert client.get("/training/datasets/").status_code == 404


def test_hsa_preview_shows_both_sides_and_the_mapping(
    client, merchant, published_room, other_merchant
):
    client.force_login(merchant)
    url = f"/harnesses/{published_room.harness.pk}/versions/1/hsa/"
    page = client.get(url, {"transforms": ["tool_schemas.rename_tools"], "seed": 4})
    assert page.status_code == 200
    body = page.content.decode()
    assert body.count('<pre class="code yaml"') == 2
    assert '<mark class="old">get_product</mark>' in body  # the mapping table highlights renames
    assert "tool get_product removed" in body or "removed" in body
    bad = client.get(url, {"transforms": ["nope"], "seed": 1})
    assert bad.status_code == 400
    client.force_login(other_merchant)
    assert client.get(url).status_code == 404
