"""Blind tests in the console (operators): create a test, invite a labeler, assign labelers.

The forms check shapes (types, ranges); ``experiments_app.services.blind_tests`` checks the
rest (sides differ, versions of the room's harness, arms of the experiment...) and its
``ValidationError`` dicts land on the same field names here.
"""

from __future__ import annotations

from typing import Any

from django import forms

from experiments_app.models import BlindTest, Experiment, ExperimentArm
from experiments_app.models.blind_tests import MAX_LABELS_PER_PAIR
from experiments_app.selectors.blind_tests import labelers_all
from experiments_app.services.blind_tests import MAX_GOLD_PAIRS, MAX_PAIRS, BlindTestSpec
from harness_app.models import HarnessVersion, Room
from training_app.models import EvalSet, ModelEndpoint


class _ArmChoice(forms.ModelChoiceField):  # type: ignore[type-arg]
    def label_from_instance(self, obj: Any) -> str:
        return f"{obj.experiment.name}: {obj.name} ({obj.get_kind_display()})"


class _VersionChoice(forms.ModelChoiceField):  # type: ignore[type-arg]
    def label_from_instance(self, obj: Any) -> str:
        return f"{obj.harness.room.name}: v{obj.number} {obj.message}".strip()


class BlindTestForm(forms.Form):
    name = forms.CharField(max_length=120, help_text="Operators only; labelers never see it.")
    instructions = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Shown to labelers. Do not name a side, version, endpoint or model.",
    )
    room = forms.ModelChoiceField(queryset=Room.objects.none())
    compare = forms.ChoiceField(choices=BlindTest.Compare.choices, widget=forms.RadioSelect)
    experiment: forms.ModelChoiceField[Any] = forms.ModelChoiceField(
        queryset=Experiment.objects.none(), required=False
    )
    arm_one = _ArmChoice(queryset=ExperimentArm.objects.none(), required=False)
    arm_two = _ArmChoice(queryset=ExperimentArm.objects.none(), required=False)
    version_one = _VersionChoice(queryset=HarnessVersion.objects.none(), required=False)
    version_two = _VersionChoice(queryset=HarnessVersion.objects.none(), required=False)
    endpoint = forms.ModelChoiceField(
        queryset=ModelEndpoint.objects.none(),
        required=False,
        help_text="Two harness versions: the model both run on.",
    )
    endpoint_one = forms.ModelChoiceField(queryset=ModelEndpoint.objects.none(), required=False)
    endpoint_two = forms.ModelChoiceField(queryset=ModelEndpoint.objects.none(), required=False)
    request_source = forms.ChoiceField(
        choices=BlindTest.RequestSource.choices, widget=forms.RadioSelect
    )
    size = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_PAIRS,
        initial=50,
        help_text="Requests to sample (live replies) or the eval set's first N (empty: all).",
    )
    stratify_by = forms.ChoiceField(
        required=False,
        choices=[("", "No stratification"), ("skill", "Skill"), ("product", "Product")],
    )
    since = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    seed = forms.IntegerField(initial=0, min_value=0, max_value=2**31 - 1, required=False)
    eval_set = forms.ModelChoiceField(queryset=EvalSet.objects.none(), required=False)
    upload = forms.FileField(
        required=False,
        help_text="JSONL or CSV rows of comment and product_sku (or a JSON context).",
    )
    reply_source = forms.ChoiceField(
        choices=BlindTest.ReplySource.choices,
        widget=forms.RadioSelect,
        help_text="Stored: the sides' stored live replies; requests a side never answered "
        "are generated for it.",
    )
    labels_per_pair = forms.IntegerField(min_value=1, max_value=MAX_LABELS_PER_PAIR, initial=3)
    gold_pairs = forms.IntegerField(min_value=0, max_value=MAX_GOLD_PAIRS, initial=0)
    gold_min_accuracy = forms.FloatField(min_value=0, max_value=1, initial=0.8)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        fields: dict[str, Any] = self.fields
        fields["room"].queryset = Room.objects.order_by("name", "id")
        fields["experiment"].queryset = Experiment.objects.order_by("-created_at")
        fields["arm_one"].queryset = fields["arm_two"].queryset = (
            ExperimentArm.objects.select_related("experiment").order_by("experiment_id", "position")
        )
        versions = (
            HarnessVersion.objects.select_related("harness__room")
            .defer("content")
            .order_by("harness__room__name", "-number")
        )
        fields["version_one"].queryset = fields["version_two"].queryset = versions
        endpoints = ModelEndpoint.objects.order_by("name")
        for name in ("endpoint", "endpoint_one", "endpoint_two"):
            fields[name].queryset = endpoints
        fields["eval_set"].queryset = EvalSet.objects.filter(
            kind=EvalSet.Kind.LIVE_STREAM_QA
        ).order_by("-created_at")

    def spec(self) -> BlindTestSpec:
        data = self.cleaned_data
        upload = data.get("upload")
        return BlindTestSpec(
            name=data["name"],
            instructions=data.get("instructions") or "",
            room=data["room"],
            compare=data["compare"],
            request_source=data["request_source"],
            reply_source=data["reply_source"],
            experiment=data.get("experiment"),
            arm_one=data.get("arm_one"),
            arm_two=data.get("arm_two"),
            version_one=data.get("version_one"),
            version_two=data.get("version_two"),
            endpoint=data.get("endpoint"),
            endpoint_one=data.get("endpoint_one"),
            endpoint_two=data.get("endpoint_two"),
            size=data.get("size"),
            stratify_by=data.get("stratify_by") or "",
            since=data.get("since"),
            until=data.get("until"),
            seed=data.get("seed") or 0,
            eval_set=data.get("eval_set"),
            upload=upload.read() if upload else None,
            upload_name=upload.name if upload else "",
            labels_per_pair=data["labels_per_pair"],
            gold_pairs=data["gold_pairs"],
            gold_min_accuracy=data["gold_min_accuracy"],
        )


class LabelerInviteForm(forms.Form):
    username = forms.CharField(max_length=150)
    email = forms.EmailField()


class AssignLabelersForm(forms.Form):
    labelers: forms.ModelMultipleChoiceField[Any] = forms.ModelMultipleChoiceField(
        queryset=labelers_all(),
        widget=forms.CheckboxSelectMultiple,
        help_text="Invite labelers on the Labelers page first.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["labelers"].queryset = labelers_all()  # type: ignore[attr-defined]
