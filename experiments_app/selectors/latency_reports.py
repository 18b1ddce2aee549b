"""Reads for latency reports (the replays of a request set through the live reply path).

Callers pass a ``Room`` they loaded through ``harness_app.selectors.room_get``, which
enforces tenancy; everything here is scoped to that room, so another room's report is a 404
whoever asks.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.http import Http404

from experiments_app.models import LatencyReport
from experiments_app.selectors.room_endpoints import endpoints_usable
from harness_app.models import Room
from training_app.models import ModelEndpoint


def latency_reports_of_room(room: Room) -> QuerySet[LatencyReport]:
    return (
        LatencyReport.objects.filter(room=room)
        .select_related("endpoint", "harness_version", "created_by")
        .defer("request_items", "harness_version__content")
        .order_by("-created_at", "-id")
    )


def latency_report_get(*, room: Room, report_id: int) -> LatencyReport:
    try:
        return latency_reports_of_room(room).get(pk=report_id)
    except (LatencyReport.DoesNotExist, ValueError, TypeError):
        raise Http404("No such latency report for this room.") from None


def latency_replay_endpoints(*, room: Room, user: Any) -> QuerySet[ModelEndpoint]:
    """The active endpoints ``user`` may replay ``room`` against: those they may pick for
    the room anywhere (``room_endpoints.endpoints_usable``); any for the shell (``user``
    None)."""
    if user is None:
        return ModelEndpoint.objects.filter(is_active=True).order_by("name")
    return endpoints_usable(room=room, user=user)


def latency_replay_default_endpoint_id(room: Room) -> int | None:
    """The endpoint the room replies through: its own, else the console default's (by name)."""
    if room.reply_endpoint_id is not None:
        return int(room.reply_endpoint_id)
    return (
        ModelEndpoint.objects.filter(name=settings.HAT_DEFAULT_ENDPOINT)
        .values_list("pk", flat=True)
        .first()
    )
