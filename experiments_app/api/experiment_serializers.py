"""Input and output of the experiments API and the events API.

Weights and coverage are percentages with up to two decimals on the wire (80, 33.33) and
basis points inside (8000, 3333).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from experiments_app.models import Experiment, ExperimentArm, ExperimentPhase
from experiments_app.services import GUARDRAIL_METRICS, percent
from harness_app.models import HarnessVersion, Room
from training_app.models import ModelEndpoint


def percent_field(**kwargs: Any) -> serializers.DecimalField:
    """A percentage with up to two decimals, 0.01 to 100."""
    return serializers.DecimalField(
        max_digits=5,
        decimal_places=2,
        min_value=Decimal("0.01"),
        max_value=Decimal(100),
        **kwargs,
    )


def basis_points(value: Decimal) -> int:
    return int((value * 100).to_integral_value())


class ArmInput(serializers.Serializer[Any]):
    name = serializers.RegexField(r"^[a-z0-9][a-z0-9_-]{0,39}$", help_text="e.g. control")
    kind = serializers.ChoiceField(choices=ExperimentArm.Kind.choices)
    harness_version = serializers.PrimaryKeyRelatedField(
        queryset=HarnessVersion.objects.select_related("harness").defer("content")
    )
    endpoint = serializers.PrimaryKeyRelatedField(queryset=ModelEndpoint.objects.all())
    weight = percent_field(help_text="percent of the traffic; all arms sum to 100")


class GuardrailInput(serializers.Serializer[Any]):
    metric = serializers.ChoiceField(choices=sorted(GUARDRAIL_METRICS))
    tolerance = serializers.FloatField(
        min_value=0, max_value=100, help_text="allowed relative increase over control (0.2 = +20%)"
    )


class ExperimentInput(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=120)
    hypothesis = serializers.CharField(allow_blank=True, required=False, default="")
    rooms = serializers.PrimaryKeyRelatedField(
        queryset=Room.objects.all(), many=True, allow_empty=False
    )
    unit = serializers.ChoiceField(choices=Experiment.Unit.choices, default=Experiment.Unit.UV)
    primary_metric = serializers.ChoiceField(
        choices=Experiment.Metric.choices, default=Experiment.Metric.GMV
    )
    secondary_metrics = serializers.ListField(
        child=serializers.ChoiceField(choices=Experiment.Metric.choices),
        default=list,
        max_length=2,
    )
    guardrails = GuardrailInput(many=True, required=False, default=list)
    arms = ArmInput(many=True)
    coverage = percent_field(default=Decimal(100), help_text="percent of units")
    layer = serializers.RegexField(r"^[a-z0-9][a-z0-9_-]{0,63}$", default="default")
    layer_start = serializers.IntegerField(min_value=0, max_value=10_000, default=0)
    layer_end = serializers.IntegerField(min_value=1, max_value=10_000, default=10_000)
    cuped = serializers.BooleanField(default=True)
    sequential = serializers.BooleanField(default=False)
    planned_units = serializers.IntegerField(min_value=2, required=False, allow_null=True)
    alpha = serializers.FloatField(min_value=0.0001, max_value=0.49, default=0.05)


class AllocationInput(serializers.Serializer[Any]):
    weights = serializers.DictField(
        child=percent_field(),
        required=False,
        help_text="new weight per arm name, in percent, summing to 100",
    )
    coverage = percent_field(required=False, help_text="new coverage in percent")


class ArmOutput(serializers.ModelSerializer[ExperimentArm]):
    weight = serializers.SerializerMethodField()
    harness_version_number = serializers.IntegerField(source="harness_version.number")
    endpoint_name = serializers.CharField(source="endpoint.name")

    class Meta:
        model = ExperimentArm
        fields = [
            "id",
            "name",
            "position",
            "kind",
            "harness_version",
            "harness_version_number",
            "endpoint",
            "endpoint_name",
            "weight",
        ]

    def get_weight(self, arm: ExperimentArm) -> str:
        return percent(arm.weight)


class PhaseOutput(serializers.ModelSerializer[ExperimentPhase]):
    coverage = serializers.SerializerMethodField()
    weights = serializers.SerializerMethodField()

    class Meta:
        model = ExperimentPhase
        fields = ["number", "coverage", "weights", "note", "started_at", "ended_at"]

    def get_coverage(self, phase: ExperimentPhase) -> str:
        return percent(phase.coverage)

    @extend_schema_field(serializers.DictField(child=serializers.CharField()))
    def get_weights(self, phase: ExperimentPhase) -> dict[str, str]:
        names = self.context.get("arm_names", {})
        return {names.get(k, k): percent(int(v)) for k, v in phase.weights.items()}


class ExperimentOutput(serializers.ModelSerializer[Experiment]):
    arms = ArmOutput(many=True)
    phases = serializers.SerializerMethodField()
    coverage = serializers.SerializerMethodField()

    class Meta:
        model = Experiment
        fields = [
            "id",
            "name",
            "hypothesis",
            "status",
            "unit",
            "rooms",
            "primary_metric",
            "secondary_metrics",
            "guardrails",
            "coverage",
            "layer",
            "layer_start",
            "layer_end",
            "cuped",
            "sequential",
            "planned_units",
            "alpha",
            "arms",
            "phases",
            "started_at",
            "stopped_at",
            "created_at",
        ]

    def get_coverage(self, experiment: Experiment) -> str:
        return percent(experiment.coverage)

    @extend_schema_field(PhaseOutput(many=True))
    def get_phases(self, experiment: Experiment) -> Any:
        names = {str(arm.pk): arm.name for arm in experiment.arms.all()}
        return PhaseOutput(experiment.phases.all(), many=True, context={"arm_names": names}).data


# --- readout -------------------------------------------------------------------------------


class EffectOutput(serializers.Serializer[Any]):
    method = serializers.CharField()
    estimate = serializers.FloatField(allow_null=True)
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)
    p_value = serializers.FloatField(allow_null=True)
    std_error = serializers.FloatField(allow_null=True)
    significant = serializers.BooleanField()
    bounded = serializers.BooleanField()


class CupedOutput(serializers.Serializer[Any]):
    absolute = EffectOutput()
    relative = EffectOutput()
    theta = serializers.FloatField(allow_null=True)
    variance_reduction = serializers.FloatField(allow_null=True)


class HeterogeneityOutput(serializers.Serializer[Any]):
    q = serializers.FloatField(allow_null=True)
    df = serializers.IntegerField()
    p_value = serializers.FloatField(allow_null=True)
    i_squared = serializers.FloatField(allow_null=True)


class DayEffectOutput(serializers.Serializer[Any]):
    day = serializers.DateField()
    absolute = EffectOutput()
    relative = EffectOutput()
    p_holm = serializers.FloatField(allow_null=True)


class CumulativePointOutput(serializers.Serializer[Any]):
    day = serializers.DateField()
    absolute = EffectOutput()
    relative = EffectOutput()
    sequential_relative = EffectOutput(allow_null=True)


class ComparisonOutput(serializers.Serializer[Any]):
    arm = serializers.CharField()
    control_mean = serializers.FloatField(allow_null=True)
    treatment_mean = serializers.FloatField(allow_null=True)
    control_n = serializers.IntegerField()
    treatment_n = serializers.IntegerField()
    absolute = EffectOutput()
    relative = EffectOutput()
    relative_fieller = EffectOutput()
    cuped = CupedOutput(allow_null=True)
    headline_relative = EffectOutput()
    sequential_relative = EffectOutput(allow_null=True)
    p_holm = serializers.FloatField(allow_null=True)
    mde_relative = serializers.FloatField(allow_null=True)
    heterogeneity = HeterogeneityOutput(allow_null=True)
    daily = DayEffectOutput(many=True)
    cumulative = CumulativePointOutput(many=True)


class MetricOutput(serializers.Serializer[Any]):
    metric = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]
    primary = serializers.BooleanField()
    comparisons = ComparisonOutput(many=True)


class ArmCountOutput(serializers.Serializer[Any]):
    name = serializers.CharField()
    kind = serializers.CharField()
    control = serializers.BooleanField()
    weight = serializers.CharField()
    units = serializers.IntegerField()
    uvs = serializers.FloatField(allow_null=True)


class SrmOutput(serializers.Serializer[Any]):
    flagged = serializers.BooleanField()
    p_value = serializers.FloatField(allow_null=True)
    statistic = serializers.FloatField(allow_null=True)
    message = serializers.CharField()
    observed = serializers.DictField(child=serializers.IntegerField())
    expected = serializers.DictField(child=serializers.FloatField(allow_null=True))


class GuardrailValueOutput(serializers.Serializer[Any]):
    arm = serializers.CharField()
    replies = serializers.IntegerField()
    value = serializers.FloatField(allow_null=True)


class GuardrailOutput(serializers.Serializer[Any]):
    metric = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]
    tolerance = serializers.FloatField()
    breached = serializers.BooleanField()
    breaches = serializers.ListField(child=serializers.CharField())
    values = GuardrailValueOutput(many=True)


class PhaseGroupOutput(serializers.Serializer[Any]):
    phases = serializers.ListField(child=serializers.IntegerField())
    weights = serializers.DictField(child=serializers.CharField())


class PhaseNoteOutput(serializers.Serializer[Any]):
    number = serializers.IntegerField()
    started_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField(allow_null=True)
    coverage = serializers.CharField()
    note = serializers.CharField(allow_blank=True)


class ReadoutOutput(serializers.Serializer[Any]):
    experiment = serializers.IntegerField()
    name = serializers.CharField()
    status = serializers.CharField()
    unit = serializers.CharField()
    estimator = serializers.ChoiceField(choices=["mean", "ratio"])
    alpha = serializers.FloatField()
    cuped = serializers.BooleanField()
    sequential = serializers.BooleanField()
    refreshed_at = serializers.DateTimeField(allow_null=True)
    phases_analysed = serializers.ListField(child=serializers.IntegerField())
    phase_groups = PhaseGroupOutput(many=True)
    phases = PhaseNoteOutput(many=True)
    days = serializers.ListField(child=serializers.DateField())
    arms = ArmCountOutput(many=True)
    srm = SrmOutput(allow_null=True)
    metrics = MetricOutput(many=True)
    guardrails = GuardrailOutput(many=True)
    notes = serializers.ListField(child=serializers.CharField())


# --- events --------------------------------------------------------------------------------


class EventInput(serializers.Serializer[Any]):
    """One viewer event (documentation of the item shape; see EventBatchInput)."""

    event_id = serializers.RegexField(
        r"^[A-Za-z0-9_.:-]{1,128}$", help_text="idempotency key, unique per room"
    )
    uv_id = serializers.RegexField(r"^[A-Za-z0-9_.:-]{1,128}$")
    room = serializers.IntegerField(min_value=1, help_text="must be the API key's room")
    type = serializers.ChoiceField(choices=["item_page_view", "confirmed_receipt", "refund"])
    amount = serializers.DecimalField(
        max_digits=12,
        decimal_places=2,
        min_value=Decimal(0),
        max_value=Decimal(1_000_000_000),
        required=False,
        help_text="required for confirmed_receipt and refund (a refund is a positive amount)",
    )
    currency = serializers.RegexField(
        r"^[A-Z]{3}$", required=False, help_text="the room's currency; required with an amount"
    )
    ts = serializers.DateTimeField(help_text="ISO 8601 with offset; at most 10 minutes ahead")


class EventBatchInput(serializers.Serializer[Any]):
    # Items are validated one by one by the ingestion service, so that an invalid item is
    # rejected with its index while the valid ones are stored; DRF's many=True would refuse
    # the whole batch (and cost more than the database write).
    events = EventInput(many=True, help_text="up to 10,000 events")


class EventErrorOutput(serializers.Serializer[Any]):
    index = serializers.IntegerField()
    field = serializers.CharField(allow_blank=True)
    message = serializers.CharField()


class EventBatchOutput(serializers.Serializer[Any]):
    received = serializers.IntegerField()
    accepted = serializers.IntegerField(help_text="stored now")
    duplicate = serializers.IntegerField(help_text="already stored earlier (replays)")
    rejected = serializers.IntegerField(help_text="invalid: see errors")
    errors = EventErrorOutput(many=True)  # type: ignore[assignment]
