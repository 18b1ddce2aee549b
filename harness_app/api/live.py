"""Live-room API (authenticated with a per-room key): read the room's published harness."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from harness_app.api.serializers import HarnessVersionOutput
from harness_app.authentication import RoomApiKeyAuthentication, room_of
from harness_app.models import HarnessVersion
from harness_app.permissions import HasRoomKeyScope


class LiveRoomHarnessApi(GenericAPIView):  # type: ignore[type-arg]
    """The published harness of the key's own room. Another room's id is a 404."""

    authentication_classes = [RoomApiKeyAuthentication]
    permission_classes = [HasRoomKeyScope]
    required_scope = "reply"
    serializer_class = HarnessVersionOutput

    @extend_schema(
        responses={200: HarnessVersionOutput, 404: OpenApiResponse(description="not found")}
    )
    def get(self, request: Request, room_id: int) -> Response:
        room = room_of(request.user)
        if room is None or room.pk != room_id:
            raise Http404("No such room.")
        version = (
            HarnessVersion.objects.select_related("author", "parent")
            .filter(harness__room=room, status=HarnessVersion.Status.PUBLISHED)
            .first()
        )
        if version is None:
            raise Http404("This room has no published harness yet.")
        return Response(HarnessVersionOutput(version).data)
