"""Reads for latency reports (the replays of a request set through the live reply path).

Callers pass a ``Room`` they loaded through ``harness_app.selectors.room_get``, which
enforces tenancy; everything here is scoped to that room, so another room's report is a 404
whoever asks.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from experiments_app.models import LatencyReport
from harness_app.models import Room


def latency_reports_of_room(room: Room) -> QuerySet[LatencyReport]:
    return (
        LatencyReport.objects.filter(room=room)
        .select_related("endpoint")
        .order_by("-created_at", "-id")
    )


def latency_report_get(*, room: Room, report_id: int) -> LatencyReport:
    try:
        return latency_reports_of_room(room).get(pk=report_id)
    except (LatencyReport.DoesNotExist, ValueError, TypeError):
        raise Http404("No such latency report for this room.") from None
