"""Offline evaluation over the API (operators only): eval sets (list, read, build, upload, the
IFEval and BFCL sets), eval runs (list, create, read with progress and summary, cancel, their
items), the report's score table from chosen runs (JSON or CSV) and paired comparisons."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from console.api_errors import FieldErrorsException
from console.api_parsers import JSON_ONLY, UPLOAD_PARSERS
from harness_app.hsa.bfcl_data import CATEGORIES as BFCL_CATEGORIES
from harness_app.models import HarnessVersion
from harness_app.permissions import IsOperator
from training_app import selectors, services
from training_app.evals.score_table import ScoreTableError
from training_app.models import EvalItemResult, EvalRun, EvalSet, JudgeVersion, ModelEndpoint

MAX_RUNS_PER_TABLE = 50


class EvalSetOutput(serializers.ModelSerializer):  # type: ignore[type-arg]
    benchmark = serializers.CharField(read_only=True)

    class Meta:
        model = EvalSet
        fields = [
            "id",
            "name",
            "kind",
            "variant_set",
            "benchmark",
            "harness_version",
            "content_hash",
            "items",
            "source",
            "created_at",
        ]


class EvalSetInput(serializers.Serializer):  # type: ignore[type-arg]
    action = serializers.ChoiceField(
        choices=["build", "upload", "ifeval", "bfcl"],
        help_text="build: from a harness version; upload: a hat-qa-set file; ifeval; bfcl",
    )
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    harness_version_id = serializers.IntegerField(min_value=1, required=False)
    variant_set = serializers.ChoiceField(choices=["", "t1", "t2"], required=False, default="")
    per_type = serializers.IntegerField(min_value=1, max_value=1000, required=False)
    seed = serializers.IntegerField(min_value=0, max_value=2**31 - 1, required=False, default=0)
    file = serializers.FileField(required=False)
    categories = serializers.ListField(
        child=serializers.ChoiceField(choices=list(BFCL_CATEGORIES)), required=False, max_length=20
    )
    per_category = serializers.IntegerField(min_value=1, max_value=2000, required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        needs = {"build": "harness_version_id", "upload": "file", "bfcl": "categories"}
        field = needs.get(attrs["action"])
        if field and not attrs.get(field):
            raise serializers.ValidationError({field: f"required when action is {attrs['action']}"})
        return attrs


class EvalRunOutput(serializers.ModelSerializer):  # type: ignore[type-arg]
    percent = serializers.IntegerField(read_only=True)
    endpoint = serializers.SlugRelatedField(slug_field="name", read_only=True)  # type: ignore[var-annotated]

    class Meta:
        model = EvalRun
        fields = [
            "id",
            "eval_set",
            "endpoint",
            "local_model_dir",
            "model_label",
            "generation",
            "max_concurrency",
            "item_limit",
            "harness_version",
            "variant_set",
            "publish_check",
            "gate_arm",
            "judge_version",
            "status",
            "progress_done",
            "progress_total",
            "percent",
            "cancel_requested",
            "error",
            "summary",
            "versions",
            "created_at",
            "started_at",
            "finished_at",
        ]


class EvalRunInput(serializers.Serializer):  # type: ignore[type-arg]
    eval_set_id = serializers.IntegerField(min_value=1)
    model_label = serializers.CharField(max_length=80)
    endpoint = serializers.CharField(max_length=64, required=False, allow_blank=True, default="")
    local_model_dir = serializers.CharField(
        max_length=500, required=False, allow_blank=True, default=""
    )
    max_tokens = serializers.IntegerField(min_value=1, max_value=32768, required=False)
    max_concurrency = serializers.IntegerField(min_value=1, max_value=64, required=False)
    item_limit = serializers.IntegerField(min_value=1, max_value=1_000_000, required=False)
    harness_version_id = serializers.IntegerField(
        min_value=1,
        max_value=2**31 - 1,
        required=False,
        help_text="Run a Live-Stream set on this harness version (golds follow its renames).",
    )
    variant_set = serializers.ChoiceField(
        choices=["", "t1", "t2"],
        required=False,
        default="",
        help_text="Run each item under a held-out HSA variant of its harness.",
    )
    judge_version_id = serializers.IntegerField(
        min_value=1,
        max_value=2**31 - 1,
        required=False,
        allow_null=True,
        help_text="Live-Stream QA: this judge version scores Effectiveness (optional).",
    )


class EvalItemOutput(serializers.ModelSerializer):  # type: ignore[type-arg]
    class Meta:
        model = EvalItemResult
        fields = [
            "position",
            "item_id",
            "base_id",
            "question_type",
            "passed",
            "score",
            "infrastructure_error",
            "result",
        ]


class EvalSetListApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = EvalSetOutput
    parser_classes = [*JSON_ONLY, *UPLOAD_PARSERS]

    @extend_schema(responses=EvalSetOutput(many=True))
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(selectors.evals.eval_sets_list())
        return self.get_paginated_response(EvalSetOutput(page, many=True).data)

    @extend_schema(request=EvalSetInput, responses={201: EvalSetOutput})
    def post(self, request: Request) -> Response:
        data = EvalSetInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        source = values["action"]
        try:
            if source == "build":
                version = HarnessVersion.objects.filter(pk=values["harness_version_id"]).first()
                if version is None:
                    raise FieldErrorsException.for_field(
                        "harness_version_id", "no such harness version"
                    )
                eval_set = services.evals.eval_set_build_qa(
                    harness_version=version,
                    name=values["name"] or f"QA set of v{version.number}",
                    variant_set=values["variant_set"],
                    per_type=values.get("per_type"),
                    seed=values["seed"],
                    created_by=request.user,
                )
            elif source == "upload":
                eval_set = services.evals.eval_set_upload(
                    name=values["name"], data=values["file"].read(), created_by=request.user
                )
            elif source == "bfcl":
                eval_set = services.evals.eval_set_bfcl(
                    categories=values["categories"],
                    per_category=values.get("per_category"),
                    name=values["name"],
                    created_by=request.user,
                )
            else:
                eval_set = services.evals.eval_set_ifeval(created_by=request.user)
        except services.evals.EvalSetError as exc:
            field = {"upload": "file", "build": "harness_version_id", "bfcl": "categories"}
            raise FieldErrorsException(
                str(exc),
                [{"field": field.get(source, "action"), "message": str(exc)}]
                + [{"field": field.get(source, "action"), "message": p} for p in exc.problems],
            ) from None
        return Response(EvalSetOutput(eval_set).data, status=status.HTTP_201_CREATED)


class EvalSetDetailApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = EvalSetOutput

    @extend_schema(responses=EvalSetOutput)
    def get(self, request: Request, eval_set_id: int) -> Response:
        return Response(EvalSetOutput(selectors.evals.eval_set_get(eval_set_id=eval_set_id)).data)


class EvalRunListApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = EvalRunOutput

    @extend_schema(responses=EvalRunOutput(many=True))
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(selectors.evals.eval_runs_list())
        return self.get_paginated_response(EvalRunOutput(page, many=True).data)

    @extend_schema(request=EvalRunInput, responses={201: EvalRunOutput})
    def post(self, request: Request) -> Response:
        data = EvalRunInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        eval_set = EvalSet.objects.filter(pk=values["eval_set_id"]).first()
        if eval_set is None:
            raise FieldErrorsException.for_field("eval_set_id", "no such eval set")
        endpoint = None
        if values["endpoint"]:
            endpoint = ModelEndpoint.objects.filter(name=values["endpoint"]).first()
            if endpoint is None:
                raise FieldErrorsException.for_field(
                    "endpoint", f"no endpoint named {values['endpoint']!r}"
                )
        version = None
        if "harness_version_id" in values:
            version = HarnessVersion.objects.filter(pk=values["harness_version_id"]).first()
            if version is None:
                raise FieldErrorsException.for_field(
                    "harness_version_id", "no such harness version"
                )
        judge_version = None
        if values.get("judge_version_id") is not None:
            judge_version = JudgeVersion.objects.filter(pk=values["judge_version_id"]).first()
            if judge_version is None:
                raise FieldErrorsException.for_field("judge_version_id", "no such judge version")
        try:
            run = services.evals.eval_run_create(
                eval_set=eval_set,
                model_label=values["model_label"],
                endpoint=endpoint,
                local_model_dir=values["local_model_dir"],
                max_tokens=values.get("max_tokens"),
                max_concurrency=values.get("max_concurrency"),
                item_limit=values.get("item_limit"),
                harness_version=version,
                variant_set=values["variant_set"],
                judge_version=judge_version,
                created_by=request.user,
            )
        except services.evals.EvalRunError as exc:
            raise FieldErrorsException.for_field(exc.field, str(exc)) from None
        return Response(EvalRunOutput(run).data, status=status.HTTP_201_CREATED)


class EvalRunDetailApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = EvalRunOutput

    @extend_schema(responses=EvalRunOutput)
    def get(self, request: Request, run_id: int) -> Response:
        return Response(EvalRunOutput(selectors.evals.eval_run_get(run_id=run_id)).data)


class EvalRunCancelApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = EvalRunOutput

    @extend_schema(request=None, responses=EvalRunOutput)
    def post(self, request: Request, run_id: int) -> Response:
        run = services.evals.eval_run_cancel(run=selectors.evals.eval_run_get(run_id=run_id))
        return Response(EvalRunOutput(run).data)


class EvalRunItemsApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = EvalItemOutput

    @extend_schema(
        parameters=[OpenApiParameter("failed", OpenApiTypes.BOOL, description="failed items only")],
        responses=EvalItemOutput(many=True),
    )
    def get(self, request: Request, run_id: int) -> Response:
        run = selectors.evals.eval_run_get(run_id=run_id)
        failed = request.query_params.get("failed", "") in ("1", "true")
        page = self.paginate_queryset(selectors.evals.eval_run_items(run, failed_only=failed))
        return self.get_paginated_response(EvalItemOutput(page, many=True).data)


def _run_ids(request: Request, parameter: str) -> list[int]:
    raw = request.query_params.get(parameter, "")
    parts = [p for p in raw.split(",") if p.strip()]
    if not parts or len(parts) > MAX_RUNS_PER_TABLE or not all(p.strip().isdigit() for p in parts):
        raise FieldErrorsException.for_field(
            parameter, f"a comma-separated list of 1-{MAX_RUNS_PER_TABLE} run ids, e.g. 3,4,7"
        )
    return [int(p) for p in parts]


def _finished_runs(ids: list[int], parameter: str) -> list[EvalRun]:
    found = {r.pk: r for r in selectors.evals.eval_runs_finished().filter(pk__in=ids)}
    missing = [i for i in ids if i not in found]
    if missing:
        raise FieldErrorsException.for_field(
            parameter, f"no finished eval run with id {', '.join(map(str, missing))}"
        )
    return [found[i] for i in dict.fromkeys(ids)]


class EvalScoreTableApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "runs", OpenApiTypes.STR, required=True, description="run ids, e.g. 3,4,7"
            ),
            OpenApiParameter(
                "export", OpenApiTypes.STR, enum=["csv"], description="csv: the table as CSV"
            ),
        ],
        responses={
            (200, "application/json"): OpenApiTypes.OBJECT,
            (200, "text/csv"): OpenApiTypes.STR,
        },
    )
    def get(self, request: Request) -> Response | HttpResponse:
        runs = _finished_runs(_run_ids(request, "runs"), "runs")
        try:
            report = selectors.evals.score_report(runs)
        except ScoreTableError as exc:
            raise FieldErrorsException.for_field("runs", str(exc)) from None
        if request.query_params.get("export") == "csv":
            return HttpResponse(report.table.to_csv(), content_type="text/csv")
        held_out = [
            {
                "model": h.model,
                "errors": h.errors.total,
                "failed_variants": h.errors.variant_total,
                "definition": h.errors.definition,
                "reduction_vs_reference": None
                if h.reduction is None
                else {
                    "estimate": h.reduction.estimate,
                    "ci_low": h.reduction.ci_low,
                    "ci_high": h.reduction.ci_high,
                },
            }
            for h in report.held_out
        ]
        body = {
            "table": report.table.to_dict(),
            "held_out_edits": held_out,
            "reference_model": report.reference_model,
            "problems": list(report.problems),
        }
        return Response(services.evals.json_safe(body))


class EvalCompareApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]

    @extend_schema(
        parameters=[
            OpenApiParameter("a", OpenApiTypes.INT, required=True, description="run A (reference)"),
            OpenApiParameter("b", OpenApiTypes.INT, required=True, description="run B"),
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request) -> Response:
        run_a = _finished_runs(_run_ids(request, "a")[:1], "a")[0]
        run_b = _finished_runs(_run_ids(request, "b")[:1], "b")[0]
        try:
            comparison = selectors.evals.eval_runs_compare(run_a=run_a, run_b=run_b)
        except selectors.evals.ComparisonError as exc:
            raise FieldErrorsException.for_field("b", str(exc)) from None
        d, m = comparison.difference, comparison.mcnemar
        body = {
            "a": run_a.pk,
            "b": run_b.pk,
            "n": d.n,
            "pass_rate_a": d.mean_a,
            "pass_rate_b": d.mean_b,
            "difference": {
                "estimate": d.estimate,
                "ci_low": d.ci_low,
                "ci_high": d.ci_high,
                "p_value": d.p_value,
            },
            "mcnemar": {
                "only_a": m.only_a,
                "only_b": m.only_b,
                "both_pass": m.both_pass,
                "both_fail": m.both_fail,
                "p_value": m.p_value,
            },
            "items_in_one_run_only": comparison.only_in_one,
        }
        return Response(services.evals.json_safe(body))
