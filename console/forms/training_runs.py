"""The "New training run" form. It builds the same config dict the API and
``manage.py train`` take; the service checks it and its errors are put on the fields here."""

from __future__ import annotations

import re
from typing import Any

import yaml
from django import forms

from harness_app.models import HarnessVersion
from training_app.models import Dataset, ModelEndpoint
from training_app.pipeline.contract import STAGE_LABELS, STAGE_ORDER
from training_app.services.run_config import (
    GOLD_TEACHER,
    default_base_model_dir,
    default_params,
    training_policies,
)

FIELD_OF_ERROR = re.compile(r"^([a-z_]+)")


class TrainingRunForm(forms.Form):
    name = forms.CharField(max_length=120)
    harness_versions = forms.ModelMultipleChoiceField(
        queryset=HarnessVersion.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        help_text="The harnesses the model learns to follow.",
    )
    datasets = forms.ModelMultipleChoiceField(
        queryset=Dataset.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text="Gold (or augmented) trajectories of those harness versions.",
    )
    catalog_tasks = forms.BooleanField(
        required=False, label="Also generate tasks from the rooms' product catalogs"
    )
    stages = forms.MultipleChoiceField(
        choices=[(kind, STAGE_LABELS[kind]) for kind in STAGE_ORDER],
        widget=forms.CheckboxSelectMultiple,
        initial=["hsa_sft"],
        help_text="Run in this order; any may be skipped or run alone.",
    )
    hsa_policy = forms.ChoiceField(
        required=False,
        help_text="Training policies only: held-out policies are kept for evaluation.",
    )
    teacher = forms.ChoiceField(help_text="Who wrote the target trajectories.")
    base_model_dir = forms.CharField(max_length=500)
    params = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 14, "class": "mono", "spellcheck": "false"}),
        required=False,
        help_text="YAML, per stage; the defaults are shown. Stages you did not tick are ignored.",
    )
    seed = forms.IntegerField(min_value=0, max_value=2**62, initial=0)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        versions = HarnessVersion.objects.select_related("harness").order_by(
            "harness__name", "-number"
        )
        self.fields["harness_versions"].queryset = versions  # type: ignore[attr-defined]
        self.fields["harness_versions"].label_from_instance = (  # type: ignore[attr-defined]
            lambda v: f"{v.harness.name} · v{v.number} ({v.status})"
        )
        datasets = Dataset.objects.select_related("harness_version__harness").order_by("-pk")
        self.fields["datasets"].queryset = datasets  # type: ignore[attr-defined]
        self.fields["datasets"].label_from_instance = (  # type: ignore[attr-defined]
            lambda d: (
                f"{d.name} ({d.examples} examples, {d.harness_version.harness.name} "
                f"v{d.harness_version.number})"
            )
        )
        self.fields["hsa_policy"].choices = [("", "None: Fixed-Harness")] + [  # type: ignore[attr-defined]
            (name, name) for name in training_policies()
        ]
        self.fields["teacher"].choices = [(GOLD_TEACHER, "Gold trajectories")] + [  # type: ignore[attr-defined]
            (e.name, e.name) for e in ModelEndpoint.objects.filter(is_active=True)
        ]
        self.fields["base_model_dir"].initial = default_base_model_dir()
        self.fields["params"].initial = yaml.safe_dump(default_params(), sort_keys=False)
        if "hsa-train" in training_policies():
            self.fields["hsa_policy"].initial = "hsa-train"

    def clean_params(self) -> dict[str, Any]:
        text = self.cleaned_data.get("params") or ""
        try:
            value = yaml.safe_load(text) if text.strip() else {}
        except yaml.YAMLError as exc:
            raise forms.ValidationError(f"not valid YAML: {exc}") from None
        if not isinstance(value, dict):
            raise forms.ValidationError("a mapping of stage kind to its parameters")
        return value

    def config(self) -> dict[str, Any]:
        data = self.cleaned_data
        stages = [kind for kind in STAGE_ORDER if kind in data["stages"]]
        return {
            "name": data["name"],
            "base_model_dir": data["base_model_dir"],
            "teacher": data["teacher"],
            "harness_versions": [
                {"harness": v.harness_id, "version": v.number} for v in data["harness_versions"]
            ],
            "datasets": [d.pk for d in data["datasets"]],
            "catalog_tasks": data["catalog_tasks"],
            "hsa_policy": data["hsa_policy"],
            "stages": stages,
            # parameters of stages not ticked are dropped (the defaults list them all)
            "params": {k: v for k, v in data["params"].items() if k in stages},
            "seed": data["seed"],
        }

    def add_config_errors(self, errors: dict[str, str]) -> None:
        """Put the service's ``params.hsa_sft.max_steps``-style errors on their fields."""
        for path, message in errors.items():
            match = FIELD_OF_ERROR.match(path)
            field = match.group(1) if match else None
            if field in self.fields:
                self.add_error(field, f"{path}: {message}" if path != field else message)
            else:
                self.add_error(None, f"{path}: {message}")


class CompareForm(forms.Form):
    runs = forms.TypedMultipleChoiceField(coerce=int, widget=forms.CheckboxSelectMultiple)
    metric = forms.ChoiceField()

    def __init__(self, *args: Any, runs: list[Any], metrics: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["runs"].choices = [(r.pk, f"#{r.pk} {r.name}") for r in runs]  # type: ignore[attr-defined]
        self.fields["metric"].choices = [(m, m) for m in metrics]  # type: ignore[attr-defined]
