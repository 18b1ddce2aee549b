"""A room's webhook signing secrets: list (names and dates), create, rotate, delete. The value
is write-only: no response ever contains it."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from console.api_errors import FieldErrorsException
from harness_app import selectors, services
from harness_app.api.serializers import (
    WebhookSecretCreateInput,
    WebhookSecretOutput,
    WebhookSecretValueInput,
)
from harness_app.permissions import IsConsoleUser


def _refused(exc: services.WebhookSecretError) -> FieldErrorsException:
    return FieldErrorsException(str(exc), [{"field": exc.field, "message": exc.message}])


class WebhookSecretListApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = WebhookSecretOutput

    @extend_schema(responses=WebhookSecretOutput(many=True))
    def get(self, request: Request, room_id: int) -> Response:
        room = selectors.room_get(user=request.user, room_id=room_id)
        page = self.paginate_queryset(selectors.webhook_secrets_of_room(room))
        return self.get_paginated_response(WebhookSecretOutput(page, many=True).data)

    @extend_schema(request=WebhookSecretCreateInput, responses={201: WebhookSecretOutput})
    def post(self, request: Request, room_id: int) -> Response:
        room = selectors.room_get(user=request.user, room_id=room_id)
        data = WebhookSecretCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            secret = services.webhook_secret_create(
                room=room,
                name=data.validated_data["name"],
                value=data.validated_data["value"],
                created_by=request.user,
            )
        except services.WebhookSecretError as exc:
            raise _refused(exc) from None
        return Response(WebhookSecretOutput(secret).data, status=status.HTTP_201_CREATED)


class WebhookSecretDetailApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = WebhookSecretOutput

    @extend_schema(responses=WebhookSecretOutput)
    def get(self, request: Request, room_id: int, secret_id: int) -> Response:
        room = selectors.room_get(user=request.user, room_id=room_id)
        secret = selectors.webhook_secret_get(room=room, secret_id=secret_id)
        return Response(WebhookSecretOutput(secret).data)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request: Request, room_id: int, secret_id: int) -> Response:
        room = selectors.room_get(user=request.user, room_id=room_id)
        services.webhook_secret_delete(
            secret=selectors.webhook_secret_get(room=room, secret_id=secret_id)
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class WebhookSecretRotateApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = WebhookSecretValueInput

    @extend_schema(request=WebhookSecretValueInput, responses=WebhookSecretOutput)
    def post(self, request: Request, room_id: int, secret_id: int) -> Response:
        room = selectors.room_get(user=request.user, room_id=room_id)
        secret = selectors.webhook_secret_get(room=room, secret_id=secret_id)
        data = WebhookSecretValueInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            secret = services.webhook_secret_rotate(
                secret=secret, value=data.validated_data["value"]
            )
        except services.WebhookSecretError as exc:
            raise _refused(exc) from None
        return Response(WebhookSecretOutput(secret).data)
