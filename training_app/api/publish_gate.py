"""The harness-edit safety gate over the API: a room's gate settings (read: the room's
console users; write: operators) and the safety check of a harness version (start one, read
the latest with its progress and verdict). Publishing itself is
``POST /harnesses/{id}/versions/{n}/publish/``, which obeys the gate."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from console.api_errors import FieldErrorsException
from console.api_parsers import JSON_ONLY
from console.roles import is_operator
from harness_app import selectors as harness_selectors
from harness_app.permissions import IsConsoleUser
from training_app.models import EvalSet, ModelEndpoint, PublishCheck, PublishGate
from training_app.services import publish_gate as gate_services


class PublishGateOutput(serializers.ModelSerializer):  # type: ignore[type-arg]
    endpoint = serializers.CharField(source="endpoint.name", read_only=True)

    class Meta:
        model = PublishGate
        fields = [
            "room",
            "enabled",
            "eval_set",
            "endpoint",
            "item_limit",
            "variant_sets",
            "warn_drop_points",
            "block_drop_points",
            "updated_at",
        ]


class PublishGateInput(serializers.Serializer):  # type: ignore[type-arg]
    enabled = serializers.BooleanField(default=True)
    eval_set_id = serializers.IntegerField(min_value=1, max_value=2**31 - 1)
    endpoint = serializers.CharField(max_length=100, help_text="a model endpoint's name")
    item_limit = serializers.IntegerField(min_value=1, max_value=500, default=16)
    variant_sets = serializers.ListField(
        child=serializers.ChoiceField(choices=["t1", "t2"]), max_length=2, default=list
    )
    warn_drop_points = serializers.FloatField(min_value=0, max_value=100, default=5.0)
    block_drop_points = serializers.FloatField(min_value=0, max_value=100, default=10.0)


class PublishCheckOutput(serializers.ModelSerializer):  # type: ignore[type-arg]
    candidate_number = serializers.IntegerField(source="candidate.number", read_only=True)
    baseline_number = serializers.IntegerField(source="baseline.number", read_only=True)
    runs = serializers.SerializerMethodField()
    progress_done = serializers.SerializerMethodField()
    progress_total = serializers.SerializerMethodField()

    class Meta:
        model = PublishCheck
        fields = [
            "id",
            "candidate_number",
            "baseline_number",
            "decision",
            "verdict",
            "error",
            "gate_settings",
            "runs",
            "progress_done",
            "progress_total",
            "override_reason",
            "overridden_at",
            "created_at",
            "decided_at",
        ]

    def get_runs(self, check: PublishCheck) -> dict[str, int]:
        return {arm: run.pk for arm, run in gate_services.check_runs_by_arm(check).items()}

    def get_progress_done(self, check: PublishCheck) -> int:
        return sum(r.progress_done for r in check.runs.all())

    def get_progress_total(self, check: PublishCheck) -> int:
        return sum(r.progress_total for r in check.runs.all())


class PublishGateApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = PublishGateOutput
    parser_classes = JSON_ONLY

    @extend_schema(responses=PublishGateOutput)
    def get(self, request: Request, room_id: int) -> Response:
        room = harness_selectors.room_get(user=request.user, room_id=room_id)
        gate = PublishGate.objects.filter(room=room).select_related("endpoint").first()
        if gate is None:
            raise Http404("This room has no publish gate.")
        return Response(PublishGateOutput(gate).data)

    @extend_schema(request=PublishGateInput, responses=PublishGateOutput)
    def put(self, request: Request, room_id: int) -> Response:
        room = harness_selectors.room_get(user=request.user, room_id=room_id)
        if not is_operator(request.user):
            return Response(
                {"detail": "Only operators change a room's publish gate."},
                status=status.HTTP_403_FORBIDDEN,
            )
        data = PublishGateInput(data=request.data)
        data.is_valid(raise_exception=True)
        values: dict[str, Any] = dict(data.validated_data)
        eval_set = EvalSet.objects.filter(pk=values.pop("eval_set_id")).first()
        if eval_set is None:
            raise FieldErrorsException.for_field("eval_set_id", "no such eval set")
        endpoint = ModelEndpoint.objects.filter(name=values.pop("endpoint")).first()
        if endpoint is None:
            raise FieldErrorsException.for_field("endpoint", "no such model endpoint")
        try:
            gate = gate_services.publish_gate_configure(
                room=room, eval_set=eval_set, endpoint=endpoint, by=request.user, **values
            )
        except gate_services.PublishGateError as exc:
            field = "eval_set_id" if exc.field == "eval_set" else exc.field
            raise FieldErrorsException.for_field(field, exc.message) from None
        return Response(PublishGateOutput(gate).data)


class PublishCheckApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = PublishCheckOutput

    @extend_schema(request=None, responses=PublishCheckOutput)
    def get(self, request: Request, harness_id: int, number: int) -> Response:
        """The latest check of this version against the live one."""
        harness = harness_selectors.harness_get(user=request.user, harness_id=harness_id)
        version = harness_selectors.harness_version_get(harness=harness, number=number)
        check = gate_services.latest_check(version)
        if check is None:
            raise Http404("This version has no safety check against the live version.")
        check = gate_services.publish_check_settle(check_id=check.pk)
        return Response(PublishCheckOutput(check).data)

    @extend_schema(request=None, responses={201: PublishCheckOutput})
    def post(self, request: Request, harness_id: int, number: int) -> Response:
        harness = harness_selectors.harness_get(user=request.user, harness_id=harness_id)
        version = harness_selectors.harness_version_get(harness=harness, number=number)
        try:
            check = gate_services.publish_check_start(version=version, by=request.user)
        except gate_services.PublishGateError as exc:
            raise FieldErrorsException.for_field(exc.field, exc.message) from None
        return Response(PublishCheckOutput(check).data, status=status.HTTP_201_CREATED)
