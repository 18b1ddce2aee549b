"""POST /api/v1/live/reply: the live-room backend asks for the host's reply to a comment."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from console.api_parsers import JSON_ONLY
from experiments_app.api.serializers import LiveReplyInput, LiveReplyOutput
from experiments_app.services import ReplyRequest, live_reply
from harness_app.authentication import RoomApiKeyAuthentication, room_of
from harness_app.permissions import HasRoomKeyScope


class LiveReplyApi(GenericAPIView):  # type: ignore[type-arg]
    """Answers within the room's deadline (default 15 s). A model timeout or outage is
    answered with the room's fallback reply and ``fallback: true``, never a 5xx."""

    authentication_classes = [RoomApiKeyAuthentication]
    parser_classes = JSON_ONLY  # the live-room backend sends JSON; other bodies get a 415
    permission_classes = [HasRoomKeyScope]
    required_scope = "reply"
    serializer_class = LiveReplyInput

    @extend_schema(
        request=LiveReplyInput,
        responses={
            200: LiveReplyOutput,
            400: OpenApiResponse(description="invalid input"),
            404: OpenApiResponse(description="not the key's room"),
        },
    )
    def post(self, request: Request) -> Response:
        data = LiveReplyInput(data=request.data)
        data.is_valid(raise_exception=True)
        room = room_of(request.user)
        if room is None or room.pk != data.validated_data["room"]:
            raise Http404("No such room.")
        comment = data.validated_data["comment"]
        if len(comment) > room.max_comment_chars:
            raise ValidationError(
                {
                    "comment": f"comment is {len(comment)} characters; this room "
                    f"allows at most {room.max_comment_chars}"
                }
            )
        context = data.validated_data.get("context") or {}
        record = live_reply(
            room=room,
            request=ReplyRequest(
                request_id=data.validated_data["request_id"],
                uv_id=data.validated_data["uv_id"],
                comment=comment,
                product_sku=context.get("product_sku", ""),
                recent_comments=tuple(context.get("recent_comments", ())),
            ),
        )
        return Response(LiveReplyOutput(record).data)
