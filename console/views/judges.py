"""Agent-as-a-Judge in the console (operators only): the judges with each current
version's trust, a new judge, a judge's page (versions, their calibrations with agreement,
kappa and the confusion heatmap, the calibrate form with a progress bar, a loud warning when
the current version is uncalibrated or below min_kappa) and the edit page (a rubric or model
change makes a new version)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from console.charts import confusion_heatmap
from console.forms.judges import CalibrationForm, JudgeForm
from console.views.access import operator_required
from console.views.vendor import plotly_js_url
from training_app.models import JudgeCalibration
from training_app.selectors import judges as judge_selectors
from training_app.services import judges as judge_services

_FIELDS = {"endpoint_id": "endpoint", "blind_test_id": "blind_test"}


@require_http_methods(["GET"])
@operator_required
def judge_list(request: HttpRequest) -> HttpResponse:
    judges = list(judge_selectors.judges_list())
    currents = {j.pk: judge_selectors.current_version(j) for j in judges}
    trusts = judge_selectors.judge_trusts(v for v in currents.values() if v is not None)
    rows = [
        {
            "judge": j,
            "version": currents[j.pk],
            "trust": trusts.get(currents[j.pk].pk) if currents[j.pk] else None,  # type: ignore[union-attr]
        }
        for j in judges
    ]
    return render(request, "training_app/judge_list.html", {"rows": rows})


@require_http_methods(["GET", "POST"])
@operator_required
def judge_create(request: HttpRequest) -> HttpResponse:
    form = JudgeForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            judge = judge_services.judge_create(created_by=request.user, **form.cleaned_data)
        except judge_services.JudgeError as exc:
            form.add_error(_FIELDS.get(exc.field, exc.field), str(exc))
        else:
            messages.success(request, f"Judge {judge.name} created as version 1.")
            return redirect("console:judge-detail", judge_id=judge.pk)
    return render(
        request,
        "training_app/judge_form.html",
        {"form": form, "judge": None},
        status=400 if form.errors else 200,
    )


@require_http_methods(["GET", "POST"])
@operator_required
def judge_edit(request: HttpRequest, judge_id: int) -> HttpResponse:
    judge = judge_selectors.judge_get(judge_id=judge_id)
    form = JudgeForm(
        request.POST if request.method == "POST" else None, initial=JudgeForm.initial_from(judge)
    )
    if request.method == "POST" and form.is_valid():
        try:
            judge, version = judge_services.judge_update(
                judge=judge, updated_by=request.user, **form.cleaned_data
            )
        except judge_services.JudgeError as exc:
            form.add_error(_FIELDS.get(exc.field, exc.field), str(exc))
        else:
            if version is not None:
                messages.warning(
                    request,
                    f"The rubric or model changed: this is version {version.number}, "
                    "uncalibrated until you calibrate it.",
                )
            else:
                messages.success(
                    request,
                    "Saved; the rubric and model are unchanged, so the version stays the same.",
                )
            return redirect("console:judge-detail", judge_id=judge.pk)
    current = judge_selectors.current_version(judge)
    return render(
        request,
        "training_app/judge_form.html",
        {"form": form, "judge": judge, "current": current},
        status=400 if form.errors else 200,
    )


def _calibration_row(calibration: JudgeCalibration) -> dict[str, Any]:
    report = calibration.report or {}
    figure = None
    if calibration.status == JudgeCalibration.Status.SUCCEEDED and report.get("confusion"):
        figure = confusion_heatmap(report)
    return {
        "calibration": calibration,
        "report": report,
        "figure": figure,
        "figure_id": f"confusion-{calibration.pk}",
        "labels": report.get("labels", []),
        "confusion_rows": list(
            zip(report.get("labels", []), report.get("confusion", []), strict=False)
        ),
    }


@require_http_methods(["GET"])
@operator_required
def judge_detail(request: HttpRequest, judge_id: int) -> HttpResponse:
    judge = judge_selectors.judge_get(judge_id=judge_id)
    versions = list(judge_selectors.judge_versions(judge))
    trusts = judge_selectors.judge_trusts(versions)
    rows: list[dict[str, Any]] = [
        {
            "version": v,
            "trust": trusts[v.pk],
            "calibrations": [_calibration_row(c) for c in v.calibrations.all()],
        }
        for v in versions
    ]
    current = versions[0] if versions else None
    running = next(
        (
            c
            for v in versions
            for c in v.calibrations.all()
            if c.status in (JudgeCalibration.Status.QUEUED, JudgeCalibration.Status.RUNNING)
        ),
        None,
    )
    context = {
        "judge": judge,
        "rows": rows,
        "current": current,
        "current_trust": trusts[current.pk] if current else None,
        "form": CalibrationForm(),
        "running": running,
        "has_figures": any(c["figure"] for r in rows for c in r["calibrations"]),
        "plotly_js_url": plotly_js_url(),
    }
    return render(request, "training_app/judge_detail.html", context)


@require_POST
@operator_required
def judge_calibrate(request: HttpRequest, judge_id: int) -> HttpResponse:
    judge = judge_selectors.judge_get(judge_id=judge_id)
    form = CalibrationForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose a blind test with labels (or gold pairs).")
        return redirect("console:judge-detail", judge_id=judge.pk)
    version = judge_services.judge_version_for_use(judge=judge, created_by=request.user)
    try:
        judge_services.judge_calibration_create(
            version=version,
            blind_test=form.cleaned_data["blind_test"],
            reference=form.cleaned_data["reference"] or "human",
            created_by=request.user,
        )
    except judge_services.JudgeError as exc:
        messages.error(request, f"No calibration started: {exc}.")
    else:
        messages.success(request, f"Calibration of version {version.number} queued.")
    return redirect("console:judge-detail", judge_id=judge.pk)
