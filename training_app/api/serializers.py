"""Input and output of the datasets and HSA augmentation API."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from harness_app.hsa import POLICIES
from training_app.models import (
    AugmentationJob,
    Dataset,
    StageAttempt,
    StageRun,
    TrainingRun,
)


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


class HarnessVersionRef(serializers.Serializer[Any]):
    harness = serializers.IntegerField(min_value=1)
    version = serializers.IntegerField(min_value=1)


class TrainingRunInput(serializers.Serializer[Any]):
    """The run's config (the same fields as its YAML). Checked by the service, which names
    every bad field (``params.hsa_sft.max_steps``, ``harness_versions[0]``)."""

    name = serializers.CharField(max_length=120)
    base_model_dir = serializers.CharField(max_length=500, required=False)
    teacher = serializers.CharField(
        max_length=64, required=False, help_text="'gold' or a model endpoint name."
    )
    harness_versions = HarnessVersionRef(many=True)
    datasets = serializers.ListField(child=serializers.IntegerField(), required=False)
    catalog_tasks = serializers.BooleanField(required=False)
    hsa_policy = serializers.CharField(
        max_length=64, required=False, allow_blank=True, help_text="A training policy or ''."
    )
    stages = serializers.ListField(child=serializers.ChoiceField(choices=StageRun.Kind.choices))
    params = serializers.DictField(
        child=serializers.DictField(), required=False, help_text="Per-stage parameters."
    )
    seed = serializers.IntegerField(required=False)


class StageAttemptOutput(serializers.ModelSerializer[StageAttempt]):
    class Meta:
        model = StageAttempt
        fields = ["number", "worker", "start_step", "end_step", "outcome", "started_at", "ended_at"]


class StageRunOutput(serializers.ModelSerializer[StageRun]):
    percent = serializers.IntegerField()
    eta_seconds = serializers.FloatField(allow_null=True)

    class Meta:
        model = StageRun
        fields = [
            "id",
            "kind",
            "order",
            "status",
            "progress_step",
            "progress_total",
            "percent",
            "eta_seconds",
            "attempts",
            "started_at",
            "finished_at",
            "heartbeat_at",
            "lease_owner",
            "checkpoint_dir",
            "final_dir",
            "error",
            "cancel_requested",
        ]


class StageRunDetailOutput(StageRunOutput):
    attempt_rows = StageAttemptOutput(many=True)

    class Meta(StageRunOutput.Meta):
        fields = [*StageRunOutput.Meta.fields, "summary", "log_tail", "attempt_rows"]


class TrainingRunOutput(serializers.ModelSerializer[TrainingRun]):
    stages = serializers.ListField(child=serializers.CharField())
    stage_runs = StageRunOutput(many=True)
    teacher = serializers.CharField(source="teacher.name", default="gold")
    result_endpoint = serializers.CharField(
        source="result_endpoint.name", default=None, allow_null=True
    )
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)

    class Meta:
        model = TrainingRun
        fields = [
            "id",
            "name",
            "status",
            "base_model_dir",
            "teacher",
            "hsa_policy",
            "stages",
            "params",
            "seed",
            "catalog_tasks",
            "stage_runs",
            "result_endpoint",
            "created_by",
            "created_at",
            "updated_at",
        ]


class MetricSeries(serializers.Serializer[Any]):
    step = serializers.ListField(child=serializers.IntegerField())
    value = serializers.ListField(child=serializers.FloatField())


class StageMetricsOutput(serializers.Serializer[Any]):
    stage_id = serializers.IntegerField()
    kind = serializers.CharField()
    status = serializers.CharField()
    cancel_requested = serializers.BooleanField(help_text="running and asked to stop")
    progress_step = serializers.IntegerField()
    progress_total = serializers.IntegerField()
    percent = serializers.IntegerField()
    eta_seconds = serializers.FloatField(allow_null=True)
    series = serializers.DictField(child=MetricSeries())


class RunMetricsOutput(serializers.Serializer[Any]):
    run_status = serializers.CharField()
    stages = StageMetricsOutput(many=True)


class CompareSeriesOutput(serializers.Serializer[Any]):
    run_id = serializers.IntegerField()
    name = serializers.CharField()
    step = serializers.ListField(child=serializers.IntegerField())
    value = serializers.ListField(child=serializers.FloatField())


class RegisteredEndpointOutput(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    base_url = serializers.CharField()
    model_name = serializers.CharField()
    role = serializers.CharField()
    tool_mode = serializers.CharField()
    serve_command = serializers.ListField(child=serializers.CharField())
