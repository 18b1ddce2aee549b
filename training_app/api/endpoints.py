"""Model endpoints (operators only, like the console's endpoint pages): list, create, read,
edit, and the connection test (``GET /models`` on the server, what "Test connection" does).

The rules are the model's validators (through a ModelSerializer) and the service's
(``training_app.services.endpoints``: http(s) base URL without a trailing slash, a taken
name named on ``name``); the API adds none of its own. Endpoints hold no secret: a key is
referenced by the NAME of an environment variable (``api_key_ref``); its value is never
stored, read into a response, or logged here.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from console.api_parsers import JSON_ONLY
from harness_app.permissions import IsOperator
from training_app import selectors, services
from training_app.models import ModelEndpoint
from training_app.selectors.endpoints import CONNECTION_CHECK_TIMEOUT_S as CONNECTION_TIMEOUT_S

# What the console's form edits, in its order.
ENDPOINT_FIELDS = (
    "name",
    "base_url",
    "model_name",
    "api_key_ref",
    "role",
    "tool_mode",
    "timeout_s",
    "max_concurrency",
    "max_tokens",
    "is_active",
)
ERRORS = OpenApiResponse(description="invalid input; `errors` name the fields")


class EndpointInput(serializers.ModelSerializer):  # type: ignore[type-arg]
    """Types and the model's own validators; the service adds the rest (one copy of rules)."""

    class Meta:
        model = ModelEndpoint
        fields = list(ENDPOINT_FIELDS)
        extra_kwargs = {
            # The model's regex and length, without DRF's unique check: the service says
            # "an endpoint named 'x' already exists", as the console does.
            "name": {"validators": list(ModelEndpoint._meta.get_field("name").validators)},
            "api_key_ref": {
                "help_text": "The NAME of the environment variable holding the key (e.g. "
                "VLLM_KEY_PROD), not the key itself."
            },
            "base_url": {"help_text": "http(s), ending in /v1, e.g. http://10.0.0.5:8000/v1"},
        }


class EndpointOutput(serializers.ModelSerializer):  # type: ignore[type-arg]
    room_count = serializers.IntegerField(
        read_only=True, help_text="Rooms that reply through this endpoint."
    )
    is_default = serializers.SerializerMethodField(
        help_text="The endpoint rooms without one of their own reply through."
    )

    class Meta:
        model = ModelEndpoint
        fields = ["id", *ENDPOINT_FIELDS, "room_count", "is_default", "created_at", "updated_at"]
        read_only_fields = fields

    def get_is_default(self, endpoint: ModelEndpoint) -> bool:
        return bool(endpoint.name == settings.HAT_DEFAULT_ENDPOINT)


class EndpointDetailOutput(EndpointOutput):
    vllm_command = serializers.SerializerMethodField(
        help_text="The `vllm serve` line that serves this endpoint (null: see "
        "vllm_command_error). A key comes from the variable api_key_ref names."
    )
    vllm_command_error = serializers.SerializerMethodField()

    class Meta(EndpointOutput.Meta):
        fields = [*EndpointOutput.Meta.fields, "vllm_command", "vllm_command_error"]
        read_only_fields = fields

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_vllm_command(self, endpoint: ModelEndpoint) -> str | None:
        try:
            return selectors.endpoint_vllm_command(endpoint)
        except ValueError:
            return None

    def get_vllm_command_error(self, endpoint: ModelEndpoint) -> str:
        try:
            selectors.endpoint_vllm_command(endpoint)
        except ValueError as exc:
            return str(exc)
        return ""


class ConnectionCheckOutput(serializers.Serializer):  # type: ignore[type-arg]
    ok = serializers.BooleanField()
    round_trip_ms = serializers.FloatField()
    timeout_s = serializers.FloatField()
    models = serializers.ListField(
        child=serializers.CharField(), help_text="The model ids the server lists."
    )
    problem = serializers.CharField(
        help_text='Empty when ok; else e.g. "connection refused", "timeout", "HTTP 401".'
    )
    message = serializers.CharField()
    hints = serializers.ListField(child=serializers.CharField())


def _detail(endpoint_id: int) -> dict[str, Any]:
    return dict(EndpointDetailOutput(selectors.endpoint_get(endpoint_id=endpoint_id)).data)


class EndpointListApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    parser_classes = JSON_ONLY
    serializer_class = EndpointOutput

    @extend_schema(responses=EndpointOutput(many=True))
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(selectors.endpoints_list())
        return self.get_paginated_response(EndpointOutput(page, many=True).data)

    @extend_schema(request=EndpointInput, responses={201: EndpointDetailOutput, 400: ERRORS})
    def post(self, request: Request) -> Response:
        data = EndpointInput(data=request.data)
        data.is_valid(raise_exception=True)
        endpoint = services.endpoint_create(**data.validated_data)
        return Response(_detail(endpoint.pk), status=status.HTTP_201_CREATED)


class EndpointDetailApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    parser_classes = JSON_ONLY
    serializer_class = EndpointDetailOutput

    @extend_schema(responses=EndpointDetailOutput)
    def get(self, request: Request, endpoint_id: int) -> Response:
        return Response(_detail(endpoint_id))

    @extend_schema(
        request=EndpointInput(partial=True),
        responses={200: EndpointDetailOutput, 400: ERRORS},
        description="Change the fields sent; a rejected edit changes nothing.",
    )
    def patch(self, request: Request, endpoint_id: int) -> Response:
        endpoint = selectors.endpoint_get(endpoint_id=endpoint_id)
        data = EndpointInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        services.endpoint_update(endpoint=endpoint, **data.validated_data)
        return Response(_detail(endpoint_id))


class EndpointTestApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = ConnectionCheckOutput

    @extend_schema(
        request=None,
        responses=ConnectionCheckOutput,
        description="Ask the endpoint's server for `GET /models` (3 s timeout), as the "
        "console's Test connection does. A failure is a 200 with ok false and the problem "
        "named, never a 5xx.",
    )
    def post(self, request: Request, endpoint_id: int) -> Response:
        endpoint = selectors.endpoint_get(endpoint_id=endpoint_id)
        check = selectors.endpoint_check_connection(
            endpoint=endpoint, timeout_s=CONNECTION_TIMEOUT_S
        )
        body = {
            "ok": check.ok,
            "round_trip_ms": check.round_trip_ms,
            "timeout_s": CONNECTION_TIMEOUT_S,
            "models": list(check.models),
            "problem": check.problem,
            "message": check.message,
            "hints": list(check.hints),
        }
        return Response(ConnectionCheckOutput(body).data)
