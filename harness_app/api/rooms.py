"""Rooms: list and read (operators all, merchants their own), create and edit; live-reply
settings (operators and the room's merchant, like the console's settings page)."""

from __future__ import annotations

from django.db import IntegrityError
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from harness_app import selectors, services
from harness_app.api.serializers import (
    RoomCreateInput,
    RoomOutput,
    RoomSettingsInput,
    RoomSettingsOutput,
    RoomUpdateInput,
)
from harness_app.permissions import IsConsoleUser, IsOperator


class RoomListApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = RoomOutput

    def get_queryset(self):  # type: ignore[no-untyped-def]
        return selectors.rooms_visible_to(self.request.user)

    @extend_schema(responses=RoomOutput(many=True))
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(RoomOutput(page, many=True).data)

    @extend_schema(request=RoomCreateInput, responses={201: RoomOutput})
    def post(self, request: Request) -> Response:
        if not IsOperator().has_permission(request, self):
            self.permission_denied(request, message=IsOperator.message)
        data = RoomCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            room = services.room_create(**data.validated_data)
        except IntegrityError:
            raise ValidationError(
                {"name": "this owner already has a room with that name"}
            ) from None
        return Response(RoomOutput(room).data, status=status.HTTP_201_CREATED)


class RoomDetailApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = RoomOutput

    @extend_schema(responses=RoomOutput)
    def get(self, request: Request, room_id: int) -> Response:
        return Response(RoomOutput(selectors.room_get(user=request.user, room_id=room_id)).data)

    @extend_schema(request=RoomUpdateInput, responses=RoomOutput)
    def patch(self, request: Request, room_id: int) -> Response:
        room = selectors.room_get(user=request.user, room_id=room_id)
        data = RoomUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            room = services.room_update(room=room, **data.validated_data)
        except IntegrityError:
            raise ValidationError(
                {"name": "this owner already has a room with that name"}
            ) from None
        return Response(RoomOutput(room).data)


class RoomSettingsApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = RoomSettingsOutput

    @extend_schema(responses=RoomSettingsOutput)
    def get(self, request: Request, room_id: int) -> Response:
        room = selectors.room_get(user=request.user, room_id=room_id)
        return Response(RoomSettingsOutput(room).data)

    @extend_schema(request=RoomSettingsInput, responses=RoomSettingsOutput)
    def patch(self, request: Request, room_id: int) -> Response:
        room = selectors.room_get(user=request.user, room_id=room_id)
        data = RoomSettingsInput(data=request.data, context={"room": room, "user": request.user})
        data.is_valid(raise_exception=True)
        room = services.room_update(room=room, **data.validated_data)
        return Response(RoomSettingsOutput(room).data)
