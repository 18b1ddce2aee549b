"""Harnesses and their immutable versions: edit (new draft), publish, rollback, diff,
zip import/export."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from console.api_parsers import UPLOAD_PARSERS
from console.api_query_params import query_int_required
from harness_app import selectors, services
from harness_app.api.errors import Conflict, StateConflict, harness_invalid
from harness_app.api.serializers import (
    ConflictOutput,
    DiffOutput,
    HarnessImportInput,
    HarnessOutput,
    HarnessVersionCreateInput,
    HarnessVersionOutput,
    HarnessVersionSummaryOutput,
    PublishInput,
    RollbackInput,
)
from harness_app.harness.archive import export_harness_zip
from harness_app.harness.errors import HarnessValidationError
from harness_app.harness.model import Harness as HarnessContent
from harness_app.harness.serialization import harness_from_dict, harness_from_yaml
from harness_app.models import HarnessVersion
from harness_app.permissions import IsConsoleUser

# Version numbers are a PositiveIntegerField.
MAX_VERSION = 2_147_483_647
VERSION_PARAM = {"type": "integer", "minimum": 1, "maximum": MAX_VERSION}


class HarnessListApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = HarnessOutput

    @extend_schema(responses=HarnessOutput(many=True))
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(selectors.harnesses_visible_to(request.user))
        return self.get_paginated_response(HarnessOutput(page, many=True).data)


class HarnessDetailApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = HarnessOutput

    @extend_schema(responses=HarnessOutput)
    def get(self, request: Request, harness_id: int) -> Response:
        return Response(
            HarnessOutput(selectors.harness_get(user=request.user, harness_id=harness_id)).data
        )


class HarnessVersionListApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = HarnessVersionSummaryOutput

    @extend_schema(responses=HarnessVersionSummaryOutput(many=True))
    def get(self, request: Request, harness_id: int) -> Response:
        harness = selectors.harness_get(user=request.user, harness_id=harness_id)
        page = self.paginate_queryset(selectors.harness_versions(harness))
        return self.get_paginated_response(HarnessVersionSummaryOutput(page, many=True).data)

    @extend_schema(
        request=HarnessVersionCreateInput,
        responses={201: HarnessVersionOutput, 409: ConflictOutput},
        description="Save an edit as a new draft version. `base_version` must be the latest "
        "version; otherwise the answer is 409 and names the newer version.",
    )
    def post(self, request: Request, harness_id: int) -> Response:
        harness = selectors.harness_get(user=request.user, harness_id=harness_id)
        data = HarnessVersionCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        content = _parse_content(data.validated_data)
        try:
            version = services.harness_version_create(
                harness=harness,
                content=content,
                base_version=data.validated_data["base_version"],
                author=request.user,
                message=data.validated_data["message"],
            )
        except HarnessValidationError as exc:
            raise harness_invalid(exc) from None
        except services.StaleBaseVersion as exc:
            raise Conflict(exc) from None
        return Response(HarnessVersionOutput(version).data, status=status.HTTP_201_CREATED)


def _parse_content(validated: dict[str, object]) -> HarnessContent:
    try:
        if "content_yaml" in validated:
            return harness_from_yaml(str(validated["content_yaml"]))
        content = validated["content"]
        if not isinstance(content, dict):
            raise ValidationError(
                {"content": "must be a JSON object with skills, tools, prompt, hooks"}
            )
        return harness_from_dict(content)
    except HarnessValidationError as exc:
        raise harness_invalid(
            exc, prefix="content_yaml" if "content_yaml" in validated else "content"
        ) from None


class HarnessVersionDetailApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = HarnessVersionOutput

    @extend_schema(responses=HarnessVersionOutput)
    def get(self, request: Request, harness_id: int, number: int) -> Response:
        harness = selectors.harness_get(user=request.user, harness_id=harness_id)
        return Response(
            HarnessVersionOutput(selectors.harness_version_get(harness=harness, number=number)).data
        )


class HarnessVersionPublishApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = HarnessVersionSummaryOutput

    @extend_schema(
        request=PublishInput, responses={200: HarnessVersionSummaryOutput, 409: ConflictOutput}
    )
    def post(self, request: Request, harness_id: int, number: int) -> Response:
        harness = selectors.harness_get(user=request.user, harness_id=harness_id)
        version = selectors.harness_version_get(harness=harness, number=number)
        data = PublishInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            version = services.harness_version_publish(
                version=version,
                by=request.user,
                override_reason=data.validated_data["override_reason"],
            )
        except services.PublishBlocked as exc:
            raise harness_invalid(HarnessValidationError(exc.errors)) from None
        except services.VersionStateError as exc:
            raise StateConflict(exc) from None
        return Response(HarnessVersionSummaryOutput(version).data)


class HarnessRollbackApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = RollbackInput

    @extend_schema(
        request=RollbackInput, responses={200: HarnessVersionSummaryOutput, 409: ConflictOutput}
    )
    def post(self, request: Request, harness_id: int) -> Response:
        harness = selectors.harness_get(user=request.user, harness_id=harness_id)
        data = RollbackInput(data=request.data)
        data.is_valid(raise_exception=True)
        selectors.harness_version_get(harness=harness, number=data.validated_data["to_version"])
        try:
            version = services.harness_rollback(
                harness=harness, to_number=data.validated_data["to_version"]
            )
        except services.PublishBlocked as exc:
            raise harness_invalid(HarnessValidationError(exc.errors)) from None
        except services.VersionStateError as exc:
            raise StateConflict(exc) from None
        return Response(HarnessVersionSummaryOutput(version).data)


class HarnessDiffApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = DiffOutput

    @extend_schema(
        parameters=[
            OpenApiParameter(name, VERSION_PARAM, required=True, description=f"{age} version")
            for name, age in (("from", "older"), ("to", "newer"))
        ],
        responses=DiffOutput,
    )
    def get(self, request: Request, harness_id: int) -> Response:
        harness = selectors.harness_get(user=request.user, harness_id=harness_id)
        numbers = {
            param: query_int_required(request, param, minimum=1, maximum=MAX_VERSION)
            for param in ("from", "to")
        }
        old, new, changes = selectors.harness_versions_diff(
            harness=harness, from_number=numbers["from"], to_number=numbers["to"]
        )
        body = {
            "from_version": old.number,
            "to_version": new.number,
            "changes": [
                {
                    "component": c.component,
                    "name": c.name,
                    "kind": c.kind,
                    "details": list(c.details),
                    "summary": c.describe(),
                }
                for c in changes
            ],
        }
        return Response(DiffOutput(body).data)


class HarnessVersionExportApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = HarnessVersionSummaryOutput

    @extend_schema(responses={(200, "application/zip"): OpenApiTypes.BINARY})
    def get(self, request: Request, harness_id: int, number: int) -> HttpResponse:
        harness = selectors.harness_get(user=request.user, harness_id=harness_id)
        version = selectors.harness_version_get(harness=harness, number=number)
        data = export_harness_zip(selectors.harness_version_content(version))
        response = HttpResponse(data, content_type="application/zip")
        response["Content-Disposition"] = (
            f'attachment; filename="harness-{harness.pk}-v{number}.zip"'
        )
        return response


class HarnessImportApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    parser_classes = UPLOAD_PARSERS
    serializer_class = HarnessImportInput

    @extend_schema(
        request=HarnessImportInput, responses={201: HarnessVersionOutput, 409: ConflictOutput}
    )
    def post(self, request: Request, harness_id: int) -> Response:
        harness = selectors.harness_get(user=request.user, harness_id=harness_id)
        data = HarnessImportInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            version: HarnessVersion = services.harness_version_import_zip(
                harness=harness,
                data=data.validated_data["file"].read(),
                base_version=data.validated_data["base_version"],
                author=request.user,
                message=data.validated_data["message"],
            )
        except HarnessValidationError as exc:
            raise harness_invalid(exc, prefix="file") from None
        except services.StaleBaseVersion as exc:
            raise Conflict(exc) from None
        return Response(HarnessVersionOutput(version).data, status=status.HTTP_201_CREATED)
