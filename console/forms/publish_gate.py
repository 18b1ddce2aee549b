"""A room's harness-edit safety gate (operators), and the override of a blocked check."""

from __future__ import annotations

from typing import Any

from django import forms

from harness_app.models import Room
from training_app.models import EvalSet, ModelEndpoint, PublishGate


class PublishGateForm(forms.Form):
    enabled = forms.BooleanField(
        required=False,
        initial=True,
        help_text="Off: versions publish without a check (the settings are kept).",
    )
    eval_set = forms.ModelChoiceField(
        label="Quick QA set",
        queryset=EvalSet.objects.none(),
        help_text="A Live-Stream QA set built on this room's harness (Evaluation → Eval sets).",
    )
    endpoint = forms.ModelChoiceField(
        label="Model",
        queryset=ModelEndpoint.objects.none(),
        help_text="The model that answers: usually the one the room's replies use.",
    )
    item_limit = forms.IntegerField(
        label="Items", min_value=1, max_value=500, initial=16, help_text="The set's first N."
    )
    variant_sets = forms.MultipleChoiceField(
        label="Also run under HSA variants",
        choices=[("t1", "T1 (held-out tool and parameter renames)"), ("t2", "T2")],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Does the model survive the next edit too? A variant's drop only warns.",
    )
    warn_drop_points = forms.FloatField(
        label="Warn at a drop of (points)", min_value=0, max_value=100, initial=5.0
    )
    block_drop_points = forms.FloatField(
        label="Block at a drop of (points)",
        min_value=0,
        max_value=100,
        initial=10.0,
        help_text="Blocks only when the 95% interval confirms a drop.",
    )

    def __init__(self, *args: Any, room: Room, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        sets = EvalSet.objects.filter(
            kind=EvalSet.Kind.LIVE_STREAM_QA, harness_version__harness__room=room
        ).order_by("-created_at")
        self.fields["eval_set"].queryset = sets  # type: ignore[attr-defined]
        endpoints = ModelEndpoint.objects.filter(is_active=True).order_by("name")
        self.fields["endpoint"].queryset = endpoints  # type: ignore[attr-defined]

    @staticmethod
    def initial_from(gate: PublishGate | None) -> dict[str, Any]:
        if gate is None:
            return {}
        return {
            "enabled": gate.enabled,
            "eval_set": gate.eval_set_id,
            "endpoint": gate.endpoint_id,
            "item_limit": gate.item_limit,
            "variant_sets": list(gate.variant_sets),
            "warn_drop_points": gate.warn_drop_points,
            "block_drop_points": gate.block_drop_points,
        }


class OverrideForm(forms.Form):
    override_reason = forms.CharField(
        label="Why publish anyway?",
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Kept on the check with your name (e.g. the model was retrained for it).",
    )
