"""Blind tests API, operators only (merchants and labelers get a 403): list and create tests,
a test with its results, its labels as CSV, open / close it, assign and unassign labelers,
and invite a labeler (the People invite: its one-time link is in that response only).

The labeler's side is ``experiments_app.api.labeling``; nothing here is for labelers (it
names sides, versions and endpoints). docs/BLIND_TESTS.md.
"""

from __future__ import annotations

import json
import math
from typing import Any

from django.contrib.auth import get_user_model
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from console.roles import Role
from console.services import people as people_services
from experiments_app.models import BlindTest, Experiment, ExperimentArm
from experiments_app.models.blind_tests import MAX_LABELS_PER_PAIR
from experiments_app.selectors import blind_tests as selectors
from experiments_app.services import blind_tests as services
from harness_app.models import HarnessVersion, Room
from harness_app.permissions import IsOperator
from training_app.models import EvalSet, ModelEndpoint

ERRORS = OpenApiResponse(description="invalid input or state; `errors` name the fields")


# --- serializers ------------------------------------------------------------------------------


class UploadRowInput(serializers.Serializer[Any]):
    comment = serializers.CharField(max_length=2000, allow_blank=True)
    product_sku = serializers.CharField(max_length=64, required=False, allow_blank=True)
    context = serializers.DictField(required=False)  # type: ignore[assignment]


def _related(queryset: Any, **kwargs: Any) -> serializers.PrimaryKeyRelatedField[Any]:
    return serializers.PrimaryKeyRelatedField(
        queryset=queryset, required=False, allow_null=True, **kwargs
    )


class BlindTestInput(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=120)
    instructions = serializers.CharField(required=False, allow_blank=True, default="")
    room = serializers.PrimaryKeyRelatedField(queryset=Room.objects.all())
    compare = serializers.ChoiceField(choices=BlindTest.Compare.choices)
    experiment = _related(Experiment.objects.all())
    arm_one = _related(ExperimentArm.objects.all())
    arm_two = _related(ExperimentArm.objects.all())
    version_one = _related(HarnessVersion.objects.select_related("harness").defer("content"))
    version_two = _related(HarnessVersion.objects.select_related("harness").defer("content"))
    endpoint = _related(ModelEndpoint.objects.all())
    endpoint_one = _related(ModelEndpoint.objects.all())
    endpoint_two = _related(ModelEndpoint.objects.all())
    request_source = serializers.ChoiceField(choices=BlindTest.RequestSource.choices)
    size = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=services.MAX_PAIRS, default=50
    )
    stratify_by = serializers.ChoiceField(
        choices=[("", "none"), ("skill", "skill"), ("product", "product")],
        required=False,
        default="",
    )
    since = serializers.DateField(required=False, allow_null=True)
    until = serializers.DateField(required=False, allow_null=True)
    seed = serializers.IntegerField(required=False, default=0, min_value=0, max_value=2**31 - 1)
    eval_set = _related(EvalSet.objects.all())
    rows = UploadRowInput(
        many=True,
        required=False,
        help_text="request_source=upload: the rows (what a JSONL upload holds).",
    )
    reply_source = serializers.ChoiceField(choices=BlindTest.ReplySource.choices)
    labels_per_pair = serializers.IntegerField(
        required=False, default=3, min_value=1, max_value=MAX_LABELS_PER_PAIR
    )
    gold_pairs = serializers.IntegerField(
        required=False, default=0, min_value=0, max_value=services.MAX_GOLD_PAIRS
    )
    gold_min_accuracy = serializers.FloatField(
        required=False, default=0.8, min_value=0, max_value=1
    )

    def spec(self) -> services.BlindTestSpec:
        data = dict(self.validated_data)
        rows = data.pop("rows", None)
        upload = None
        if rows is not None:
            upload = "\n".join(json.dumps(dict(r)) for r in rows).encode()
        return services.BlindTestSpec(
            **data, upload=upload, upload_name="rows.jsonl" if rows is not None else ""
        )


class BlindSideOutput(serializers.Serializer[Any]):
    side = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]
    agent = serializers.CharField()
    experiment_arm = serializers.IntegerField(source="experiment_arm_id", allow_null=True)
    harness_version = serializers.IntegerField(source="harness_version_id")
    endpoint = serializers.IntegerField(source="endpoint_id")


