"""Training runs: list/create/get, stages, live metrics, cancel, resume, the YAML config, and
registering the result as a model endpoint. Operators only."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from console.api_errors import FieldErrorsException
from harness_app.permissions import IsOperator
from training_app import selectors
from training_app.api.serializers import (
    CompareSeriesOutput,
    RegisteredEndpointOutput,
    RunMetricsOutput,
    StageRunDetailOutput,
    TrainingRunInput,
    TrainingRunOutput,
)
from training_app.models import TrainingRun
from training_app.services import run_config, runs

AFTER_PATTERN = re.compile(r"^\d+:\d+(,\d+:\d+)*$")
MAX_COMPARE = 8


def config_errors(exc: run_config.RunConfigError) -> FieldErrorsException:
    return FieldErrorsException(
        "The training run config has errors.",
        [{"field": field, "message": message} for field, message in exc.errors.items()],
    )


class TrainingRunListApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = TrainingRunOutput

    @extend_schema(responses=TrainingRunOutput(many=True))
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(selectors.runs_list())
        return self.get_paginated_response(TrainingRunOutput(page, many=True).data)

    @extend_schema(request=TrainingRunInput, responses={201: TrainingRunOutput})
    def post(self, request: Request) -> Response:
        TrainingRunInput(data=request.data).is_valid(raise_exception=True)
        try:
            run = runs.run_create(config=dict(request.data), created_by=request.user)
        except run_config.RunConfigError as exc:
            raise config_errors(exc) from None
        return Response(
            TrainingRunOutput(selectors.run_get(run_id=run.pk)).data,
            status=status.HTTP_201_CREATED,
        )


class TrainingRunDetailApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = TrainingRunOutput

    @extend_schema(responses=TrainingRunOutput)
    def get(self, request: Request, run_id: int) -> Response:
        return Response(TrainingRunOutput(selectors.run_get(run_id=run_id)).data)


class StageRunDetailApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = StageRunDetailOutput

    @extend_schema(responses=StageRunDetailOutput)
    def get(self, request: Request, run_id: int, stage_id: int) -> Response:
        run = selectors.run_get(run_id=run_id)
        return Response(StageRunDetailOutput(selectors.stage_get(run=run, stage_id=stage_id)).data)


def parse_after(value: str) -> dict[int, int]:
    if not value:
        return {}
    if not AFTER_PATTERN.match(value):
        raise ValidationError({"after": "a list of stage_id:step pairs, e.g. 12:40,13:0"})
    pairs = (item.split(":") for item in value.split(","))
    return {int(stage): int(step) for stage, step in pairs}


def run_metrics_payload(run: TrainingRun, after: dict[int, int]) -> dict[str, Any]:
    series = selectors.run_metric_series(run=run, after=after)
    return {
        "run_status": run.status,
        "stages": [
            {
                "stage_id": stage.pk,
                "kind": stage.kind,
                "status": stage.status,
                "cancel_requested": stage.cancel_requested,
                "progress_step": stage.progress_step,
                "progress_total": stage.progress_total,
                "percent": stage.percent,
                "eta_seconds": stage.eta_seconds,
                "series": series.get(stage.pk, {}),
            }
            for stage in run.stage_runs.all()
        ],
    }


class TrainingRunMetricsApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = RunMetricsOutput

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "after",
                str,
                description="Only steps after these, per stage: stage_id:step,... (polling).",
            )
        ],
        responses=RunMetricsOutput,
    )
    def get(self, request: Request, run_id: int) -> Response:
        after = parse_after(request.query_params.get("after", ""))
        run = selectors.run_get(run_id=run_id)
        return Response(run_metrics_payload(run, after))


class TrainingRunCancelApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = TrainingRunOutput

    @extend_schema(request=None, responses=TrainingRunOutput)
    def post(self, request: Request, run_id: int) -> Response:
        runs.run_cancel(run=selectors.run_get(run_id=run_id))
        return Response(TrainingRunOutput(selectors.run_get(run_id=run_id)).data)


class _RunStateChangeApi(GenericAPIView):  # type: ignore[type-arg]
    """POST moves the run through ``change``; a refusal is a 400 on ``status`` naming why."""

    permission_classes = [IsOperator]
    serializer_class = TrainingRunOutput
    change: Callable[..., Any]
    refusal: type[Exception]

    @extend_schema(request=None, responses=TrainingRunOutput)
    def post(self, request: Request, run_id: int) -> Response:
        try:
            type(self).change(run=selectors.run_get(run_id=run_id))
        except self.refusal as exc:
            raise ValidationError({"status": str(exc)}) from None
        return Response(TrainingRunOutput(selectors.run_get(run_id=run_id)).data)


class TrainingRunStartApi(_RunStateChangeApi):
    change = runs.run_start
    refusal = runs.StartError


class TrainingRunResumeApi(_RunStateChangeApi):
    change = runs.run_resume
    refusal = runs.ResumeError


class TrainingRunConfigApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = TrainingRunOutput

    @extend_schema(responses={(200, "application/yaml"): OpenApiTypes.STR})
    def get(self, request: Request, run_id: int) -> HttpResponse:
        run = selectors.run_get(run_id=run_id)
        response = HttpResponse(
            run_config.run_config_yaml(run), content_type="application/yaml; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="training-run-{run.pk}.yaml"'
        return response


class TrainingRunEndpointApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = RegisteredEndpointOutput

    @extend_schema(request=None, responses={201: RegisteredEndpointOutput})
    def post(self, request: Request, run_id: int) -> Response:
        run = selectors.run_get(run_id=run_id)
        try:
            endpoint = runs.run_register_endpoint(run=run)
        except runs.EndpointRegistrationError as exc:
            raise ValidationError({"status": str(exc)}) from None
        body = {
            "id": endpoint.pk,
            "name": endpoint.name,
            "base_url": endpoint.base_url,
            "model_name": endpoint.model_name,
            "role": endpoint.role,
            "tool_mode": endpoint.tool_mode,
            "serve_command": runs.run_serve_command(run) or [],
        }
        return Response(RegisteredEndpointOutput(body).data, status=status.HTTP_201_CREATED)


class TrainingRunCompareApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = CompareSeriesOutput
    pagination_class = None  # a plain list (at most MAX_COMPARE runs): the schema must say so

    @extend_schema(
        parameters=[
            OpenApiParameter("runs", str, required=True, description="Run ids, e.g. 3,5"),
            OpenApiParameter("metric", str, required=True, description="e.g. loss"),
        ],
        responses=CompareSeriesOutput(many=True),
    )
    def get(self, request: Request) -> Response:
        return Response(
            CompareSeriesOutput(
                selectors.runs_metric_compare(**parse_compare(request.query_params)), many=True
            ).data
        )


def parse_compare(params: Any) -> dict[str, Any]:
    raw = params.get("runs", "")
    metric = params.get("metric", "")
    errors: dict[str, str] = {}
    if not re.fullmatch(r"\d+(,\d+)*", raw):
        errors["runs"] = "comma-separated run ids, e.g. 3,5"
    elif len(raw.split(",")) > MAX_COMPARE:
        errors["runs"] = f"at most {MAX_COMPARE} runs"
    if not metric or len(metric) > 100:
        errors["metric"] = "a metric name, e.g. loss"
    if errors:
        raise ValidationError(errors)
    return {"run_ids": [int(x) for x in raw.split(",")], "name": metric}
