"""People API, operators only (merchants, labelers and room keys get a 403, like every
operator API): list and invite people, read and edit one (role, active), re-issue an invite
link, the audit log, and give a room to a merchant.

Every write is a ``console.services.people`` call (its rules, its audit rows); the API adds
none of its own, and the service's ``ValidationError`` is a 400 naming the field
(``console.api_errors``). The one-time invite link is in the response that made it only
(``Cache-Control: no-store``); only its hash is stored. docs/API.md, "People".
"""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from console.api_parsers import JSON_ONLY
from console.api_query_params import query_int
from console.models import PeopleAuditEvent
from console.roles import Role
from console.selectors import people as selectors
from console.services import people as services
from harness_app import selectors as room_selectors
from harness_app.api.serializers import RoomOutput
from harness_app.permissions import IsOperator

ERRORS = OpenApiResponse(description="invalid input or state; `errors` name the fields")
ROLE_HELP = "One of " + ", ".join(r.value for r in Role) + "."
MAX_ID = 2**63 - 1


# --- serializers ------------------------------------------------------------------------------


class PersonOutput(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    username = serializers.CharField()
    email = serializers.CharField()
    role = serializers.SerializerMethodField(help_text=f"{ROLE_HELP} Null: no role given.")
    is_active = serializers.BooleanField()
    has_password = serializers.SerializerMethodField(
        help_text="False until the person accepts their invite and chooses a password."
    )
    invite_pending = serializers.BooleanField(
        help_text="An invite link that is not used, replaced or expired exists."
    )
    rooms = serializers.IntegerField(source="rooms_n", help_text="Rooms the person owns.")
    date_joined = serializers.DateTimeField()
    last_login = serializers.DateTimeField(allow_null=True)

    def get_role(self, user: Any) -> str | None:
        role = services.person_role(user)
        return role.value if role is not None else None

    def get_has_password(self, user: Any) -> bool:
        return bool(user.has_usable_password())


class InvitedPersonOutput(PersonOutput):
    invite_url = serializers.CharField(
        help_text="The one-time link to choose a password (/invite/<token>/): shown only in "
        "this response, never stored (only its hash), not sent by e-mail."
    )
    expires_at = serializers.DateTimeField()


class InviteLinkOutput(serializers.Serializer[Any]):
    person = PersonOutput()
    invite_url = serializers.CharField(help_text="The new one-time link; earlier ones died.")
    expires_at = serializers.DateTimeField()


class PersonInviteInput(serializers.Serializer[Any]):
    # Types and lengths only: the service checks names, e-mails and roles (one copy of rules).
    username = serializers.CharField(max_length=150, allow_blank=True)
    email = serializers.CharField(max_length=254, allow_blank=True)
    role = serializers.CharField(max_length=32, help_text=ROLE_HELP)


class PersonUpdateInput(serializers.Serializer[Any]):
    role = serializers.CharField(max_length=32, required=False, help_text=ROLE_HELP)
    is_active = serializers.BooleanField(
        required=False, help_text="false deactivates (no login, tokens and links die)."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs:
            raise serializers.ValidationError("Send role, is_active or both.")
        return attrs


class AuditEventOutput(serializers.ModelSerializer[PeopleAuditEvent]):
    actor = serializers.CharField(source="actor_username", help_text="Who did it.")
    target = serializers.CharField(source="target_username", help_text="To whom.")

    class Meta:
        model = PeopleAuditEvent
        fields = ["id", "created_at", "actor", "actor_id", "target", "target_id", "action"]
        fields += ["detail"]
        read_only_fields = fields


class RoomOwnerInput(serializers.Serializer[Any]):
    owner = serializers.CharField(max_length=150, help_text="The username of an active merchant.")


# --- views ------------------------------------------------------------------------------------


def _person(user_id: int) -> dict[str, Any]:
    return dict(PersonOutput(selectors.person_get(user_id=user_id)).data)


def _with_link(request: Request, body: dict[str, Any], link: services.InviteLink) -> Response:
    body = {**body, "invite_url": request.build_absolute_uri(link.path)}
    body["expires_at"] = serializers.DateTimeField().to_representation(link.expires_at)
    response = Response(body, status=status.HTTP_201_CREATED)
    response["Cache-Control"] = "no-store"  # the one-time link is not kept by caches
    return response


class PersonListApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    parser_classes = JSON_ONLY
    serializer_class = PersonOutput

    @extend_schema(
        responses=PersonOutput(many=True), description="Everyone, active first, by username."
    )
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(selectors.people_list())
        return self.get_paginated_response(PersonOutput(page, many=True).data)

    @extend_schema(
        request=PersonInviteInput,
        responses={201: InvitedPersonOutput, 400: ERRORS},
        description="Invite a person: an account with the role and no password, and its "
        "one-time `invite_url` (valid HAT_INVITE_TTL_H hours), in this response only.",
    )
    def post(self, request: Request) -> Response:
        data = PersonInviteInput(data=request.data)
        data.is_valid(raise_exception=True)
        link = services.person_invite(**data.validated_data, invited_by=request.user)
        return _with_link(request, _person(link.user.pk), link)


class PersonDetailApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    parser_classes = JSON_ONLY
    serializer_class = PersonOutput

    @extend_schema(responses=PersonOutput)
    def get(self, request: Request, user_id: int) -> Response:
        return Response(_person(user_id))

    @extend_schema(
        request=PersonUpdateInput,
        responses={200: PersonOutput, 400: ERRORS},
        description="Change the role and/or deactivate (is_active false) or reactivate. A "
        "value the person has already changes nothing; a rejected edit changes nothing. "
        "Nobody changes their own role or deactivates themselves; the last active operator "
        "stays one.",
    )
    def patch(self, request: Request, user_id: int) -> Response:
        person = selectors.person_get(user_id=user_id)
        data = PersonUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        services.person_update(user=person, actor=request.user, **data.validated_data)
        return Response(_person(user_id))


class PersonInviteReissueApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    parser_classes = JSON_ONLY
    serializer_class = InviteLinkOutput

    @extend_schema(
        request=None,
        responses={201: InviteLinkOutput, 400: ERRORS},
        description="A new one-time link for someone without a password yet (earlier links "
        "stop working); in this response only. Errors are on `user`.",
    )
    def post(self, request: Request, user_id: int) -> Response:
        person = selectors.person_get(user_id=user_id)
        link = services.invitation_reissue(user=person, actor=request.user)
        return _with_link(request, {"person": _person(user_id)}, link)


class PeopleAuditApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    serializer_class = AuditEventOutput

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "person", OpenApiTypes.INT, description="Only the events about this person."
            )
        ],
        responses=AuditEventOutput(many=True),
        description="The People audit log, newest first.",
    )
    def get(self, request: Request) -> Response:
        target = None
        person_id = query_int(request, "person", minimum=1, maximum=MAX_ID)
        if person_id is not None:
            try:
                target = selectors.person_get(user_id=person_id)
            except Http404:
                raise ValidationError({"person": "no such person"}) from None
        page = self.paginate_queryset(selectors.audit_events(target=target))
        return self.get_paginated_response(AuditEventOutput(page, many=True).data)


class RoomOwnerApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsOperator]
    parser_classes = JSON_ONLY
    serializer_class = RoomOutput

    @extend_schema(
        request=RoomOwnerInput,
        responses={200: RoomOutput, 400: ERRORS},
        description="Give the room to another active merchant (audited on both merchants).",
    )
    def post(self, request: Request, room_id: int) -> Response:
        room = room_selectors.room_get(user=request.user, room_id=room_id)
        data = RoomOwnerInput(data=request.data)
        data.is_valid(raise_exception=True)
        owner = selectors.merchants_active().filter(username=data.validated_data["owner"]).first()
        services.room_owner_assign(room=room, owner=owner, actor=request.user)
        room = room_selectors.room_get(user=request.user, room_id=room_id)
        return Response(RoomOutput(room).data)
