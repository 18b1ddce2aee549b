"""Experiment forms: the configuration, the arms formset, the allocation change.

Weights and coverage are entered in percent (up to two decimals) and stored out of 10,000.
Every error lands on its field: an arm formset whose weights do not sum to 100% marks each
weight field, and service errors (``arms[1].harness_version`` ...) are routed back to the
form and field they name.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from django import forms
from django.core.validators import RegexValidator

from experiments_app.models import Experiment, ExperimentArm
from experiments_app.selectors import endpoints_for_arms, versions_for_arms
from experiments_app.services import (
    GUARDRAIL_METRICS,
    ArmSpec,
    ExperimentConfigError,
    ExperimentSpec,
    percent,
)
from harness_app.models import HarnessVersion, Room
from training_app.models import ModelEndpoint


def percent_field(**kwargs: Any) -> forms.DecimalField:
    """A percentage with up to two decimals, 0.01 to 100."""
    return forms.DecimalField(
        max_digits=5, decimal_places=2, min_value=Decimal("0.01"), max_value=Decimal(100), **kwargs
    )


def to_basis_points(value: Decimal) -> int:
    return int((value * 100).to_integral_value())


class VersionChoiceField(forms.ModelChoiceField):  # type: ignore[type-arg]
    def label_from_instance(self, obj: HarnessVersion) -> str:
        state = obj.get_status_display().lower()  # type: ignore[attr-defined]
        return f"{obj.harness.name} v{obj.number} ({state})"


class ExperimentForm(forms.Form):
    name = forms.CharField(max_length=120)
    hypothesis = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        help_text="What you expect and why, written before any data comes in.",
    )
    rooms = forms.ModelMultipleChoiceField(
        queryset=Room.objects.order_by("name"), widget=forms.CheckboxSelectMultiple
    )
    unit = forms.ChoiceField(
        choices=Experiment.Unit.choices,
        initial=Experiment.Unit.ROOM_DAY,
        label="Randomization unit",
        help_text="Replies are broadcast to the whole room, so UV randomization leaks treatment "
        "to control viewers; room or room-day randomization avoids it.",
    )
    primary_metric = forms.ChoiceField(choices=Experiment.Metric.choices)
    secondary_metrics = forms.MultipleChoiceField(
        choices=Experiment.Metric.choices, widget=forms.CheckboxSelectMultiple, required=False
    )
    coverage = percent_field(
        initial=Decimal(100),
        label="Coverage (%)",
        help_text="Share of units in the experiment; the rest get the room's default.",
    )
    layer = forms.CharField(
        max_length=64,
        initial="default",
        validators=[
            RegexValidator(r"^[a-z0-9][a-z0-9_-]{0,63}$", "lowercase letters, digits, _ -")
        ],
        help_text="Experiments of one layer with disjoint bucket ranges are mutually exclusive.",
    )
    layer_start = forms.IntegerField(min_value=0, max_value=10_000, initial=0)
    layer_end = forms.IntegerField(min_value=1, max_value=10_000, initial=10_000)
    cuped = forms.BooleanField(
        required=False, initial=True, label="CUPED (pre-period covariate adjustment)"
    )
    sequential = forms.BooleanField(
        required=False, label="Always-valid intervals (peeking-safe confidence sequences)"
    )
    planned_units = forms.IntegerField(
        min_value=2, required=False, help_text="Needed with always-valid intervals."
    )
    alpha = forms.FloatField(min_value=0.0001, max_value=0.49, initial=0.05)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for metric, label in GUARDRAIL_METRICS.items():
            self.fields[f"guard_{metric}"] = forms.DecimalField(
                required=False,
                min_value=Decimal(0),
                max_digits=7,
                decimal_places=1,
                label=f"Guardrail: {label} (max % worse than control)",
                help_text="Leave empty for no guardrail.",
            )

    def guardrail_fields(self) -> list[forms.BoundField]:
        return [self[f"guard_{metric}"] for metric in GUARDRAIL_METRICS]

    @classmethod
    def initial_for(cls, experiment: Experiment) -> dict[str, Any]:
        initial: dict[str, Any] = {
            "name": experiment.name,
            "hypothesis": experiment.hypothesis,
            "rooms": list(experiment.rooms.all()),
            "unit": experiment.unit,
            "primary_metric": experiment.primary_metric,
            "secondary_metrics": experiment.secondary_metrics,
            "coverage": Decimal(experiment.coverage) / 100,
            "layer": experiment.layer,
            "layer_start": experiment.layer_start,
            "layer_end": experiment.layer_end,
            "cuped": experiment.cuped,
            "sequential": experiment.sequential,
            "planned_units": experiment.planned_units,
            "alpha": experiment.alpha,
        }
        for guard in experiment.guardrails:
            initial[f"guard_{guard['metric']}"] = Decimal(str(guard["tolerance"] * 100))
        return initial


class ArmForm(forms.Form):
    name = forms.CharField(
        max_length=40,
        validators=[
            RegexValidator(r"^[a-z0-9][a-z0-9_-]{0,39}$", "lowercase letters, digits, _ -")
        ],
    )
    kind = forms.ChoiceField(choices=ExperimentArm.Kind.choices)
    harness_version = VersionChoiceField(
        queryset=HarnessVersion.objects.none(), label="Harness version"
    )
    endpoint: forms.ModelChoiceField = forms.ModelChoiceField(  # type: ignore[type-arg]
        queryset=ModelEndpoint.objects.none(), label="Model endpoint"
    )
    weight = percent_field(label="Weight (%)")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["harness_version"].queryset = versions_for_arms()  # type: ignore[attr-defined]
        self.fields["endpoint"].queryset = endpoints_for_arms()  # type: ignore[attr-defined]


def kept_forms(formset: forms.BaseFormSet) -> list[forms.Form]:  # type: ignore[type-arg]
    """The valid forms of a formset that are not marked for removal, in order."""
    return [f for f in formset.forms if f.cleaned_data and not f.cleaned_data.get("DELETE")]


class BaseArmFormSet(forms.BaseFormSet):  # type: ignore[type-arg]
    def clean(self) -> None:
        if any(self.errors):
            return
        forms_ = kept_forms(self)
        if len(forms_) < 2:
            raise forms.ValidationError("An experiment needs at least two arms (control first).")
        total = sum(to_basis_points(f.cleaned_data["weight"]) for f in forms_)
        if total != 10_000:
            message = f"Weights sum to {percent(total)}; they must sum to 100%."
            for form in forms_:
                form.add_error("weight", message)


ArmFormSet = forms.formset_factory(
    ArmForm, formset=BaseArmFormSet, extra=0, min_num=2, max_num=8, can_delete=True
)


def arm_initial(experiment: Experiment) -> list[dict[str, Any]]:
    return [
        {
            "name": arm.name,
            "kind": arm.kind,
            "harness_version": arm.harness_version_id,
            "endpoint": arm.endpoint_id,
            "weight": Decimal(arm.weight) / 100,
        }
        for arm in experiment.arms.order_by("position")
    ]


def spec_from_forms(
    form: ExperimentForm,
    arms: forms.BaseFormSet,  # type: ignore[type-arg]
) -> ExperimentSpec:
    data = form.cleaned_data
    guardrails = [
        {"metric": metric, "tolerance": float(data[f"guard_{metric}"]) / 100}
        for metric in GUARDRAIL_METRICS
        if data.get(f"guard_{metric}") is not None
    ]
    arm_forms = kept_forms(arms)
    return ExperimentSpec(
        name=data["name"],
        hypothesis=data["hypothesis"],
        rooms=list(data["rooms"]),
        unit=data["unit"],
        primary_metric=data["primary_metric"],
        secondary_metrics=[m for m in data["secondary_metrics"] if m != data["primary_metric"]],
        guardrails=guardrails,
        arms=[
            ArmSpec(
                name=f.cleaned_data["name"],
                kind=f.cleaned_data["kind"],
                harness_version=f.cleaned_data["harness_version"],
                endpoint=f.cleaned_data["endpoint"],
                weight=to_basis_points(f.cleaned_data["weight"]),
            )
            for f in arm_forms
        ],
        coverage=to_basis_points(data["coverage"]),
        layer=data["layer"],
        layer_start=data["layer_start"],
        layer_end=data["layer_end"],
        cuped=data["cuped"],
        sequential=data["sequential"],
        planned_units=data["planned_units"],
        alpha=data["alpha"],
    )


_ARM_FIELD = re.compile(r"^arms\[(\d+)\]\.(\w+)$")
_GUARD_FIELD = re.compile(r"^guardrails\[\d+\]\.\w+$")


def attach_errors(
    exc: ExperimentConfigError,
    form: forms.Form,
    arms: forms.BaseFormSet | None = None,  # type: ignore[type-arg]
) -> None:
    """Route service errors to the field they name (``arms[i].field`` -> arm form i)."""
    arm_forms = kept_forms(arms) if arms is not None else []
    for field, message in exc.errors:
        match = _ARM_FIELD.match(field)
        if match and int(match.group(1)) < len(arm_forms):
            target = arm_forms[int(match.group(1))]
            name = match.group(2)
            target.add_error(name if name in target.fields else None, message)
        elif field == "arms" and arms is not None:
            arms._non_form_errors = arms.error_class([*arms.non_form_errors(), message])  # type: ignore[attr-defined]
        elif field in form.fields:
            form.add_error(field, message)
        elif _GUARD_FIELD.match(field):
            form.add_error(None, message)
        else:
            form.add_error(None, f"{field}: {message}" if field else message)


class AllocationForm(forms.Form):
    """New weights per arm and coverage for a running experiment (a new phase)."""

    coverage = percent_field(label="Coverage (%)")

    def __init__(self, *args: Any, experiment: Experiment, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.arms = list(experiment.arms.order_by("position"))
        phase = experiment.phases.order_by("-number").first()
        for arm in self.arms:
            weight = phase.weight_of(arm.pk) if phase else arm.weight
            self.fields[f"weight_{arm.name}"] = percent_field(
                label=f"Weight of {arm.name} (%)", initial=Decimal(weight) / 100
            )
        self.fields["coverage"].initial = (
            Decimal(phase.coverage if phase else experiment.coverage) / 100
        )

    def weight_fields(self) -> list[forms.BoundField]:
        return [self[f"weight_{arm.name}"] for arm in self.arms]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        weights = [data.get(f"weight_{arm.name}") for arm in self.arms]
        if all(w is not None for w in weights):
            total = sum(to_basis_points(w) for w in weights if w is not None)
            if total != 10_000:
                for arm in self.arms:
                    self.add_error(
                        f"weight_{arm.name}",
                        f"Weights sum to {percent(total)}; they must sum to 100%.",
                    )
        return data

    def weights(self) -> dict[str, int]:
        return {
            arm.name: to_basis_points(self.cleaned_data[f"weight_{arm.name}"]) for arm in self.arms
        }

    def coverage_bp(self) -> int:
        return to_basis_points(self.cleaned_data["coverage"])
