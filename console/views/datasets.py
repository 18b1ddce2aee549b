"""Training data (operators): gold datasets, HSA augmentation jobs with a live progress bar,
and downloads of the JSONL artifacts."""

from __future__ import annotations

from django.contrib import messages
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console.forms.datasets import AugmentationJobForm, GoldDatasetForm
from console.views.access import operator_required
from console.views.pagination import paginate
from training_app import selectors, services
from training_app.models import Dataset

PREVIEW_LINES = 5


@require_http_methods(["GET", "POST"])
@operator_required
def dataset_list(request: HttpRequest) -> HttpResponse:
    form = GoldDatasetForm(
        request.POST or None,
        request.FILES or None,
        versions=selectors.harness_versions_for_datasets(),
    )
    errors: list[services.LineError] = []
    if request.method == "POST" and form.is_valid():
        try:
            dataset = services.dataset_create_gold(
                harness_version=form.cleaned_data["harness_version"],
                name=form.cleaned_data["name"],
                data=form.cleaned_data["file"].read(),
                created_by=request.user,
            )
        except services.DatasetImportError as exc:
            errors = exc.errors
            form.add_error("file", f"{len(exc.errors)} line(s) do not fit the harness; see below")
        else:
            messages.success(
                request, f"Dataset {dataset.name} stored: {dataset.examples} examples."
            )
            return redirect("console:dataset-detail", dataset_id=dataset.pk)
    context = {
        "form": form,
        "line_errors": errors,
        "datasets": paginate(request, selectors.datasets_list(), 25),
        "jobs": selectors.augmentation_jobs_list()[:10],
    }
    return render(
        request, "training_app/dataset_list.html", context, status=400 if form.errors else 200
    )


@require_http_methods(["GET", "POST"])
@operator_required
def dataset_detail(request: HttpRequest, dataset_id: int) -> HttpResponse:
    dataset = selectors.dataset_get(dataset_id=dataset_id)
    form = AugmentationJobForm(request.POST or None)
    if request.method == "POST":
        if dataset.kind != Dataset.Kind.GOLD:
            raise Http404("Only gold datasets are augmented.")
        if form.is_valid():
            job = services.augmentation_job_create(
                source=dataset, created_by=request.user, **form.cleaned_data
            )
            return redirect("console:augmentation-job", job_id=job.pk)
    try:
        with dataset.file.open("rb") as handle:
            head = [handle.readline().decode("utf-8", "replace") for _ in range(PREVIEW_LINES)]
    except FileNotFoundError:
        head = []
    context = {
        "dataset": dataset,
        "form": form,
        "head": [line for line in head if line],
        "jobs": dataset.augmentation_jobs.order_by("-created_at")[:20],
    }
    return render(
        request, "training_app/dataset_detail.html", context, status=400 if form.errors else 200
    )


@require_GET
@operator_required
def dataset_download(request: HttpRequest, dataset_id: int) -> FileResponse:
    return selectors.dataset_file_response(selectors.dataset_get(dataset_id=dataset_id))


@require_GET
@operator_required
def augmentation_job(request: HttpRequest, job_id: int) -> HttpResponse:
    job = selectors.augmentation_job_get(job_id=job_id)
    return render(request, "training_app/augmentation_job.html", {"job": job})


@require_POST
@operator_required
def augmentation_job_cancel(request: HttpRequest, job_id: int) -> HttpResponse:
    job = services.augmentation_job_cancel(job=selectors.augmentation_job_get(job_id=job_id))
    messages.info(
        request,
        "Cancel requested: the job stops after the example it is on."
        if not job.is_finished
        else f"Job is {job.status}.",
    )
    return redirect("console:augmentation-job", job_id=job.pk)
