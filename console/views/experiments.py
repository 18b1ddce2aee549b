"""A/B experiments in the console: list, create / edit drafts, start / stop with
confirmation, change the allocation (a new phase), the readout page and its CSV export.

Operators own experiments; merchants see (read-only) the experiments whose rooms are all
theirs - any other experiment is a 404.
"""

from __future__ import annotations

import csv
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_http_methods

from console import charts
from console.forms.experiments import (
    AllocationForm,
    ArmFormSet,
    ExperimentForm,
    arm_initial,
    attach_errors,
    spec_from_forms,
)
from console.roles import is_operator
from console.views.access import console_user_required
from console.views.pagination import paginate
from console.views.vendor import plotly_js_url
from experiments_app import selectors, services
from experiments_app.models import Experiment
from experiments_app.readout_export import readout_csv_rows
from experiments_app.readouts import experiment_readout
from experiments_app.selectors.promotion import PromotionReport, promotion_report

EXPERIMENTS_PER_PAGE = 25


def _operator_only(request: HttpRequest) -> None:
    if not is_operator(request.user):
        raise Http404("No such page.")


@require_GET
@console_user_required
def experiment_list(request: HttpRequest) -> HttpResponse:
    page = paginate(request, selectors.experiments_visible_to(request.user), EXPERIMENTS_PER_PAGE)
    return render(request, "experiments_app/experiment_list.html", {"page_obj": page})


@require_http_methods(["GET", "POST"])
@console_user_required
def experiment_create(request: HttpRequest) -> HttpResponse:
    _operator_only(request)
    return _edit(request, None)


@require_http_methods(["GET", "POST"])
@console_user_required
def experiment_edit(request: HttpRequest, experiment_id: int) -> HttpResponse:
    experiment = selectors.experiment_get(user=request.user, experiment_id=experiment_id)
    _operator_only(request)
    if not experiment.is_draft:
        messages.error(
            request,
            "Only drafts can be edited. Change a running experiment's weights or coverage "
            "with a new phase.",
        )
        return redirect("console:experiment-detail", experiment_id=experiment.pk)
    return _edit(request, experiment)


def _edit(request: HttpRequest, experiment: Experiment | None) -> HttpResponse:
    if request.method == "POST":
        form = ExperimentForm(request.POST)
        arms = ArmFormSet(request.POST, prefix="arms")
        if form.is_valid() and arms.is_valid():
            spec = spec_from_forms(form, arms)
            try:
                if experiment is None:
                    experiment = services.experiment_create(spec=spec, created_by=request.user)
                    messages.success(request, f"Draft {experiment.name!r} saved.")
                else:
                    services.experiment_update(experiment=experiment, spec=spec)
                    messages.success(request, "Draft updated.")
            except services.ExperimentConfigError as exc:
                attach_errors(exc, form, arms)
            else:
                return redirect("console:experiment-detail", experiment_id=experiment.pk)
    elif experiment is not None:
        form = ExperimentForm(initial=ExperimentForm.initial_for(experiment))
        arms = ArmFormSet(prefix="arms", initial=arm_initial(experiment))
    else:
        form = ExperimentForm()
        arms = ArmFormSet(
            prefix="arms",
            initial=[
                {"name": "control", "kind": "react", "weight": 80},
                {"name": "treatment", "kind": "harness", "weight": 20},
            ],
        )
    has_errors = bool(form.errors or any(arms.errors) or arms.non_form_errors())
    return render(
        request,
        "experiments_app/experiment_form.html",
        {"form": form, "arms": arms, "experiment": experiment},
        status=400 if has_errors else 200,
    )


@require_GET
@console_user_required
def experiment_detail(request: HttpRequest, experiment_id: int) -> HttpResponse:
    """The readout page (a draft shows its configuration)."""
    experiment = selectors.experiment_get(user=request.user, experiment_id=experiment_id)
    phase = _phase_param(request)
    readout = experiment_readout(experiment=experiment, phase=phase)
    figures: dict[str, Any] = {}
    if readout.has_data and readout.metrics:
        figures["figure-ci"] = charts.ci_bars(readout)
        for metric in readout.metrics:
            name = metric.metric
            figures[f"figure-cumulative-{name}"] = charts.cumulative_lift(readout, name)
            figures[f"figure-daily-{name}"] = charts.daily_effects(readout, name)
    return render(
        request,
        "experiments_app/experiment_detail.html",
        {
            "experiment": experiment,
            "readout": readout,
            "figures": figures,
            "plotly_js_url": plotly_js_url(),
            "srm_flagged": readout.srm is not None and readout.srm.flagged,
            "guardrail_breaches": [b for g in readout.guardrails for b in g.breaches],
            "api_url": f"/api/v1/experiments/{experiment.pk}/readout",
            "promotion": _promotion(experiment, readout.arms),
        },
    )


