"""Agent-as-a-Judge over the API (operators only): judges (list, create, read, update: a new
version when the rubric or the model changes), their versions with each one's trust, scoring
one reply and comparing a pair synchronously (bounded by ``timeout_s``), and calibrations on
a blind test (list, create: queued on the ``eval`` queue; read with progress and report)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from console.api_errors import FieldErrorsException
from console.api_parsers import JSON_ONLY
from harness_app.permissions import IsOperator
from training_app.models import (
    Judge,
    JudgeCalibration,
    JudgeScore,
    JudgeVersion,
    ModelEndpoint,
)
from training_app.selectors import judges as judge_selectors
from training_app.services import judges as judge_services

MAX_SYNC_TIMEOUT_S = 120.0


class JudgeTrustOutput(serializers.Serializer):  # type: ignore[type-arg]
    state = serializers.ChoiceField(
        choices=[
            judge_selectors.CALIBRATED,
            judge_selectors.UNCALIBRATED,
            judge_selectors.BELOW_MIN_KAPPA,
        ]
    )
    kappa = serializers.FloatField(allow_null=True)
    min_kappa = serializers.FloatField()
    calibration_id = serializers.IntegerField(allow_null=True)
    message = serializers.CharField()


class JudgeVersionOutput(serializers.ModelSerializer):  # type: ignore[type-arg]
    endpoint = serializers.CharField(source="endpoint.name", read_only=True)
    trust = serializers.SerializerMethodField()

    class Meta:
        model = JudgeVersion
        fields = [
            "id",
            "judge",
            "number",
            "endpoint",
            "model_name",
            "rubric",
            "rubric_sha256",
            "trust",
            "created_at",
        ]

    @extend_schema_field(JudgeTrustOutput)
    def get_trust(self, version: JudgeVersion) -> dict[str, Any]:
        trusts = self.context.get("trusts")
        trust = trusts.get(version.pk) if trusts else None
        return (trust or judge_selectors.judge_trust(version)).to_dict()


class JudgeOutput(serializers.ModelSerializer):  # type: ignore[type-arg]
    endpoint = serializers.CharField(source="endpoint.name", read_only=True)
    current_version = serializers.SerializerMethodField()

    class Meta:
        model = Judge
        fields = [
            "id",
            "name",
            "description",
            "endpoint",
            "rubric",
            "min_kappa",
            "current_version",
            "created_at",
            "updated_at",
        ]

    @extend_schema_field(JudgeVersionOutput(allow_null=True))
    def get_current_version(self, judge: Judge) -> dict[str, Any] | None:
        version = judge_selectors.current_version(judge)
        if version is None:
            return None
        return JudgeVersionOutput(version, context=self.context).data


class JudgeInput(serializers.Serializer):  # type: ignore[type-arg]
    name = serializers.CharField(max_length=80)
    description = serializers.CharField(max_length=300, required=False, allow_blank=True)
    endpoint = serializers.CharField(max_length=64, help_text="a model endpoint's name")
    rubric = serializers.CharField(
        max_length=judge_services.MAX_RUBRIC_CHARS,
        required=False,
        help_text="The rubric prompt (default: the built-in rubric).",
    )
    min_kappa = serializers.FloatField(min_value=-1, max_value=1, required=False)


class JudgeUpdateInput(serializers.Serializer):  # type: ignore[type-arg]
    name = serializers.CharField(max_length=80, required=False)
    description = serializers.CharField(max_length=300, required=False, allow_blank=True)
    endpoint = serializers.CharField(max_length=64, required=False)
    rubric = serializers.CharField(max_length=judge_services.MAX_RUBRIC_CHARS, required=False)
    min_kappa = serializers.FloatField(min_value=-1, max_value=1, required=False)


class JudgeUpdateOutput(serializers.Serializer):  # type: ignore[type-arg]
    judge = JudgeOutput()
    new_version = serializers.BooleanField(help_text="True when the edit made a new version.")


class JudgeScoreOutput(serializers.ModelSerializer):  # type: ignore[type-arg]
    trust = serializers.SerializerMethodField()

    class Meta:
        model = JudgeScore
        fields = [
            "id",
            "version",
            "kind",
            "parsed",
            "result",
            "raw",
            "error",
            "latency_ms",
            "trust",
            "created_at",
        ]

    @extend_schema_field(JudgeTrustOutput)
    def get_trust(self, score: JudgeScore) -> dict[str, Any]:
        return judge_selectors.judge_trust(score.version).to_dict()


class _SyncInput(serializers.Serializer):  # type: ignore[type-arg]
    comment = serializers.CharField(max_length=4000)
    facts = serializers.JSONField(
        required=False, default=dict, help_text="Product and catalog facts (any JSON)."
    )
    timeout_s = serializers.FloatField(
        min_value=1,
        max_value=MAX_SYNC_TIMEOUT_S,
        required=False,
        help_text="This request's budget per model call (default: the endpoint's timeout).",
    )


class ScoreInput(_SyncInput):
    reply = serializers.CharField(max_length=8000)


class CompareInput(_SyncInput):
    reply_one = serializers.CharField(max_length=8000)
    reply_two = serializers.CharField(max_length=8000)


class CalibrationOutput(serializers.ModelSerializer):  # type: ignore[type-arg]
    percent = serializers.IntegerField(read_only=True)
    judge = serializers.IntegerField(source="version.judge_id", read_only=True)
    version_number = serializers.IntegerField(source="version.number", read_only=True)

    class Meta:
        model = JudgeCalibration
        fields = [
            "id",
            "judge",
            "version",
            "version_number",
            "blind_test",
            "reference",
            "status",
            "progress_done",
            "progress_total",
            "percent",
            "report",
            "error",
            "created_at",
            "started_at",
            "finished_at",
        ]


class CalibrationInput(serializers.Serializer):  # type: ignore[type-arg]
    version_id = serializers.IntegerField(min_value=1, max_value=2**31 - 1)
    blind_test_id = serializers.IntegerField(min_value=1, max_value=2**31 - 1)
    reference = serializers.ChoiceField(
        choices=JudgeCalibration.Reference.choices,
        default=JudgeCalibration.Reference.HUMAN,
        help_text="human: the labeled pairs' majorities (earns trust); gold: the gold pairs "
        "(a sanity check, earns no trust).",
    )


def _endpoint(name: str) -> ModelEndpoint:
    endpoint = ModelEndpoint.objects.filter(name=name).first()
    if endpoint is None:
        raise FieldErrorsException.for_field("endpoint", f"no endpoint named {name!r}")
    return endpoint


def _field(field: str) -> str:
    return "endpoint" if field == "endpoint_id" else field


class JudgeListApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = JudgeOutput
    parser_classes = JSON_ONLY

    @extend_schema(responses=JudgeOutput(many=True))
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(judge_selectors.judges_list()) or []
        versions = [v for judge in page for v in judge.versions.all()]
        context = {"trusts": judge_selectors.judge_trusts(versions)}
        return self.get_paginated_response(JudgeOutput(page, many=True, context=context).data)

    @extend_schema(request=JudgeInput, responses={201: JudgeOutput})
    def post(self, request: Request) -> Response:
        data = JudgeInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        extra = {k: values[k] for k in ("description", "rubric", "min_kappa") if k in values}
        try:
            judge = judge_services.judge_create(
                name=values["name"],
                endpoint=_endpoint(values["endpoint"]),
                created_by=request.user,
                **extra,
            )
        except judge_services.JudgeError as exc:
            raise FieldErrorsException.for_field(_field(exc.field), str(exc)) from None
        judge = judge_selectors.judge_get(judge_id=judge.pk)
        return Response(JudgeOutput(judge).data, status=status.HTTP_201_CREATED)


class JudgeDetailApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = JudgeOutput
    parser_classes = JSON_ONLY

    @extend_schema(responses=JudgeOutput)
    def get(self, request: Request, judge_id: int) -> Response:
        return Response(JudgeOutput(judge_selectors.judge_get(judge_id=judge_id)).data)

    @extend_schema(request=JudgeUpdateInput, responses=JudgeUpdateOutput)
    def patch(self, request: Request, judge_id: int) -> Response:
        judge = judge_selectors.judge_get(judge_id=judge_id)
        data = JudgeUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        if "endpoint" in values:
            values["endpoint"] = _endpoint(values["endpoint"])
        try:
            judge, version = judge_services.judge_update(
                judge=judge, updated_by=request.user, **values
            )
        except judge_services.JudgeError as exc:
            raise FieldErrorsException.for_field(_field(exc.field), str(exc)) from None
        judge = judge_selectors.judge_get(judge_id=judge.pk)
        return Response({"judge": JudgeOutput(judge).data, "new_version": version is not None})


class JudgeVersionListApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = JudgeVersionOutput

    @extend_schema(responses=JudgeVersionOutput(many=True))
    def get(self, request: Request, judge_id: int) -> Response:
        judge = judge_selectors.judge_get(judge_id=judge_id)
        page = self.paginate_queryset(judge_selectors.judge_versions(judge)) or []
        context = {"trusts": judge_selectors.judge_trusts(page)}
        return self.get_paginated_response(
            JudgeVersionOutput(page, many=True, context=context).data
        )


class JudgeScoreApi(GenericAPIView):  # type: ignore[type-arg]
    """Score one reply on the judge's current version's rubric (synchronous)."""

    permission_classes = [IsOperator]
    serializer_class = JudgeScoreOutput
    parser_classes = JSON_ONLY

    @extend_schema(request=ScoreInput, responses={201: JudgeScoreOutput})
    def post(self, request: Request, judge_id: int) -> Response:
        judge = judge_selectors.judge_get(judge_id=judge_id)
        data = ScoreInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        version = judge_services.judge_version_for_use(judge=judge, created_by=request.user)
        score = judge_services.judge_score_reply(
            version=version,
            comment=values["comment"],
            facts=values["facts"],
            reply=values["reply"],
            timeout_s=values.get("timeout_s"),
        )
        return Response(JudgeScoreOutput(score).data, status=status.HTTP_201_CREATED)


class JudgeCompareApi(GenericAPIView):  # type: ignore[type-arg]
    """Compare two replies in both orders with the judge's current version (synchronous)."""

    permission_classes = [IsOperator]
    serializer_class = JudgeScoreOutput
    parser_classes = JSON_ONLY

    @extend_schema(request=CompareInput, responses={201: JudgeScoreOutput})
    def post(self, request: Request, judge_id: int) -> Response:
        judge = judge_selectors.judge_get(judge_id=judge_id)
        data = CompareInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        version = judge_services.judge_version_for_use(judge=judge, created_by=request.user)
        score = judge_services.judge_compare_pair(
            version=version,
            comment=values["comment"],
            facts=values["facts"],
            reply_one=values["reply_one"],
            reply_two=values["reply_two"],
            timeout_s=values.get("timeout_s"),
        )
        return Response(JudgeScoreOutput(score).data, status=status.HTTP_201_CREATED)


class CalibrationListApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = CalibrationOutput
    parser_classes = JSON_ONLY

    @extend_schema(responses=CalibrationOutput(many=True))
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(judge_selectors.calibrations_list())
        return self.get_paginated_response(CalibrationOutput(page, many=True).data)

    @extend_schema(request=CalibrationInput, responses={201: CalibrationOutput})
    def post(self, request: Request) -> Response:
        from experiments_app.models import BlindTest

        data = CalibrationInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        version = JudgeVersion.objects.filter(pk=values["version_id"]).first()
        if version is None:
            raise FieldErrorsException.for_field("version_id", "no such judge version")
        test = BlindTest.objects.filter(pk=values["blind_test_id"]).first()
        if test is None:
            raise FieldErrorsException.for_field("blind_test_id", "no such blind test")
        try:
            calibration = judge_services.judge_calibration_create(
                version=version,
                blind_test=test,
                reference=values["reference"],
                created_by=request.user,
            )
        except judge_services.JudgeError as exc:
            raise FieldErrorsException.for_field(exc.field, str(exc)) from None
        calibration = judge_selectors.calibration_get(calibration_id=calibration.pk)
        return Response(CalibrationOutput(calibration).data, status=status.HTTP_201_CREATED)


class CalibrationDetailApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = CalibrationOutput

    @extend_schema(responses=CalibrationOutput)
    def get(self, request: Request, calibration_id: int) -> Response:
        calibration = judge_selectors.calibration_get(calibration_id=calibration_id)
        return Response(CalibrationOutput(calibration).data)