class BlindTestOutput(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    instructions = serializers.CharField()
    room = serializers.IntegerField(source="room_id")
    compare = serializers.ChoiceField(choices=BlindTest.Compare.choices)
    experiment = serializers.IntegerField(source="experiment_id", allow_null=True)
    request_source = serializers.ChoiceField(choices=BlindTest.RequestSource.choices)
    request_params = serializers.DictField()
    reply_source = serializers.ChoiceField(choices=BlindTest.ReplySource.choices)
    labels_per_pair = serializers.IntegerField()
    gold_pairs = serializers.IntegerField()
    gold_min_accuracy = serializers.FloatField()
    status = serializers.ChoiceField(choices=BlindTest.Status.choices)
    progress_done = serializers.IntegerField()
    progress_total = serializers.IntegerField()
    error = serializers.CharField()
    pairs = serializers.IntegerField(source="pairs_n")
    pairs_ready = serializers.IntegerField(source="ready_n")
    labels = serializers.IntegerField(source="labels_n")
    labelers = serializers.IntegerField(source="labelers_n")
    created_at = serializers.DateTimeField()


class IntervalOutput(serializers.Serializer[Any]):
    estimate = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)


class PreferenceOutput(serializers.Serializer[Any]):
    pairs = serializers.IntegerField()
    labels = serializers.IntegerField()
    wins = serializers.IntegerField(help_text="side one better, by pair majority")
    ties = serializers.IntegerField()
    losses = serializers.IntegerField(help_text="side two better, by pair majority")
    win_rate = IntervalOutput(help_text="side one among decisive pairs, Wilson interval")
    sign_test_p = serializers.FloatField(allow_null=True)
    score = IntervalOutput(help_text="(wins + ties/2) / pairs, percentile bootstrap")
    tie_rate = serializers.FloatField(allow_null=True)
    left_share = serializers.FloatField(allow_null=True)
    position_bias_p = serializers.FloatField(allow_null=True)
    fleiss_kappa = serializers.FloatField(allow_null=True)
    krippendorff_alpha = serializers.FloatField(allow_null=True)
    confidence = serializers.FloatField()


class LabelerStatsOutput(serializers.Serializer[Any]):
    labeler = serializers.IntegerField(source="labeler_id")
    username = serializers.CharField()
    labels = serializers.IntegerField()
    agreement = serializers.FloatField(allow_null=True)
    agreement_n = serializers.IntegerField()
    gold_labels = serializers.IntegerField()
    gold_correct = serializers.IntegerField()
    gold_accuracy = serializers.FloatField(allow_null=True)
    flagged = serializers.BooleanField()


class ResultsOutput(serializers.Serializer[Any]):
    label_one = serializers.CharField()
    label_two = serializers.CharField()
    headline = serializers.CharField()
    pairs = serializers.IntegerField()
    pairs_ready = serializers.IntegerField()
    gold_pairs = serializers.IntegerField()
    labels = serializers.IntegerField()
    gold_labels = serializers.IntegerField()
    both_bad_rate = serializers.FloatField(allow_null=True)
    preference = PreferenceOutput(allow_null=True)
    labelers = LabelerStatsOutput(many=True)


class BlindTestDetailOutput(BlindTestOutput):
    sides = BlindSideOutput(many=True)
    assigned_labelers = serializers.ListField(child=serializers.IntegerField())
    results = ResultsOutput()


class AssignInput(serializers.Serializer[Any]):
    labelers = serializers.PrimaryKeyRelatedField(
        queryset=get_user_model().objects.all(), many=True, allow_empty=False
    )


class AssignOutput(serializers.Serializer[Any]):
    added = serializers.IntegerField()
    assigned_labelers = serializers.ListField(child=serializers.IntegerField())


class LabelerInviteInput(serializers.Serializer[Any]):
    username = serializers.CharField(max_length=150)
    email = serializers.EmailField()


