"""Training forms: upload a gold dataset, start an HSA augmentation job, preview HSA."""

from __future__ import annotations

from typing import Any

from django import forms

from harness_app.hsa import FAMILIES, POLICIES, TRANSFORMS
from harness_app.models import HarnessVersion

MAX_UPLOAD_BYTES = 1_048_576


class GoldDatasetForm(forms.Form):
    name = forms.CharField(max_length=120)
    harness_version = forms.ModelChoiceField(
        queryset=HarnessVersion.objects.none(),
        help_text="Each line is checked against this version's skills and tool schemas.",
    )
    file = forms.FileField(
        help_text="JSONL: one gold trajectory per line (skill, tool_calls, "
        "final_answer, comment, product_sku)."
    )

    def __init__(self, *args: Any, versions: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["harness_version"]
        field.queryset = versions  # type: ignore[attr-defined]
        field.label_from_instance = (  # type: ignore[attr-defined]
            lambda v: f"{v.harness.name} · v{v.number} ({v.status})"
        )

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        if upload.size > MAX_UPLOAD_BYTES:
            raise forms.ValidationError(f"the file is {upload.size} bytes; the limit is 1 MB")
        return upload


class AugmentationJobForm(forms.Form):
    policy = forms.ChoiceField(
        choices=[(name, f"{name} ({p.split}, k={p.k})") for name, p in POLICIES.items()],
        help_text="Train policies use train-only edits; harness-variant T1/T2 use held-out edits.",
    )
    seed = forms.IntegerField(min_value=0, max_value=2**62, initial=0)
    variants = forms.IntegerField(
        min_value=1, max_value=64, initial=2, help_text="Augmented examples per gold example."
    )


def transform_choices() -> list[tuple[str, list[tuple[str, str]]]]:
    grouped: list[tuple[str, list[tuple[str, str]]]] = []
    for family in FAMILIES:
        options = [
            (t.name, f"{t.name.split('.', 1)[1]} ({t.split})")
            for t in TRANSFORMS
            if t.family == family
        ]
        grouped.append((family, options))
    return grouped


class HsaPreviewForm(forms.Form):
    transforms = forms.MultipleChoiceField(
        choices=transform_choices,
        widget=forms.SelectMultiple(attrs={"size": 12}),
        help_text="Applied in the listed order. Held-out edits are never used for training.",
    )
    seed = forms.IntegerField(min_value=0, max_value=2**62, initial=0)
