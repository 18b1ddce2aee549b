"""Latency replays of a room: the list with the form that starts one (a job on the ``eval``
worker, ``services.latency_replay``), and one report's status and progress bar (polling
``latency-status``), cancel button, percentile table and plotly charts."""

from __future__ import annotations

import math
from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console.charts import (
    latency_by_concurrency,
    latency_histogram,
    latency_share_under_deadline,
    latency_ttft_by_concurrency,
)
from console.forms.latency import LatencyReplayForm
from console.views.access import console_user_required
from console.views.pagination import paginate
from console.views.vendor import plotly_js_url
from experiments_app import selectors as report_selectors
from experiments_app.latency import DEADLINE_MS
from experiments_app.services import latency_replay
from harness_app import selectors

REPORTS_PER_PAGE = 25


@require_http_methods(["GET", "POST"])
@console_user_required
def latency_list(request: HttpRequest, room_id: int) -> HttpResponse:
    room = selectors.room_get(user=request.user, room_id=room_id)
    form = _replay_form(request, room)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        upload = data.get("upload") if data["request_set"] == "upload" else None
        try:
            report = latency_replay.latency_replay_queue(
                room=room,
                endpoint=data["endpoint"],
                concurrency=data["concurrency"],
                request_set=data["request_set"],
                upload=upload.read() if upload is not None else None,
                upload_name=upload.name if upload is not None else "",
                limit=data.get("limit"),
                arm=data.get("arm") or "",
                created_by=request.user,
            )
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            messages.success(request, f"Latency replay #{report.pk} queued on the eval worker.")
            return redirect("console:latency-detail", room_id=room.pk, report_id=report.pk)
    page = paginate(request, report_selectors.latency_reports_of_room(room), REPORTS_PER_PAGE)
    for report in page:
        report.levels = _levels(report.results)  # type: ignore[attr-defined]
    return render(
        request,
        "experiments_app/latency_list.html",
        {"room": room, "page_obj": page, "form": form},
        status=400 if form.errors else 200,
    )


def _replay_form(request: HttpRequest, room: Any) -> LatencyReplayForm:
    endpoints = report_selectors.latency_replay_endpoints(room=room, user=request.user)
    initial = report_selectors.latency_replay_default_endpoint_id(room)
    if request.method == "POST":
        return LatencyReplayForm(
            request.POST, request.FILES, endpoints=endpoints, initial_endpoint=initial
        )
    return LatencyReplayForm(endpoints=endpoints, initial_endpoint=initial)


@require_GET
@console_user_required
def latency_detail(request: HttpRequest, room_id: int, report_id: int) -> HttpResponse:
    room = selectors.room_get(user=request.user, room_id=room_id)
    report = report_selectors.latency_report_get(room=room, report_id=report_id)
    results = _levels(report.results)
    charts = {}
    if results:
        charts = {
            "histogram": latency_histogram(results),
            "by_concurrency": latency_by_concurrency(results),
            "share_under": latency_share_under_deadline(results),
            "ttft": latency_ttft_by_concurrency(results),
        }
    return render(
        request,
        "experiments_app/latency_detail.html",
        {
            "room": room,
            "report": report,
            "results": results,
            "deadline_s": DEADLINE_MS / 1000,
            **charts,
            "plotly_js_url": plotly_js_url(),
        },
    )


@require_GET
@console_user_required
def latency_status(request: HttpRequest, room_id: int, report_id: int) -> JsonResponse:
    """What the report page's progress bar polls (it reloads when a level is stored)."""
    room = selectors.room_get(user=request.user, room_id=room_id)
    report = report_selectors.latency_report_get(room=room, report_id=report_id)
    return JsonResponse(
        {
            "status": report.status,
            "progress_done": report.progress_done,
            "progress_total": report.progress_total,
            "percent": report.percent,
            "finished": report.is_finished,
            "levels": len(report.results) if isinstance(report.results, list) else 0,
            "error": report.error,
        }
    )


@require_POST
@console_user_required
def latency_cancel(request: HttpRequest, room_id: int, report_id: int) -> HttpResponse:
    room = selectors.room_get(user=request.user, room_id=room_id)
    report = report_selectors.latency_report_get(room=room, report_id=report_id)
    report = latency_replay.latency_replay_cancel(report=report)
    messages.info(
        request,
        "Cancel requested: requests in flight finish, no new request starts."
        if not report.is_finished
        else f"Replay is {report.status}.",
    )
    return redirect("console:latency-detail", room_id=room.pk, report_id=report.pk)


def _levels(results: object) -> list[dict[str, Any]]:
    """The stored per-concurrency results, with the share under 15 s as a percentage
    (floored to 0.1 so 99.96% never shows as 100%)."""
    levels = []
    for level in results if isinstance(results, list) else []:
        if not isinstance(level, dict):
            continue
        share = level.get("share_under_15s")
        under = None if share is None else math.floor(float(share) * 1000) / 10
        levels.append({**level, "under_pct": under})
    return levels
