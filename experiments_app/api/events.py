"""POST /api/v1/events: the live-room backend sends viewer events in batches."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from console.api_parsers import JSON_ONLY
from experiments_app.api.experiment_serializers import EventBatchInput, EventBatchOutput
from experiments_app.ingestion import BatchError, events_ingest
from harness_app.authentication import RoomApiKeyAuthentication, room_of
from harness_app.permissions import HasRoomKeyScope


class EventsApi(GenericAPIView):  # type: ignore[type-arg]
    """Up to 10,000 events per batch, idempotent on (room, event_id): a replayed batch
    changes nothing and reports its items as duplicates. Invalid items are rejected one by
    one with their index and reason; the valid items of the batch are stored."""

    authentication_classes = [RoomApiKeyAuthentication]
    parser_classes = JSON_ONLY  # the live-room backend sends JSON; other bodies get a 415
    permission_classes = [HasRoomKeyScope]
    required_scope = "events"
    serializer_class = EventBatchInput

    @extend_schema(
        request=EventBatchInput,
        responses={
            200: EventBatchOutput,
            400: OpenApiResponse(description="not a batch, or more than 10,000 events"),
        },
    )
    def post(self, request: Request) -> Response:
        room = room_of(request.user)
        if room is None:  # pragma: no cover - HasRoomKeyScope admits room keys only
            raise Http404("No such room.")
        body = request.data
        if not isinstance(body, dict) or "events" not in body:
            raise ValidationError({"events": 'send {"events": [...]} with up to 10,000 events'})
        try:
            result = events_ingest(room=room, events=body["events"])
        except BatchError as exc:
            raise ValidationError({exc.field: exc.message}) from None
        return Response(
            EventBatchOutput(
                {
                    "received": result.received,
                    "accepted": result.accepted,
                    "duplicate": result.duplicate,
                    "rejected": result.rejected,
                    "errors": [
                        {"index": e.index, "field": e.field, "message": e.message}
                        for e in result.errors
                    ],
                }
            ).data
        )