def _promotion(experiment: Experiment, arms: Any) -> list[tuple[Any, PromotionReport]]:
    """Each arm on a trained checkpoint with the promotion gate's conditions."""
    rooms = list(experiment.rooms.all())
    reports = [(arm, promotion_report(arm.endpoint, rooms)) for arm in arms]
    return [(arm, report) for arm, report in reports if report.applies]


def _phase_param(request: HttpRequest) -> int | None:
    raw = request.GET.get("phase", "")
    # isdigit() would admit "²", which int() refuses.
    return int(raw) if raw.isascii() and raw.isdecimal() and len(raw) <= 5 else None


@require_GET
@console_user_required
def experiment_csv(request: HttpRequest, experiment_id: int) -> HttpResponse:
    experiment = selectors.experiment_get(user=request.user, experiment_id=experiment_id)
    readout = experiment_readout(experiment=experiment, phase=_phase_param(request))
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    name = slugify(experiment.name) or f"experiment-{experiment.pk}"
    response["Content-Disposition"] = f'attachment; filename="{name}-readout.csv"'
    writer = csv.writer(response)
    writer.writerows(readout_csv_rows(readout))
    return response


@require_http_methods(["GET", "POST"])
@console_user_required
def experiment_start(request: HttpRequest, experiment_id: int) -> HttpResponse:
    return _confirm(request, experiment_id, action="start")


@require_http_methods(["GET", "POST"])
@console_user_required
def experiment_stop(request: HttpRequest, experiment_id: int) -> HttpResponse:
    return _confirm(request, experiment_id, action="stop")


def _confirm(request: HttpRequest, experiment_id: int, *, action: str) -> HttpResponse:
    experiment = selectors.experiment_get(user=request.user, experiment_id=experiment_id)
    _operator_only(request)
    errors: list[tuple[str, str]] = []
    if request.method == "POST":
        try:
            if action == "start":
                services.experiment_start(experiment=experiment)
                messages.success(request, f"{experiment.name!r} is running: phase 1 started.")
            else:
                services.experiment_stop(experiment=experiment)
                messages.success(request, f"{experiment.name!r} stopped; the readout is final.")
        except services.ExperimentConfigError as exc:
            errors = exc.errors
        else:
            return redirect("console:experiment-detail", experiment_id=experiment.pk)
    allowed = experiment.is_draft if action == "start" else experiment.is_running
    return render(
        request,
        "experiments_app/experiment_confirm.html",
        {"experiment": experiment, "action": action, "allowed": allowed, "errors": errors},
        status=400 if errors else 200,
    )


@require_http_methods(["GET", "POST"])
@console_user_required
def experiment_allocation(request: HttpRequest, experiment_id: int) -> HttpResponse:
    experiment = selectors.experiment_get(user=request.user, experiment_id=experiment_id)
    _operator_only(request)
    if not experiment.is_running:
        messages.error(request, "Only a running experiment has an allocation to change.")
        return redirect("console:experiment-detail", experiment_id=experiment.pk)
    form = AllocationForm(request.POST or None, experiment=experiment)
    if request.method == "POST" and form.is_valid():
        try:
            phase = services.experiment_change_allocation(
                experiment=experiment, weights=form.weights(), coverage=form.coverage_bp()
            )
        except services.ExperimentConfigError as exc:
            for field, message in exc.errors:
                target = "coverage" if field == "coverage" else None
                form.add_error(target, message)
        else:
            messages.success(request, f"Phase {phase.number} started: {phase.note}.")
            return redirect("console:experiment-detail", experiment_id=experiment.pk)
    return render(
        request,
        "experiments_app/experiment_allocation.html",
        {"experiment": experiment, "form": form},
        status=400 if form.errors else 200,
    )
