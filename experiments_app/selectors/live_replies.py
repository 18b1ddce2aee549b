"""Reads for live replies (the trace viewer).

Callers pass a ``Room`` they loaded through ``harness_app.selectors.room_get``, which
enforces tenancy; everything here is scoped to that room, so another room's reply is a 404
whoever asks.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from experiments_app.models import LiveReply
from harness_app.models import Room


def replies_of_room(
    room: Room, *, fallback: bool | None = None, source: str | None = None
) -> QuerySet[LiveReply]:
    """Newest first, for the list: without the trace and context JSON (large, unused there)."""
    replies = (
        LiveReply.objects.filter(room=room)
        .select_related("harness_version", "endpoint")
        .defer("trace", "context")
        .order_by("-created_at", "-id")
    )
    if fallback is not None:
        replies = replies.filter(fallback=fallback)
    if source:
        replies = replies.filter(source=source)
    return replies


def reply_get(*, room: Room, reply_id: int) -> LiveReply:
    try:
        return LiveReply.objects.select_related("harness_version", "endpoint", "room").get(
            room=room, pk=reply_id
        )
    except (LiveReply.DoesNotExist, ValueError, TypeError):
        raise Http404("No such reply in this room.") from None
