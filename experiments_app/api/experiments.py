"""Experiments API: operators create, start, stop and re-allocate; operators and the
merchants who own every room of an experiment read it and its readout."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from console.api_query_params import query_int
from console.roles import is_operator
from experiments_app import selectors, services
from experiments_app.api.experiment_serializers import (
    AllocationInput,
    ExperimentInput,
    ExperimentOutput,
    ReadoutOutput,
    basis_points,
)
from experiments_app.models import Experiment
from experiments_app.readout_export import readout_dict
from experiments_app.readouts import experiment_readout
from harness_app.api.errors import FieldErrorsException
from harness_app.permissions import IsConsoleUser, IsOperator

# Phases are numbered from 1 (a PositiveSmallIntegerField).
MAX_PHASE = 32_767
ERRORS = OpenApiResponse(description="invalid input or state; `errors` name the fields")


def config_invalid(exc: services.ExperimentConfigError) -> FieldErrorsException:
    errors = [{"field": f, "message": m} for f, m in exc.errors]
    return FieldErrorsException(str(exc), errors)


def spec_from(data: dict[str, Any]) -> services.ExperimentSpec:
    return services.ExperimentSpec(
        name=data["name"],
        hypothesis=data.get("hypothesis", ""),
        rooms=data["rooms"],
        unit=data["unit"],
        primary_metric=data["primary_metric"],
        secondary_metrics=data["secondary_metrics"],
        guardrails=[dict(g) for g in data.get("guardrails", [])],
        arms=[
            services.ArmSpec(
                name=arm["name"],
                kind=arm["kind"],
                harness_version=arm["harness_version"],
                endpoint=arm["endpoint"],
                weight=basis_points(arm["weight"]),
            )
            for arm in data["arms"]
        ],
        coverage=basis_points(data["coverage"]),
        layer=data["layer"],
        layer_start=data["layer_start"],
        layer_end=data["layer_end"],
        cuped=data["cuped"],
        sequential=data["sequential"],
        planned_units=data.get("planned_units"),
        alpha=data["alpha"],
    )


def _reload(experiment: Experiment, request: Request) -> Experiment:
    return selectors.experiment_get(user=request.user, experiment_id=experiment.pk)


class ExperimentListApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = ExperimentOutput

    @extend_schema(responses=ExperimentOutput(many=True))
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(selectors.experiments_visible_to(request.user))
        return self.get_paginated_response(ExperimentOutput(page, many=True).data)

    @extend_schema(
        request=ExperimentInput,
        responses={201: ExperimentOutput, 400: ERRORS},
        description="Create a draft (operators). Arm weights are percentages summing to 100.",
    )
    def post(self, request: Request) -> Response:
        if not is_operator(request.user):
            self.permission_denied(request, message=IsOperator.message)
        data = ExperimentInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            experiment = services.experiment_create(
                spec=spec_from(data.validated_data), created_by=request.user
            )
        except services.ExperimentConfigError as exc:
            raise config_invalid(exc) from None
        return Response(
            ExperimentOutput(_reload(experiment, request)).data, status=status.HTTP_201_CREATED
        )


class ExperimentDetailApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = ExperimentOutput

    @extend_schema(responses=ExperimentOutput)
    def get(self, request: Request, experiment_id: int) -> Response:
        experiment = selectors.experiment_get(user=request.user, experiment_id=experiment_id)
        return Response(ExperimentOutput(experiment).data)

    @extend_schema(
        request=ExperimentInput,
        responses={200: ExperimentOutput, 400: ERRORS},
        description="Replace a draft's configuration (operators; drafts only).",
    )
    def put(self, request: Request, experiment_id: int) -> Response:
        experiment = selectors.experiment_get(user=request.user, experiment_id=experiment_id)
        if not is_operator(request.user):
            self.permission_denied(request, message=IsOperator.message)
        data = ExperimentInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            services.experiment_update(experiment=experiment, spec=spec_from(data.validated_data))
        except services.ExperimentConfigError as exc:
            raise config_invalid(exc) from None
        return Response(ExperimentOutput(_reload(experiment, request)).data)


class _ExperimentActionApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = ExperimentOutput

    def _operator_experiment(self, request: Request, experiment_id: int) -> Experiment:
        experiment = selectors.experiment_get(user=request.user, experiment_id=experiment_id)
        if not is_operator(request.user):
            self.permission_denied(request, message=IsOperator.message)
        return experiment


class ExperimentStartApi(_ExperimentActionApi):
    @extend_schema(
        request=None,
        responses={200: ExperimentOutput, 400: ERRORS},
        description="Start a draft. Refused (nothing changes) when an arm pins a harness "
        "version that was never published, uses an inactive endpoint, or another running "
        "experiment shares a room without being mutually exclusive.",
    )
    def post(self, request: Request, experiment_id: int) -> Response:
        experiment = self._operator_experiment(request, experiment_id)
        try:
            services.experiment_start(experiment=experiment)
        except services.ExperimentConfigError as exc:
            raise config_invalid(exc) from None
        return Response(ExperimentOutput(_reload(experiment, request)).data)


class ExperimentStopApi(_ExperimentActionApi):
    @extend_schema(request=None, responses={200: ExperimentOutput, 400: ERRORS})
    def post(self, request: Request, experiment_id: int) -> Response:
        experiment = self._operator_experiment(request, experiment_id)
        try:
            services.experiment_stop(experiment=experiment)
        except services.ExperimentConfigError as exc:
            raise config_invalid(exc) from None
        return Response(ExperimentOutput(_reload(experiment, request)).data)


class ExperimentAllocationApi(_ExperimentActionApi):
    @extend_schema(
        request=AllocationInput,
        responses={200: ExperimentOutput, 400: ERRORS},
        description="New weights (percent per arm name) and/or coverage: starts a new phase. "
        "Assigned units keep their arm; the readout analyses cohorts with different weights "
        "separately.",
    )
    def post(self, request: Request, experiment_id: int) -> Response:
        experiment = self._operator_experiment(request, experiment_id)
        data = AllocationInput(data=request.data)
        data.is_valid(raise_exception=True)
        weights = data.validated_data.get("weights")
        coverage = data.validated_data.get("coverage")
        try:
            services.experiment_change_allocation(
                experiment=experiment,
                weights={k: basis_points(v) for k, v in weights.items()} if weights else None,
                coverage=basis_points(coverage) if coverage is not None else None,
            )
        except services.ExperimentConfigError as exc:
            raise config_invalid(exc) from None
        return Response(ExperimentOutput(_reload(experiment, request)).data)


class ExperimentReadoutApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = ReadoutOutput

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "phase",
                {"type": "integer", "minimum": 1, "maximum": MAX_PHASE},
                description="analyse the cohorts of the weight group holding this phase "
                "(default: the current phase)",
            )
        ],
        responses=ReadoutOutput,
        description="Per metric and arm: means, absolute and relative lift with CIs and "
        "p-values (Welch or cluster ratio estimator by unit; CUPED; Holm across comparisons), "
        "per-day effects with Cochran's Q, the cumulative series, SRM and guardrails.",
    )
    def get(self, request: Request, experiment_id: int) -> Response:
        experiment = selectors.experiment_get(user=request.user, experiment_id=experiment_id)
        number = query_int(request, "phase", minimum=1, maximum=MAX_PHASE)
        if number is not None:
            numbers = selectors.experiment_phase_numbers(experiment)
            if number not in numbers:
                known = f"1 to {numbers[-1]}" if numbers else "none yet (it has not started)"
                raise ValidationError({"phase": f"no phase {number}; this experiment's: {known}"})
        readout = experiment_readout(experiment=experiment, phase=number)
        return Response(ReadoutOutput(readout_dict(readout)).data)
