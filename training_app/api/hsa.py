"""HSA catalog (families, transforms, policies) and a preview of one augmentation of a
harness version: the augmented harness, its mapping and the semantic diff."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from harness_app import selectors as harness_selectors
from harness_app.harness.serialization import harness_to_dict
from harness_app.permissions import IsConsoleUser
from training_app.api.serializers import PolicyOutput, TransformOutput
from training_app.services import hsa_preview


class HsaCatalogOutput(serializers.Serializer[Any]):
    transforms = TransformOutput(many=True)
    policies = PolicyOutput(many=True)


class HsaPreviewInput(serializers.Serializer[Any]):
    policy = serializers.CharField(required=False, help_text="A named policy, or ...")
    transforms = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        max_length=40,
        help_text="... transform names, applied in order.",
    )
    seed = serializers.IntegerField(min_value=0, max_value=2**62, default=0)


class HsaPreviewOutput(serializers.Serializer[Any]):
    original = serializers.JSONField()
    augmented = serializers.JSONField()
    mapping = serializers.JSONField()
    provenance = serializers.JSONField()
    prompt_layout = serializers.CharField()
    changes = serializers.ListField(child=serializers.CharField())


class HsaCatalogApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = HsaCatalogOutput

    @extend_schema(responses=HsaCatalogOutput)
    def get(self, request: Request) -> Response:
        return Response(HsaCatalogOutput(hsa_preview.catalog()).data)


class HsaPreviewApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = HsaPreviewInput

    @extend_schema(request=HsaPreviewInput, responses=HsaPreviewOutput)
    def post(self, request: Request, harness_id: int, number: int) -> Response:
        harness = harness_selectors.harness_get(user=request.user, harness_id=harness_id)
        version = harness_selectors.harness_version_get(harness=harness, number=number)
        data = HsaPreviewInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            preview = hsa_preview.preview(
                content=harness_selectors.harness_version_content(version),
                policy=data.validated_data.get("policy"),
                transforms=data.validated_data.get("transforms"),
                seed=data.validated_data["seed"],
            )
        except hsa_preview.PreviewInputError as exc:
            raise ValidationError({exc.field: str(exc)}) from None
        return Response(
            HsaPreviewOutput(
                {
                    "original": harness_to_dict(preview.original),
                    "augmented": harness_to_dict(preview.example.harness),
                    "mapping": preview.example.mapping.to_dict(),
                    "provenance": preview.example.provenance,
                    "prompt_layout": preview.example.prompt_layout,
                    "changes": [c.describe() for c in preview.changes],
                }
            ).data
        )
