"""Evaluation forms: build, upload or add eval sets; start an eval run; pick runs for the
score table or a paired comparison."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings

from harness_app.hsa.bfcl_data import CATEGORIES as BFCL_CATEGORIES
from harness_app.models import HarnessVersion
from training_app.models import EvalRun, EvalSet, JudgeVersion, ModelEndpoint

MODEL_LABELS = ("Base", "Fixed-Harness SFT", "HAT")


class QASetBuildForm(forms.Form):
    name = forms.CharField(max_length=200)
    harness_version = forms.ModelChoiceField(
        queryset=HarnessVersion.objects.none(),
        help_text="Golds come from this version and its room's catalog as it is now.",
    )
    variant_set = forms.ChoiceField(
        choices=[
            ("", "Live-Stream QA (the harness as it is)"),
            ("t1", "Harness-Variant T1 (held-out skill ids and tool schemas)"),
            ("t2", "Harness-Variant T2 (held-out wording, prompt structure, hooks)"),
        ],
        required=False,
    )
    per_type = forms.IntegerField(
        min_value=1,
        max_value=1000,
        required=False,
        initial=2,
        help_text="Items per question type; empty: every supported (product, type).",
    )
    seed = forms.IntegerField(min_value=0, max_value=2**31 - 1, initial=0)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["harness_version"]
        field.queryset = HarnessVersion.objects.select_related("harness").defer("content")  # type: ignore[attr-defined]
        field.label_from_instance = (  # type: ignore[attr-defined]
            lambda v: f"{v.harness.name} · v{v.number} ({v.status})"
        )


class EvalSetUploadForm(forms.Form):
    name = forms.CharField(max_length=200, required=False, help_text="Empty: the document's.")
    file = forms.FileField(help_text="A hat-qa-set JSONL document (docs/EVALUATION_QA.md).")

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        limit = settings.HAT_MAX_UPLOAD_BYTES
        if upload.size > limit:
            raise forms.ValidationError(f"the file is {upload.size} bytes; the limit is {limit}")
        return upload


class BfclSetForm(forms.Form):
    categories = forms.MultipleChoiceField(
        choices=[(c, c) for c in BFCL_CATEGORIES], widget=forms.CheckboxSelectMultiple
    )
    per_category = forms.IntegerField(
        min_value=1, max_value=2000, required=False, initial=20, help_text="Empty: every case."
    )


class EvalRunForm(forms.Form):
    eval_set = forms.ModelChoiceField(queryset=EvalSet.objects.all())
    model_label = forms.CharField(
        max_length=80,
        help_text="The score table's row: " + ", ".join(MODEL_LABELS) + ", or any name.",
    )
    endpoint = forms.ModelChoiceField(
        queryset=ModelEndpoint.objects.filter(is_active=True), required=False
    )
    local_model_dir = forms.CharField(
        max_length=500,
        required=False,
        help_text="Instead of an endpoint: a checkpoint directory (IFEval only, in process).",
    )
    max_tokens = forms.IntegerField(
        min_value=1,
        max_value=32768,
        required=False,
        help_text="Per model call; empty: 256 for QA, 512 for IFEval and BFCL.",
    )
    max_concurrency = forms.IntegerField(min_value=1, max_value=64, required=False)
    item_limit = forms.IntegerField(
        min_value=1, max_value=1_000_000, required=False, help_text="Only the first N items."
    )
    judge_version = forms.ModelChoiceField(
        label="Judge (optional)",
        queryset=JudgeVersion.objects.select_related("judge").order_by("judge__name", "-number"),
        required=False,
        help_text="Live-Stream QA: this judge version scores Effectiveness instead of the rule.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["judge_version"].label_from_instance = (  # type: ignore[attr-defined]
            lambda v: f"{v.judge.name} v{v.number} ({v.model_name or 'model not named'})"
        )
        self.fields["eval_set"].label_from_instance = (  # type: ignore[attr-defined]
            lambda s: (
                f"#{s.pk} {s.name} · {s.get_kind_display()}"
                f"{' ' + s.variant_set.upper() if s.variant_set else ''} · {s.items} items"
            )
        )


def run_choice_label(run: EvalRun) -> str:
    """How a run is named in a picker: number, model, set and, for a run under held-out
    edits, T1 or T2 (a room's three QA runs share one set)."""
    variant = f" · {run.variant_set.upper()}" if run.variant_set else ""
    return f"#{run.pk} {run.model_label} · {run.eval_set.name}{variant}"


class RunPickForm(forms.Form):
    runs = forms.TypedMultipleChoiceField(coerce=int, widget=forms.CheckboxSelectMultiple)

    def __init__(self, *args: Any, runs: list[EvalRun], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["runs"].choices = [(r.pk, run_choice_label(r)) for r in runs]  # type: ignore[attr-defined]


class CompareRunsForm(forms.Form):
    a = forms.TypedChoiceField(coerce=int, label="Run A (reference)")
    b = forms.TypedChoiceField(coerce=int, label="Run B")

    def __init__(self, *args: Any, runs: list[EvalRun], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [(r.pk, run_choice_label(r)) for r in runs]
        self.fields["a"].choices = choices  # type: ignore[attr-defined]
        self.fields["b"].choices = choices  # type: ignore[attr-defined]