class LabelerInviteOutput(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    username = serializers.CharField()
    email = serializers.CharField()
    invite_url = serializers.CharField(
        help_text="The People invite's one-time link (/invite/<token>/); shown only here."
    )
    set_password_url = serializers.CharField(
        help_text="The same link as invite_url (the name older clients read)."
    )
    expires_at = serializers.DateTimeField()


def _finite(value: Any) -> Any:
    """NaN (no data) as null: JSON has no NaN."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


PREFERENCE_FIELDS = (
    "pairs",
    "labels",
    "wins",
    "ties",
    "losses",
    "sign_test_p",
    "tie_rate",
    "left_share",
    "position_bias_p",
    "fleiss_kappa",
    "krippendorff_alpha",
    "confidence",
)


def detail_data(test: BlindTest) -> dict[str, Any]:
    results = selectors.blind_test_results(test)
    p = results.preference
    preference = None
    if p is not None:
        preference = {
            **{name: getattr(p, name) for name in PREFERENCE_FIELDS},
            "win_rate": vars(p.win_rate),
            "score": vars(p.score),
        }
    data = dict(BlindTestOutput(test).data)
    data["sides"] = BlindSideOutput(selectors.blind_test_sides(test).values(), many=True).data
    data["assigned_labelers"] = [a.labeler_id for a in selectors.blind_test_labelers(test)]
    data["results"] = {
        "label_one": results.label_one,
        "label_two": results.label_two,
        "headline": results.headline(),
        "pairs": results.pairs,
        "pairs_ready": results.pairs_ready,
        "gold_pairs": results.gold_pairs,
        "labels": results.labels,
        "gold_labels": results.gold_labels,
        "both_bad_rate": results.both_bad_rate,
        "preference": preference,
        "labelers": LabelerStatsOutput(results.labelers, many=True).data,
    }
    return dict(_finite(data))


# --- views ------------------------------------------------------------------------------------


class BlindTestListApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = BlindTestOutput

    @extend_schema(responses=BlindTestOutput(many=True))
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(selectors.blind_tests_list())
        return self.get_paginated_response(BlindTestOutput(page, many=True).data)

    @extend_schema(
        request=BlindTestInput,
        responses={201: BlindTestDetailOutput, 400: ERRORS},
        description="Create a blind test. Replies not covered by stored live replies are "
        "generated by a job on the eval queue (status generating until done).",
    )
    def post(self, request: Request) -> Response:
        data = BlindTestInput(data=request.data)
        data.is_valid(raise_exception=True)
        test = services.blind_test_create(spec=data.spec(), created_by=request.user)
        test = selectors.blind_test_get(test_id=test.pk)
        return Response(detail_data(test), status=status.HTTP_201_CREATED)


class BlindTestDetailApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = BlindTestDetailOutput

    @extend_schema(responses=BlindTestDetailOutput)
    def get(self, request: Request, test_id: int) -> Response:
        return Response(detail_data(selectors.blind_test_get(test_id=test_id)))


class BlindTestLabelsCsvApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]

    @extend_schema(
        responses={(200, "text/csv"): OpenApiTypes.STR},
        description="Every label, one row each: pair token, comment, both replies with the "
        "side each came from, which side was on the left, the choice, labeler, reason, time.",
    )
    def get(self, request: Request, test_id: int) -> StreamingHttpResponse:
        test = selectors.blind_test_get(test_id=test_id)
        response = StreamingHttpResponse(
            selectors.blind_test_labels_csv(test), content_type="text/csv; charset=utf-8"
        )
        name = selectors.labels_csv_file_name(test)
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


class _TestActionApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = BlindTestDetailOutput
    action = "close"

    @extend_schema(request=None, responses={200: BlindTestDetailOutput, 400: ERRORS})
    def post(self, request: Request, test_id: int) -> Response:
        test = selectors.blind_test_get(test_id=test_id)
        if self.action == "close":
            services.blind_test_close(test=test)
        else:
            services.blind_test_open(test=test)
        return Response(detail_data(selectors.blind_test_get(test_id=test_id)))


class BlindTestCloseApi(_TestActionApi):
    action = "close"


class BlindTestOpenApi(_TestActionApi):
    """Reopen a closed test, or retry a failed one's generation."""

    action = "open"


class BlindTestLabelersApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = AssignOutput

    @extend_schema(request=AssignInput, responses={200: AssignOutput, 400: ERRORS})
    def post(self, request: Request, test_id: int) -> Response:
        test = selectors.blind_test_get(test_id=test_id)
        data = AssignInput(data=request.data)
        data.is_valid(raise_exception=True)
        added = services.blind_test_assign_labelers(
            test=test, labelers=list(data.validated_data["labelers"]), assigned_by=request.user
        )
        assigned = [a.labeler_id for a in selectors.blind_test_labelers(test)]
        return Response({"added": added, "assigned_labelers": assigned})


class BlindTestLabelerApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]

    @extend_schema(request=None, responses={204: None})
    def delete(self, request: Request, test_id: int, labeler_id: int) -> Response:
        test = selectors.blind_test_get(test_id=test_id)
        labeler = get_object_or_404(get_user_model(), pk=labeler_id)
        services.blind_test_unassign_labeler(test=test, labeler=labeler)
        return Response(status=status.HTTP_204_NO_CONTENT)


class LabelerInviteApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = LabelerInviteOutput

    @extend_schema(
        request=LabelerInviteInput,
        responses={201: LabelerInviteOutput, 400: ERRORS},
        description="Invite a labeler through People (`POST /api/v1/people/` with role "
        "Labeler: audited, a one-time /invite/ link valid HAT_INVITE_TTL_H hours, only its "
        "hash stored); the link is in this response only.",
    )
    def post(self, request: Request) -> Response:
        data = LabelerInviteInput(data=request.data)
        data.is_valid(raise_exception=True)
        invite = people_services.person_invite(
            **data.validated_data, role=Role.LABELER, invited_by=request.user
        )
        user = invite.user
        url = request.build_absolute_uri(invite.path)
        body = {
            "id": user.pk,
            "username": user.get_username(),
            "email": user.email,
            "invite_url": url,
            "set_password_url": url,
            "expires_at": invite.expires_at,
        }
        response = Response(LabelerInviteOutput(body).data, status=status.HTTP_201_CREATED)
        response["Cache-Control"] = "no-store"
        return response
