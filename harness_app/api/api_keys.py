"""Per-room API keys for the live-room backend: create (shown once), list, revoke."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from harness_app import selectors, services
from harness_app.api.serializers import ApiKeyCreatedOutput, ApiKeyCreateInput, ApiKeyOutput
from harness_app.permissions import IsConsoleUser


class ApiKeyListApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = ApiKeyOutput

    @extend_schema(responses=ApiKeyOutput(many=True))
    def get(self, request: Request, room_id: int) -> Response:
        room = selectors.room_get(user=request.user, room_id=room_id)
        page = self.paginate_queryset(selectors.api_keys_of_room(room))
        return self.get_paginated_response(ApiKeyOutput(page, many=True).data)

    @extend_schema(request=ApiKeyCreateInput, responses={201: ApiKeyCreatedOutput})
    def post(self, request: Request, room_id: int) -> Response:
        room = selectors.room_get(user=request.user, room_id=room_id)
        data = ApiKeyCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        key, raw = services.api_key_create(
            room=room,
            name=data.validated_data["name"],
            scopes=sorted(data.validated_data["scopes"]),
            created_by=request.user,
        )
        body = ApiKeyOutput(key).data | {"key": raw}
        return Response(body, status=status.HTTP_201_CREATED)


class ApiKeyRevokeApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = ApiKeyOutput

    @extend_schema(request=None, responses=ApiKeyOutput)
    def post(self, request: Request, room_id: int, key_id: int) -> Response:
        room = selectors.room_get(user=request.user, room_id=room_id)
        key = services.api_key_revoke(key=selectors.api_key_get(room=room, key_id=key_id))
        return Response(ApiKeyOutput(key).data)
