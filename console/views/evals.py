"""Offline evaluation (operators): eval sets (build from a room, upload, IFEval, BFCL), eval
runs (the form, the run page with a live progress bar and per-item results), the report's
score table from picked runs (plotly chart, CSV) and paired comparisons of two runs."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console.charts import pretty_json, score_table_figure
from console.forms.evals import (
    MODEL_LABELS,
    BfclSetForm,
    CompareRunsForm,
    EvalRunForm,
    EvalSetUploadForm,
    QASetBuildForm,
    RunPickForm,
)
from console.views.access import operator_required
from console.views.pagination import paginate
from console.views.vendor import plotly_js_url
from training_app import selectors, services
from training_app.evals.score_table import ScoreTableError
from training_app.models import EvalSet
from training_app.selectors.judges import judge_trust

MAX_PICKABLE_RUNS = 200
PREVIEW_ITEMS = 5


@require_http_methods(["GET", "POST"])
@operator_required
def eval_set_list(request: HttpRequest) -> HttpResponse:
    action = request.POST.get("action", "") if request.method == "POST" else ""
    build = QASetBuildForm(request.POST if action == "build" else None, prefix="build")
    upload = EvalSetUploadForm(
        request.POST if action == "upload" else None,
        request.FILES if action == "upload" else None,
        prefix="upload",
    )
    bfcl = BfclSetForm(request.POST if action == "bfcl" else None, prefix="bfcl")
    problems: list[str] = []
    failed = False
    if action:
        try:
            eval_set = _create_set(request, action, build, upload, bfcl)
        except services.evals.EvalSetError as exc:
            problems = exc.problems
            form = {"build": build, "upload": upload}.get(action)
            field = "file" if action == "upload" else "harness_version"
            if form is not None:
                form.add_error(field, str(exc))
            else:
                bfcl.add_error("categories", str(exc))
            failed = True
        else:
            if eval_set is not None:
                messages.success(
                    request, f"Eval set {eval_set.name} stored: {eval_set.items} items."
                )
                return redirect("console:eval-set-detail", eval_set_id=eval_set.pk)
            failed = True
    context = {
        "build": build,
        "upload": upload,
        "bfcl": bfcl,
        "problems": problems,
        "sets": paginate(request, selectors.evals.eval_sets_list(), 25),
        "runs": selectors.evals.eval_runs_list()[:10],
    }
    return render(
        request, "training_app/eval_set_list.html", context, status=400 if failed else 200
    )


def _create_set(
    request: HttpRequest,
    action: str,
    build: QASetBuildForm,
    upload: EvalSetUploadForm,
    bfcl: BfclSetForm,
) -> EvalSet | None:
    """The stored set, or None when the form was invalid (its errors are on the form)."""
    if action == "ifeval":
        return services.evals.eval_set_ifeval(created_by=request.user)
    if action == "build" and build.is_valid():
        data = build.cleaned_data
        return services.evals.eval_set_build_qa(
            harness_version=data["harness_version"],
            name=data["name"],
            variant_set=data["variant_set"] or "",
            per_type=data["per_type"],
            seed=data["seed"],
            created_by=request.user,
        )
    if action == "upload" and upload.is_valid():
        return services.evals.eval_set_upload(
            name=upload.cleaned_data["name"],
            data=upload.cleaned_data["file"].read(),
            created_by=request.user,
        )
    if action == "bfcl" and bfcl.is_valid():
        return services.evals.eval_set_bfcl(
            categories=bfcl.cleaned_data["categories"],
            per_category=bfcl.cleaned_data["per_category"],
            created_by=request.user,
        )
    return None


@require_GET
@operator_required
def eval_set_detail(request: HttpRequest, eval_set_id: int) -> HttpResponse:
    eval_set = selectors.evals.eval_set_get(eval_set_id=eval_set_id)
    preview: list[str] = []
    try:
        with eval_set.file.open("rb") as handle:
            for line in handle:
                text = line.decode("utf-8", "replace")
                if '"record":"item"' in text or eval_set.kind in ("ifeval", "bfcl"):
                    preview.append(text[:600])
                if len(preview) >= PREVIEW_ITEMS:
                    break
    except FileNotFoundError:
        pass
    context = {
        "eval_set": eval_set,
        "preview": preview,
        "runs": selectors.evals.eval_runs_list().filter(eval_set=eval_set)[:50],
    }
    return render(request, "training_app/eval_set_detail.html", context)


@require_http_methods(["GET", "POST"])
@operator_required
def eval_run_create(request: HttpRequest) -> HttpResponse:
    initial: dict[str, Any] = {"model_label": MODEL_LABELS[0]}
    if request.GET.get("set", "").isdigit():
        initial["eval_set"] = int(request.GET["set"])
    form = EvalRunForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = services.evals.eval_run_create(
                eval_set=data["eval_set"],
                model_label=data["model_label"],
                endpoint=data["endpoint"],
                local_model_dir=data["local_model_dir"].strip(),
                max_tokens=data["max_tokens"],
                max_concurrency=data["max_concurrency"],
                item_limit=data["item_limit"],
                judge_version=data.get("judge_version"),
                created_by=request.user,
            )
        except services.evals.EvalRunError as exc:
            named = "judge_version" if exc.field == "judge_version_id" else exc.field
            field = named if named in form.fields else None
            form.add_error(field, str(exc))
        else:
            messages.success(request, f"Eval run #{run.pk} queued on the eval queue.")
            return redirect("console:eval-run-detail", run_id=run.pk)
    return render(
        request,
        "training_app/eval_run_form.html",
        {"form": form},
        status=400 if form.errors else 200,
    )


@require_GET
@operator_required
def eval_run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = selectors.evals.eval_run_get(run_id=run_id)
    failed_only = request.GET.get("failed") == "1"
    items = paginate(request, selectors.evals.eval_run_items(run, failed_only=failed_only), 25)
    context = {
        "run": run,
        "items": items,
        "failed_only": failed_only,
        "headline": selectors.evals.summary_cell(run),
        "summary": run.summary or {},
        "versions_json": pretty_json(run.versions),
        "generation_json": pretty_json(run.generation),
        "judge_trust": judge_trust(run.judge_version) if run.judge_version else None,
    }
    return render(request, "training_app/eval_run_detail.html", context)


@require_GET
@operator_required
def eval_run_status(request: HttpRequest, run_id: int) -> JsonResponse:
    """What the run page's progress bar polls."""
    run = selectors.evals.eval_run_get(run_id=run_id)
    return JsonResponse(
        {
            "status": run.status,
            "progress_done": run.progress_done,
            "progress_total": run.progress_total,
            "percent": run.percent,
            "finished": run.is_finished,
        }
    )


