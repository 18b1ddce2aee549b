"""Input and output of the datasets and HSA augmentation API."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from harness_app.hsa import POLICIES
from training_app.models import AugmentationJob, Dataset


class DatasetOutput(serializers.ModelSerializer[Dataset]):
    harness_id = serializers.IntegerField(source="harness_version.harness_id")
    harness_version = serializers.IntegerField(source="harness_version.number")
    source_id = serializers.IntegerField(allow_null=True)
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)

    class Meta:
        model = Dataset
        fields = [
            "id",
            "name",
            "kind",
            "harness_id",
            "harness_version",
            "source_id",
            "examples",
            "sha256",
            "provenance",
            "created_by",
            "created_at",
        ]


class DatasetUploadInput(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=120)
    harness_id = serializers.IntegerField(min_value=1)
    harness_version = serializers.IntegerField(min_value=1)
    file = serializers.FileField(help_text="JSONL, one gold trajectory per line.")


class AugmentationJobInput(serializers.Serializer[Any]):
    dataset = serializers.IntegerField(min_value=1, help_text="A gold dataset id.")
    policy = serializers.ChoiceField(choices=sorted(POLICIES))
    seed = serializers.IntegerField(min_value=0, max_value=2**62, default=0)
    variants = serializers.IntegerField(min_value=1, max_value=64, default=1)


class AugmentationJobOutput(serializers.ModelSerializer[AugmentationJob]):
    percent = serializers.IntegerField()
    output_id = serializers.IntegerField(allow_null=True)
    source_id = serializers.IntegerField()

    class Meta:
        model = AugmentationJob
        fields = [
            "id",
            "source_id",
            "policy",
            "seed",
            "variants",
            "status",
            "progress_done",
            "progress_total",
            "percent",
            "failures",
            "error",
            "cancel_requested",
            "output_id",
            "created_at",
            "started_at",
            "finished_at",
        ]


class TransformOutput(serializers.Serializer[Any]):
    name = serializers.CharField()
    family = serializers.CharField()
    split = serializers.CharField()


class PolicyOutput(serializers.Serializer[Any]):
    name = serializers.CharField()
    split = serializers.CharField()
    k = serializers.IntegerField()
    transforms = serializers.ListField(child=serializers.CharField())
