"""Training runs (operators): the list with progress bars, the "New training run" form, the
run page (per-stage progress with ETA, live plotly curves polled from the metrics API by a
static script, logs, summary, cancel/resume, YAML export, register as endpoint) and the
compare chart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console.forms.training_runs import CompareForm, TrainingRunForm
from console.views.access import operator_required
from console.views.pagination import paginate
from console.views.vendor import plotly_js_url
from training_app import selectors
from training_app.models import TrainingRun
from training_app.services import run_config, runs

MAX_COMPARE_CHOICES = 50


@require_GET
@operator_required
def run_list(request: HttpRequest) -> HttpResponse:
    context = {"runs": paginate(request, selectors.runs_list(), 25)}
    return render(request, "training_app/run_list.html", context)


@require_http_methods(["GET", "POST"])
@operator_required
def run_create(request: HttpRequest) -> HttpResponse:
    form = TrainingRunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            run = runs.run_create(config=form.config(), created_by=request.user)
        except run_config.RunConfigError as exc:
            form.add_config_errors(exc.errors)
        else:
            messages.success(request, f"Training run #{run.pk} queued on the train queue.")
            return redirect("console:training-run-detail", run_id=run.pk)
    return render(
        request,
        "training_app/run_form.html",
        {"form": form},
        status=400 if form.errors else 200,
    )


@require_GET
@operator_required
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = selectors.run_get(run_id=run_id)
    stages = list(run.stage_runs.all())
    started = [s.started_at for s in stages if s.started_at]
    finished = [s.finished_at for s in stages if s.finished_at]
    context = {
        "run": run,
        "stages": stages,
        # a run has no times of its own: it started with its first stage and finished with
        # its last one (or, cancelled before any stage ran, when it was cancelled)
        "run_started_at": min(started) if started else None,
        "run_finished_at": (max(finished) if finished else run.updated_at)
        if run.is_finished
        else None,
        "plotly_js_url": plotly_js_url(),
        "serve_command": f"manage.py serve_run {run.pk}"
        if runs.run_final_dir(run) is not None
        else "",
        "can_resume": selectors.run_can_resume(run),
        "can_register": runs.run_final_dir(run) is not None and not run.result_endpoint_id,
    }
    return render(request, "training_app/run_detail.html", context)


@require_POST
@operator_required
def run_cancel(request: HttpRequest, run_id: int) -> HttpResponse:
    run = runs.run_cancel(run=selectors.run_get(run_id=run_id))
    messages.info(
        request,
        "Cancel requested: the running stage saves a checkpoint and stops after its step."
        if not run.is_finished
        else f"Run is {run.status}.",
    )
    return redirect("console:training-run-detail", run_id=run_id)


def _transition(
    request: HttpRequest,
    run_id: int,
    change: Callable[..., Any],
    refused: type[Exception],
    done: str,
) -> HttpResponse:
    """Apply a run state change (start, resume); a refusal becomes the page's error."""
    try:
        change(run=selectors.run_get(run_id=run_id))
    except refused as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, done)
    return redirect("console:training-run-detail", run_id=run_id)


@require_POST
@operator_required
def run_start(request: HttpRequest, run_id: int) -> HttpResponse:
    return _transition(
        request,
        run_id,
        runs.run_start,
        runs.StartError,
        "Started: the first stage is queued on the train worker.",
    )


@require_POST
@operator_required
def run_resume(request: HttpRequest, run_id: int) -> HttpResponse:
    return _transition(
        request,
        run_id,
        runs.run_resume,
        runs.ResumeError,
        "Resumed: the stage continues from its newest checkpoint.",
    )


@require_POST
@operator_required
def run_register_endpoint(request: HttpRequest, run_id: int) -> HttpResponse:
    run = selectors.run_get(run_id=run_id)
    try:
        endpoint = runs.run_register_endpoint(run=run)
    except runs.EndpointRegistrationError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            f"Endpoint {endpoint.name} registered at {endpoint.base_url}; start its server with "
            "the command on this page.",
        )
    return redirect("console:training-run-detail", run_id=run_id)


@require_GET
@operator_required
def run_config_yaml(request: HttpRequest, run_id: int) -> HttpResponse:
    run = selectors.run_get(run_id=run_id)
    response = HttpResponse(
        run_config.run_config_yaml(run), content_type="application/yaml; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="training-run-{run.pk}.yaml"'
    return response


@require_GET
@operator_required
def run_compare(request: HttpRequest) -> HttpResponse:
    choices = list(TrainingRun.objects.order_by("-pk")[:MAX_COMPARE_CHOICES])
    metrics = selectors.metric_names(runs=choices)
    form = CompareForm(request.GET or None, runs=choices, metrics=metrics)
    figure = None
    if request.GET and form.is_valid():
        series = selectors.runs_metric_compare(
            run_ids=form.cleaned_data["runs"], name=form.cleaned_data["metric"]
        )
        figure = compare_figure(series, form.cleaned_data["metric"])
    return render(
        request,
        "training_app/run_compare.html",
        {"form": form, "figure": figure, "plotly_js_url": plotly_js_url()},
        status=400 if form.errors else 200,
    )


def compare_figure(series: list[dict[str, object]], metric: str) -> dict[str, object]:
    from console.charts import training_compare_figure

    return training_compare_figure(series, metric)
