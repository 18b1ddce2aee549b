"""The labeler's API: my blind tests, the pair to label now (and the next one, prefetched),
labels, undo and skip. The labeling page calls it with the browser session (CSRF token in
``X-CSRFToken``); API tokens work too.

Nothing here carries arm identity: a pair is its random ``token``, the viewer comment, the
product context and two replies, "A" (left) and "B" (right), in an order drawn per pair and
labeler. Sides, arm, harness version, endpoint and model names, the test's name and database
ids never appear (tests/console/test_labeling_leaks.py checks every response).

Who may call: labelers, on the open tests they are assigned to, and operators (an operator
not assigned to a test gets a read-only preview that reserves and stores nothing). Everyone
else, and a labeler on a test they are not assigned to, gets a 404.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.generics import GenericAPIView
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from console.api_errors import FieldErrorsException
from console.api_parsers import JSON_ONLY
from experiments_app.models.blind_tests import BlindPair
from experiments_app.selectors import blind_labeling as reads
from experiments_app.services import blind_labeling as labeling
from harness_app.permissions import _signed_in_person

ERRORS = OpenApiResponse(description="refused; `errors` name the field at fault")
NOT_FOUND = OpenApiResponse(description="no such test for you")
PREVIEW_MESSAGE = "This is a preview: assign yourself to the test to label it."


class IsLabelerOrOperator(BasePermission):
    """Labelers and operators; anyone else signed in is told the API does not exist (404)."""

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        if not (_signed_in_person(user) and reads.is_labeler_or_operator(user)):
            raise NotFound(reads.NOT_FOUND)
        return True


def _product(pair: BlindPair) -> dict[str, str]:
    """The product shown beside the comment: flat text fields only."""
    product = pair.context.get("product") if isinstance(pair.context, dict) else None
    if not isinstance(product, dict):
        return {}
    return {
        str(k): str(v)
        for k, v in product.items()
        if isinstance(v, str | int | float) and not isinstance(v, bool)
    }


class LabelingPairOutput(serializers.Serializer):  # type: ignore[type-arg]
    token = serializers.CharField(help_text="the pair's random token; use it to label or skip")
    comment = serializers.CharField(help_text="the viewer's comment")
    product = serializers.DictField(
        child=serializers.CharField(), help_text="the product the comment is about"
    )
    reply_a = serializers.CharField(help_text="reply A, shown on the left")
    reply_b = serializers.CharField(help_text="reply B, shown on the right")


class LabelingProgressOutput(serializers.Serializer):  # type: ignore[type-arg]
    done = serializers.IntegerField(help_text="pairs I labeled in this test")
    available = serializers.IntegerField(help_text="those plus the pairs still open to me")


class LabelingStateOutput(serializers.Serializer):  # type: ignore[type-arg]
    pair = LabelingPairOutput(allow_null=True, help_text="the pair to label now; null when done")
    next = LabelingPairOutput(allow_null=True, help_text="the pair after it, prefetched")
    progress = LabelingProgressOutput()
    preview = serializers.BooleanField(help_text="an operator's preview: labels are refused")


class LabelingTestOutput(serializers.Serializer):  # type: ignore[type-arg]
    token = serializers.CharField()
    instructions = serializers.CharField()
    labeled_by_me = serializers.IntegerField()
    open_pairs = serializers.IntegerField(help_text="pairs that still need labels")
    preview = serializers.BooleanField(help_text="true when I am not assigned (operators)")
    page = serializers.CharField(help_text="the labeling page")


class LabelingLabelInput(serializers.Serializer):  # type: ignore[type-arg]
    pair = serializers.CharField(max_length=32, help_text="the pair's token")
    choice = serializers.ChoiceField(choices=labeling.ScreenChoice.choices)
    reason = serializers.CharField(
        max_length=labeling.REASON_MAX_CHARS, allow_blank=True, default="", trim_whitespace=True
    )
    seconds = serializers.FloatField(
        min_value=0, max_value=24 * 3600, required=False, allow_null=True, default=None
    )


class LabelingLabelOutput(serializers.Serializer):  # type: ignore[type-arg]
    pair = serializers.CharField()
    choice = serializers.ChoiceField(choices=labeling.ScreenChoice.choices)
    reason = serializers.CharField()
    seconds = serializers.FloatField(allow_null=True)
    created_at = serializers.DateTimeField()


class LabelingLabeledOutput(LabelingStateOutput):
    label = LabelingLabelOutput()  # type: ignore[assignment]  # DRF pops declared fields
    created = serializers.BooleanField(help_text="false when this pair was already labeled")


class LabelingSkipInput(serializers.Serializer):  # type: ignore[type-arg]
    pair = serializers.CharField(max_length=32, help_text="the pair's token")


class LabelingUndoneOutput(serializers.Serializer):  # type: ignore[type-arg]
    pair = serializers.CharField()
    choice = serializers.ChoiceField(choices=labeling.ScreenChoice.choices)


class LabelingUndoOutput(LabelingStateOutput):
    undone = LabelingUndoneOutput()


def _pair_data(shown: labeling.Shown | None) -> dict[str, Any] | None:
    if shown is None:
        return None
    return {
        "token": shown.pair.token,
        "comment": shown.pair.comment,
        "product": _product(shown.pair),
        "reply_a": shown.reply_a,
        "reply_b": shown.reply_b,
    }


def state_data(state: labeling.LabelingState) -> dict[str, Any]:
    return {
        "pair": _pair_data(state.current),
        "next": _pair_data(state.upcoming),
        "progress": {"done": state.progress.done, "available": state.progress.available},
        "preview": state.preview,
    }


def user_id(request: Request) -> int:
    return int(request.user.pk or 0)


def labeling_error(exc: labeling.LabelingError) -> FieldErrorsException:
    return FieldErrorsException.for_field(exc.field, exc.message)


def current_state(access: reads.LabelingAccess, user_id: int) -> labeling.LabelingState:
    if access.preview:
        return labeling.preview_state(test=access.test, user_id=user_id)
    return labeling.labeling_state(test=access.test, labeler_id=user_id)


class _LabelingApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsLabelerOrOperator]
    parser_classes = JSON_ONLY
    serializer_class: type[serializers.Serializer] = LabelingStateOutput  # type: ignore[type-arg]

    def access(self, request: Request, token: str) -> reads.LabelingAccess:
        try:
            return reads.labeling_test_get(user=request.user, token=token)
        except Http404:
            raise NotFound(reads.NOT_FOUND) from None

    def labeling_access(self, request: Request, token: str) -> reads.LabelingAccess:
        """Like ``access``, refusing an operator's preview: labels, undo and skip need an
        assignment."""
        access = self.access(request, token)
        if access.preview:
            raise PermissionDenied(PREVIEW_MESSAGE)
        return access


class LabelingTestListApi(_LabelingApi):
    serializer_class = LabelingTestOutput

    @extend_schema(responses=LabelingTestOutput(many=True))
    def get(self, request: Request) -> Response:
        """My open blind tests, newest first, with my progress."""
        page = self.paginate_queryset(reads.labeling_tests_for(request.user))
        rows = [
            {
                "token": t.token,
                "instructions": t.instructions,
                "labeled_by_me": getattr(t, "labeled_by_me", 0),
                "open_pairs": getattr(t, "open_pairs", 0),
                "preview": not getattr(t, "assigned", False),
                "page": reverse("console:labeling-test", args=[t.token]),
            }
            for t in page or []
        ]
        return self.get_paginated_response(LabelingTestOutput(rows, many=True).data)


class LabelingNextApi(_LabelingApi):
    @extend_schema(request=None, responses={200: LabelingStateOutput, 404: NOT_FOUND})
    def get(self, request: Request, token: str) -> Response:
        """The pair to label now and the next one. Showing a pair reserves one of its k label
        slots for a while (``HAT_BLIND_ASSIGNMENT_TTL_S``); asking again returns the same pair
        until it is labeled or skipped."""
        access = self.access(request, token)
        return Response(state_data(current_state(access, user_id(request))))


class LabelingLabelApi(_LabelingApi):
    serializer_class = LabelingLabeledOutput

    @extend_schema(
        request=LabelingLabelInput,
        responses={
            201: LabelingLabeledOutput,
            200: LabelingLabeledOutput,
            400: ERRORS,
            404: NOT_FOUND,
        },
    )
    def post(self, request: Request, token: str) -> Response:
        """Label a pair I was shown: `a` (left reply better), `tie`, `b` (right reply better)
        or `both_bad`. Sending the same pair again changes nothing and returns the first label
        (200). The answer carries the pairs to show next."""
        access = self.labeling_access(request, token)
        data = LabelingLabelInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            submitted = labeling.label_submit(
                test=access.test,
                labeler_id=user_id(request),
                pair_token=values["pair"],
                choice=values["choice"],
                reason=values["reason"],
                seconds=values.get("seconds"),
            )
        except labeling.LabelingError as exc:
            raise labeling_error(exc) from None
        label = submitted.label
        body = state_data(current_state(access, user_id(request)))
        body["label"] = {
            "pair": values["pair"],
            "choice": labeling.screen_choice(choice=label.choice, left_side=label.left_side),
            "reason": label.reason,
            "seconds": label.seconds,
            "created_at": label.created_at,
        }
        body["created"] = submitted.created
        code = status.HTTP_201_CREATED if submitted.created else status.HTTP_200_OK
        return Response(LabelingLabeledOutput(body).data, status=code)


class LabelingUndoApi(_LabelingApi):
    serializer_class = LabelingUndoOutput

    @extend_schema(request=None, responses={200: LabelingUndoOutput, 400: ERRORS, 404: NOT_FOUND})
    def post(self, request: Request, token: str) -> Response:
        """Take back my last label in this test; its pair is shown again."""
        access = self.labeling_access(request, token)
        try:
            undone = labeling.label_undo(test=access.test, labeler_id=user_id(request))
        except labeling.LabelingError as exc:
            raise labeling_error(exc) from None
        body = state_data(current_state(access, user_id(request)))
        body["undone"] = {"pair": undone.pair.token, "choice": undone.choice}
        return Response(LabelingUndoOutput(body).data)


class LabelingSkipApi(_LabelingApi):
    @extend_schema(
        request=LabelingSkipInput, responses={200: LabelingStateOutput, 400: ERRORS, 404: NOT_FOUND}
    )
    def post(self, request: Request, token: str) -> Response:
        """Skip a pair I hold: its slot goes back to other labelers and I never see it again."""
        access = self.labeling_access(request, token)
        data = LabelingSkipInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            labeling.pair_skip(
                test=access.test,
                labeler_id=user_id(request),
                pair_token=data.validated_data["pair"],
            )
        except labeling.LabelingError as exc:
            raise labeling_error(exc) from None
        return Response(state_data(current_state(access, user_id(request))))


__all__ = [
    "LabelingLabelApi",
    "LabelingNextApi",
    "LabelingSkipApi",
    "LabelingTestListApi",
    "LabelingUndoApi",
]
