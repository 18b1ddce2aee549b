"""Reads for the People pages: people with their role and rooms, one person, the audit log,
the merchants a room can be given to."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import Count, Exists, OuterRef, Prefetch, QuerySet
from django.http import Http404
from django.utils import timezone

from console.models import Invitation, PeopleAuditEvent
from console.roles import Role
from harness_app.models import Room


def _with_roles(users: QuerySet[Any]) -> QuerySet[Any]:
    roles = Group.objects.filter(name__in=[r.value for r in Role])
    live = Invitation.objects.filter(
        user=OuterRef("pk"), used_at=None, revoked_at=None, expires_at__gt=timezone.now()
    )
    return users.prefetch_related(Prefetch("groups", queryset=roles)).annotate(
        rooms_n=Count("rooms", distinct=True), invite_pending=Exists(live)
    )


def people_list() -> QuerySet[Any]:
    """Everyone, active first, by username, with ``rooms_n`` and ``invite_pending``."""
    return _with_roles(get_user_model().objects.all()).order_by("-is_active", "username")


def person_get(*, user_id: Any) -> Any:
    try:
        return _with_roles(get_user_model().objects.all()).get(pk=user_id)
    except (get_user_model().DoesNotExist, ValueError, TypeError):
        raise Http404("No such person.") from None


def audit_events(*, target: Any = None) -> QuerySet[PeopleAuditEvent]:
    """The audit log, newest first (one person's when ``target`` is given)."""
    events = PeopleAuditEvent.objects.all()
    if target is not None:
        events = events.filter(target=target)
    return events.order_by("-created_at", "-id")


def merchants_active() -> QuerySet[Any]:
    return (
        get_user_model()
        .objects.filter(is_active=True, groups__name=Role.MERCHANT.value)
        .order_by("username")
    )


def rooms_with_owners() -> QuerySet[Room]:
    return Room.objects.select_related("owner").order_by("name", "id")


def rooms_of(user: Any) -> QuerySet[Room]:
    return Room.objects.filter(owner=user).order_by("name", "id")
