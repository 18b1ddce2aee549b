"""Latency replays of a room over the API: list a room's reports and queue a replay (the job
runs on the ``eval`` worker), read one with its status, progress and results, cancel it.

Operators (every room) and the room's merchant; another merchant's room is a 404. A merchant
replays only on the endpoints the room replies through (``selectors.latency_replay_endpoints``).
docs/API.md, "Latency replays"; the job itself is ``services.latency_replay``.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from console.api_errors import FieldErrorsException
from experiments_app.models import LatencyReport
from experiments_app.selectors import latency_report_get, latency_reports_of_room
from experiments_app.services import latency_replay as services
from harness_app import selectors as harness_selectors
from harness_app.permissions import IsConsoleUser
from training_app.models import ModelEndpoint

ERRORS = OpenApiResponse(description="invalid input; `errors` name the fields")


class RequestRowInput(serializers.Serializer[Any]):
    comment = serializers.CharField(max_length=services.MAX_COMMENT_CHARS)
    product_sku = serializers.CharField(max_length=64, required=False, allow_blank=True)
    uv_id = serializers.CharField(max_length=128, required=False, allow_blank=True)
    recent_comments = serializers.ListField(
        child=serializers.CharField(max_length=services.MAX_COMMENT_CHARS, allow_blank=True),
        required=False,
        max_length=50,
    )


class LatencyReplayInput(serializers.Serializer[Any]):
    endpoint = serializers.IntegerField(
        min_value=1, max_value=2**31 - 1, help_text="the model endpoint's id"
    )
    concurrency = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=services.MAX_CONCURRENCY),
        min_length=1,
        max_length=services.MAX_LEVELS,
        help_text=f"distinct levels, each 1-{services.MAX_CONCURRENCY}, e.g. [1, 4, 8]",
    )
    request_set = serializers.ChoiceField(
        choices=[("demo", "the shipped 100 requests"), ("upload", "rows or an upload")],
        default="demo",
    )
    rows = serializers.ListField(
        child=RequestRowInput(),
        required=False,
        max_length=services.MAX_REQUESTS,
        help_text="request_set=upload, JSON body: the requests (what a JSONL line holds)",
    )
    upload = serializers.FileField(
        required=False, help_text="request_set=upload, multipart body: a JSONL file"
    )
    limit = serializers.IntegerField(
        min_value=1, max_value=services.MAX_REQUESTS, required=False, allow_null=True
    )
    arm = serializers.ChoiceField(
        choices=[("", "the room's serving agent"), ("harness", "harness"), ("react", "react")],
        required=False,
        default="",
    )

    def upload_bytes(self) -> tuple[bytes | None, str]:
        data = self.validated_data
        if data.get("rows") is not None:
            lines = [json.dumps(dict(row), ensure_ascii=False) for row in data["rows"]]
            return "\n".join(lines).encode(), "rows"
        upload = data.get("upload")
        if upload is not None:
            cap = settings.HAT_MAX_UPLOAD_BYTES
            if upload.size > cap:
                raise FieldErrorsException.for_field(
                    "upload", f"The file is {upload.size} bytes; at most {cap}."
                )
            return upload.read(), str(upload.name or "upload.jsonl")
        return None, ""


class LevelOutput(serializers.Serializer[Any]):
    concurrency = serializers.IntegerField()
    requests = serializers.IntegerField(allow_null=True)
    p50_ms = serializers.FloatField(allow_null=True)
    p95_ms = serializers.FloatField(allow_null=True)
    max_ms = serializers.FloatField(allow_null=True)
    share_under_15s = serializers.FloatField(allow_null=True)
    ttft_p50_ms = serializers.FloatField(allow_null=True)
    ttft_p95_ms = serializers.FloatField(allow_null=True)
    fallbacks = serializers.IntegerField(allow_null=True)
    wall_s = serializers.FloatField(allow_null=True)
    # A field named like BaseSerializer.partial (the metaclass moves it to the fields).
    partial = serializers.BooleanField(  # type: ignore[assignment]
        default=False, help_text="true: cancelled before every request of the level ran"
    )


class LevelDetailOutput(LevelOutput):
    latencies_ms = serializers.ListField(child=serializers.FloatField(), default=list)
    ttfts_ms = serializers.ListField(child=serializers.FloatField(), default=list)


class LatencyReplayOutput(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    room = serializers.IntegerField(source="room_id")
    endpoint = serializers.IntegerField(source="endpoint_id", allow_null=True)
    endpoint_name = serializers.CharField(source="endpoint.name", allow_null=True, default=None)
    harness_version = serializers.IntegerField(
        source="harness_version.number", allow_null=True, default=None
    )
    arm = serializers.CharField()
    request_set = serializers.CharField(source="parameters.request_set", default="file")
    request_file = serializers.CharField()
    requests = serializers.IntegerField(help_text="requests per level")
    concurrency = serializers.ListField(
        child=serializers.IntegerField(), source="parameters.concurrency", default=list
    )
    limit = serializers.IntegerField(source="parameters.limit", allow_null=True, default=None)
    status = serializers.ChoiceField(choices=LatencyReport.Status.choices)
    progress_done = serializers.IntegerField(help_text="requests finished over every level")
    progress_total = serializers.IntegerField()
    percent = serializers.IntegerField()
    finished = serializers.BooleanField(source="is_finished")
    cancel_requested = serializers.BooleanField()
    error = serializers.CharField()
    results = LevelOutput(many=True, help_text="one per finished level, in run order")
    created_by = serializers.IntegerField(source="created_by_id", allow_null=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class LatencyReplayDetailOutput(LatencyReplayOutput):
    results = LevelDetailOutput(many=True, help_text="with every request's latency and TTFT")


def _detail(request: Request, room: Any, report_id: int) -> Response:
    report = latency_report_get(room=room, report_id=report_id)
    return Response(LatencyReplayDetailOutput(report).data)


class LatencyReplayListApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = LatencyReplayOutput

    @extend_schema(responses=LatencyReplayOutput(many=True))
    def get(self, request: Request, room_id: int) -> Response:
        room = harness_selectors.room_get(user=request.user, room_id=room_id)
        page = self.paginate_queryset(latency_reports_of_room(room))
        return self.get_paginated_response(LatencyReplayOutput(page, many=True).data)

    @extend_schema(
        request=LatencyReplayInput,
        responses={201: LatencyReplayDetailOutput, 400: ERRORS},
        description="Queue a latency replay of the room's published harness: every request "
        "of the set through the full reply path at each concurrency level, on the eval "
        "worker. Poll the report for status and progress.",
    )
    def post(self, request: Request, room_id: int) -> Response:
        room = harness_selectors.room_get(user=request.user, room_id=room_id)
        data = LatencyReplayInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        endpoint = ModelEndpoint.objects.filter(pk=values["endpoint"]).first()
        if endpoint is None:
            raise FieldErrorsException.for_field(
                "endpoint", f"No model endpoint with id {values['endpoint']}."
            )
        upload, upload_name = data.upload_bytes()
        if values["request_set"] == "upload" and upload is None:
            raise FieldErrorsException.for_field(
                "rows", "request_set=upload needs rows (a JSON body) or an upload (multipart)."
            )
        try:
            report = services.latency_replay_queue(
                room=room,
                endpoint=endpoint,
                concurrency=values["concurrency"],
                request_set=values["request_set"],
                upload=upload,
                upload_name=upload_name,
                limit=values.get("limit"),
                arm=values.get("arm", ""),
                created_by=request.user,
            )
        except ValidationError as exc:
            errors = exc.message_dict
            if upload_name == "rows" and "upload" in errors:  # the rows were the upload
                errors["rows"] = errors.pop("upload")
            raise ValidationError(errors) from None
        report = latency_report_get(room=room, report_id=report.pk)
        return Response(LatencyReplayDetailOutput(report).data, status=status.HTTP_201_CREATED)


class LatencyReplayDetailApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = LatencyReplayDetailOutput

    @extend_schema(responses=LatencyReplayDetailOutput)
    def get(self, request: Request, room_id: int, report_id: int) -> Response:
        room = harness_selectors.room_get(user=request.user, room_id=room_id)
        return _detail(request, room, report_id)


class LatencyReplayCancelApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = LatencyReplayDetailOutput

    @extend_schema(
        request=None,
        responses=LatencyReplayDetailOutput,
        description="Ask the replay to stop: a queued one is cancelled at once; a running one "
        "starts no new request and keeps its levels so far (the current one marked partial). "
        "A finished replay is returned unchanged.",
    )
    def post(self, request: Request, room_id: int, report_id: int) -> Response:
        room = harness_selectors.room_get(user=request.user, room_id=room_id)
        report = latency_report_get(room=room, report_id=report_id)
        services.latency_replay_cancel(report=report)
        return _detail(request, room, report_id)
