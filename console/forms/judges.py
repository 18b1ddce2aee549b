"""Agent-as-a-Judge forms (operators): a judge's settings (editing the rubric or the model
makes a new version) and a calibration on a blind test."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import Q

from training_app.evals.judge import DEFAULT_RUBRIC
from training_app.models import Judge, JudgeCalibration, ModelEndpoint
from training_app.services.judges import MAX_RUBRIC_CHARS


class JudgeForm(forms.Form):
    name = forms.CharField(max_length=80)
    description = forms.CharField(max_length=300, required=False)
    endpoint = forms.ModelChoiceField(
        label="Model endpoint",
        queryset=ModelEndpoint.objects.none(),
        help_text="The model that judges. Another endpoint or model is a new judge version.",
    )
    rubric = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 16, "class": "mono"}),
        max_length=MAX_RUBRIC_CHARS,
        initial=DEFAULT_RUBRIC,
        help_text="The criteria. The JSON answer format is added by the console, so it "
        "cannot be edited away. Editing the rubric makes a new version.",
    )
    min_kappa = forms.FloatField(
        label="Minimum Cohen's kappa",
        min_value=-1,
        max_value=1,
        initial=0.4,
        help_text="Scores from a version calibrated below this are flagged.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["endpoint"].queryset = ModelEndpoint.objects.filter(is_active=True)  # type: ignore[attr-defined]

    @classmethod
    def initial_from(cls, judge: Judge) -> dict[str, Any]:
        return {
            "name": judge.name,
            "description": judge.description,
            "endpoint": judge.endpoint_id,
            "rubric": judge.rubric,
            "min_kappa": judge.min_kappa,
        }


class CalibrationForm(forms.Form):
    blind_test: forms.ModelChoiceField[Any] = forms.ModelChoiceField(
        label="Blind test",
        queryset=None,  # type: ignore[arg-type]
        help_text="Its labeled non-gold pairs with a majority are judged in both orders.",
    )
    reference = forms.ChoiceField(
        label="Against",
        choices=JudgeCalibration.Reference.choices,
        initial=JudgeCalibration.Reference.HUMAN,
        required=False,
        help_text="Only agreement with human labels makes a version trusted.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from experiments_app.models import BlindTest

        tests = BlindTest.objects.filter(
            Q(labels__isnull=False) | Q(pairs__is_gold=True, pairs__ready=True)
        ).distinct()
        self.fields["blind_test"].queryset = tests.order_by("-created_at")  # type: ignore[attr-defined]
