"""Reads for datasets and HSA augmentation jobs: the lists, one row, a dataset's file.

Datasets are operator-level (no tenancy): the console's training pages and the API check the
operator role before calling these.
"""

from __future__ import annotations

from typing import Any

from django.http import FileResponse, Http404

from harness_app.models import HarnessVersion
from training_app.models import AugmentationJob, Dataset


def datasets_list() -> Any:
    return Dataset.objects.select_related(
        "harness_version", "harness_version__harness", "created_by"
    ).order_by("-created_at")


def dataset_get(*, dataset_id: int) -> Dataset:
    try:
        return datasets_list().get(pk=dataset_id)
    except (Dataset.DoesNotExist, ValueError, TypeError):
        raise Http404("No such dataset.") from None


def dataset_file_response(dataset: Dataset) -> FileResponse:
    """The dataset's JSONL as a download (the console and the API serve it the same way)."""
    try:
        handle = dataset.file.open("rb")
    except FileNotFoundError:
        raise Http404("The dataset's file is missing from the artifact store.") from None
    return FileResponse(
        handle,
        as_attachment=True,
        filename=f"dataset-{dataset.pk}.jsonl",
        content_type="application/jsonl",
    )


def augmentation_jobs_list() -> Any:
    return AugmentationJob.objects.select_related("source", "output", "created_by").order_by(
        "-created_at"
    )


def augmentation_job_get(*, job_id: int) -> AugmentationJob:
    try:
        return augmentation_jobs_list().get(pk=job_id)
    except (AugmentationJob.DoesNotExist, ValueError, TypeError):
        raise Http404("No such augmentation job.") from None


def harness_versions_for_datasets() -> Any:
    """Versions a dataset can be written for, newest first per harness, without content."""
    return (
        HarnessVersion.objects.select_related("harness")
        .defer("content")
        .order_by("harness__name", "-number")
    )
