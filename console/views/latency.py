"""Latency reports of a room (written by `manage.py replay_latency`): the list, and one
report's percentile table and histograms."""

from __future__ import annotations

import math
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from console.charts import latency_by_concurrency, latency_histogram
from console.views.access import console_user_required
from console.views.pagination import paginate
from console.views.vendor import plotly_js_url
from experiments_app import selectors as report_selectors
from experiments_app.latency import DEADLINE_MS
from harness_app import selectors

REPORTS_PER_PAGE = 25


@require_GET
@console_user_required
def latency_list(request: HttpRequest, room_id: int) -> HttpResponse:
    room = selectors.room_get(user=request.user, room_id=room_id)
    page = paginate(request, report_selectors.latency_reports_of_room(room), REPORTS_PER_PAGE)
    for report in page:
        report.levels = _levels(report.results)  # type: ignore[attr-defined]
    return render(request, "experiments_app/latency_list.html", {"room": room, "page_obj": page})


@require_GET
@console_user_required
def latency_detail(request: HttpRequest, room_id: int, report_id: int) -> HttpResponse:
    room = selectors.room_get(user=request.user, room_id=room_id)
    report = report_selectors.latency_report_get(room=room, report_id=report_id)
    results = _levels(report.results)
    return render(
        request,
        "experiments_app/latency_detail.html",
        {
            "room": room,
            "report": report,
            "results": results,
            "deadline_s": DEADLINE_MS / 1000,
            "histogram": latency_histogram(results),
            "by_concurrency": latency_by_concurrency(results) if len(results) > 1 else None,
            "plotly_js_url": plotly_js_url(),
        },
    )


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