@require_POST
@operator_required
def eval_run_cancel(request: HttpRequest, run_id: int) -> HttpResponse:
    run = services.evals.eval_run_cancel(run=selectors.evals.eval_run_get(run_id=run_id))
    messages.info(
        request,
        "Cancel requested: items in flight finish, no new item starts."
        if not run.is_finished
        else f"Run is {run.status}.",
    )
    return redirect("console:eval-run-detail", run_id=run.pk)


@require_GET
@operator_required
def eval_score_table(request: HttpRequest) -> HttpResponse:
    finished = list(selectors.evals.eval_runs_finished()[:MAX_PICKABLE_RUNS])
    form = RunPickForm(request.GET if "runs" in request.GET else None, runs=finished)
    context: dict[str, Any] = {"form": form, "plotly_js_url": plotly_js_url()}
    status = 200
    if form.is_bound:
        if form.is_valid():
            chosen = [r for r in finished if r.pk in set(form.cleaned_data["runs"])]
            try:
                report = selectors.evals.score_report(chosen)
            except ScoreTableError as exc:
                form.add_error("runs", str(exc))
                status = 400
            else:
                if request.GET.get("format") == "csv":
                    response = HttpResponse(report.table.to_csv(), content_type="text/csv")
                    response["Content-Disposition"] = 'attachment; filename="score-table.csv"'
                    return response
                table = report.table.to_dict()
                context.update(
                    report=report,
                    table=table,
                    rows=[
                        {
                            "model": row["model"],
                            "cells": [
                                (c["key"], row["cells"].get(c["key"])) for c in table["columns"]
                            ],
                        }
                        for row in table["rows"]
                    ],
                    figure=score_table_figure(table),
                    csv_query=request.GET.urlencode() + "&format=csv",
                )
        else:
            status = 400
    return render(request, "training_app/eval_score_table.html", context, status=status)


@require_GET
@operator_required
def eval_compare(request: HttpRequest) -> HttpResponse:
    finished = list(selectors.evals.eval_runs_finished()[:MAX_PICKABLE_RUNS])
    form = CompareRunsForm(request.GET if "a" in request.GET else None, runs=finished)
    context: dict[str, Any] = {"form": form}
    status = 200
    if form.is_bound:
        if form.is_valid():
            by_pk = {r.pk: r for r in finished}
            try:
                context["comparison"] = selectors.evals.eval_runs_compare(
                    run_a=by_pk[form.cleaned_data["a"]], run_b=by_pk[form.cleaned_data["b"]]
                )
            except selectors.evals.ComparisonError as exc:
                form.add_error("b", str(exc))
                status = 400
        else:
            status = 400
    return render(request, "training_app/eval_compare.html", context, status=status)
