"""Datasets (gold trajectories, HSA-augmented sets) and augmentation jobs. Operators only:
training and evaluation are theirs."""

from __future__ import annotations

from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from console.api_errors import FieldErrorsException
from console.api_parsers import UPLOAD_PARSERS
from harness_app import selectors as harness_selectors
from harness_app.permissions import IsOperator
from training_app import selectors, services
from training_app.api.serializers import (
    AugmentationJobInput,
    AugmentationJobOutput,
    DatasetOutput,
    DatasetUploadInput,
)
from training_app.models import Dataset


class DatasetListApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = DatasetOutput
    parser_classes = UPLOAD_PARSERS

    @extend_schema(responses=DatasetOutput(many=True))
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(selectors.datasets_list())
        return self.get_paginated_response(DatasetOutput(page, many=True).data)

    @extend_schema(request=DatasetUploadInput, responses={201: DatasetOutput})
    def post(self, request: Request) -> Response:
        data = DatasetUploadInput(data=request.data)
        data.is_valid(raise_exception=True)
        harness = harness_selectors.harness_get(
            user=request.user, harness_id=data.validated_data["harness_id"]
        )
        version = harness_selectors.harness_version_get(
            harness=harness, number=data.validated_data["harness_version"]
        )
        try:
            dataset = services.dataset_create_gold(
                harness_version=version,
                name=data.validated_data["name"],
                data=data.validated_data["file"].read(),
                created_by=request.user,
            )
        except services.DatasetImportError as exc:
            raise FieldErrorsException(
                str(exc),
                [
                    {
                        "field": f"file.lines[{e.line}]" if e.line else "file",
                        "line": e.line,
                        "message": e.message,
                    }
                    for e in exc.errors
                ],
            ) from None
        return Response(DatasetOutput(dataset).data, status=status.HTTP_201_CREATED)


class DatasetDetailApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = DatasetOutput

    @extend_schema(responses=DatasetOutput)
    def get(self, request: Request, dataset_id: int) -> Response:
        return Response(DatasetOutput(selectors.dataset_get(dataset_id=dataset_id)).data)


class DatasetDownloadApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = DatasetOutput

    @extend_schema(responses={(200, "application/jsonl"): OpenApiTypes.BINARY})
    def get(self, request: Request, dataset_id: int) -> FileResponse:
        return selectors.dataset_file_response(selectors.dataset_get(dataset_id=dataset_id))


class AugmentationJobListApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = AugmentationJobOutput

    @extend_schema(responses=AugmentationJobOutput(many=True))
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(selectors.augmentation_jobs_list())
        return self.get_paginated_response(AugmentationJobOutput(page, many=True).data)

    @extend_schema(request=AugmentationJobInput, responses={201: AugmentationJobOutput})
    def post(self, request: Request) -> Response:
        data = AugmentationJobInput(data=request.data)
        data.is_valid(raise_exception=True)
        source = selectors.dataset_get(dataset_id=data.validated_data["dataset"])
        if source.kind != Dataset.Kind.GOLD:
            raise ValidationError({"dataset": "augment a gold dataset, not an augmented one"})
        job = services.augmentation_job_create(
            source=source,
            policy=data.validated_data["policy"],
            seed=data.validated_data["seed"],
            variants=data.validated_data["variants"],
            created_by=request.user,
        )
        return Response(AugmentationJobOutput(job).data, status=status.HTTP_201_CREATED)


class AugmentationJobDetailApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = AugmentationJobOutput

    @extend_schema(responses=AugmentationJobOutput)
    def get(self, request: Request, job_id: int) -> Response:
        return Response(AugmentationJobOutput(selectors.augmentation_job_get(job_id=job_id)).data)


class AugmentationJobCancelApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = AugmentationJobOutput

    @extend_schema(request=None, responses=AugmentationJobOutput)
    def post(self, request: Request, job_id: int) -> Response:
        job = services.augmentation_job_cancel(job=selectors.augmentation_job_get(job_id=job_id))
        return Response(AugmentationJobOutput(job).data)
