"""People: invite merchants, operators and labelers with a one-time link, change roles,
deactivate and reactivate, give rooms to merchants. Every change writes a
``PeopleAuditEvent`` in the same transaction (docs/CONSOLE.md, "People").

Rules: a person has exactly one role; nobody deactivates themselves or changes their own
role; the last active operator cannot be deactivated or given another role; a merchant who
owns rooms keeps the merchant role until their rooms are given to another merchant. Errors
are ``ValidationError``s keyed by the form field they are about; nothing is half-saved.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.validators import EmailValidator
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from console.models import Invitation, PeopleAuditEvent
from console.roles import Role
from harness_app.models import Room

log = logging.getLogger(__name__)
Action = PeopleAuditEvent.Action


@dataclass(frozen=True)
class InviteLink:
    """A freshly made invitation: the path holds the only copy of the token."""

    user: Any
    path: str
    expires_at: datetime


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def invite_ttl() -> timedelta:
    return timedelta(hours=float(getattr(settings, "HAT_INVITE_TTL_H", 72.0)))


def person_role(user: Any) -> Role | None:
    """The one role of ``user`` (superusers: operator); None for a user given none."""
    if getattr(user, "is_superuser", False):
        return Role.OPERATOR
    names = {g.name for g in user.groups.all()}
    for role in (Role.OPERATOR, Role.MERCHANT, Role.LABELER):
        if role.value in names:
            return role
    return None


def _parse_role(value: Any) -> Role:
    try:
        return Role(value)
    except ValueError:
        allowed = ", ".join(r.value for r in Role)
        raise ValidationError(
            {"role": [f"Unknown role {value!r}; choose one of {allowed}."]}
        ) from None


def _audit(*, actor: Any, target: Any, action: str, detail: str) -> PeopleAuditEvent:
    return PeopleAuditEvent.objects.create(
        actor=actor,
        actor_username=actor.get_username() if actor is not None else "",
        target=target,
        target_username=target.get_username(),
        action=action,
        detail=detail[:500],
    )


def _new_invitation(*, user: Any, created_by: Any) -> InviteLink:
    now = timezone.now()
    Invitation.objects.filter(user=user, used_at=None, revoked_at=None).update(
        revoked_at=now, updated_at=now
    )
    token = secrets.token_urlsafe(32)
    invitation = Invitation.objects.create(
        user=user,
        token_hash=token_hash(token),
        created_by=created_by,
        expires_at=now + invite_ttl(),
    )
    path = reverse("console:invite-accept", kwargs={"token": token})
    return InviteLink(user=user, path=path, expires_at=invitation.expires_at)


def _lock_operators() -> None:
    """Serialize every change that can lower the number of active operators (two operators
    deactivating each other at once must not leave none)."""
    Group.objects.select_for_update().get_or_create(name=Role.OPERATOR.value)


def _active_operators_besides(user: Any) -> int:
    return (
        get_user_model()
        .objects.filter(is_active=True)
        .filter(Q(groups__name=Role.OPERATOR.value) | Q(is_superuser=True))
        .exclude(pk=user.pk)
        .distinct()
        .count()
    )


@transaction.atomic
def person_invite(*, username: str, email: str, role: Any, invited_by: Any) -> InviteLink:
    """Create an account with ``role`` and no usable password, and its one-time link to
    choose one (valid ``HAT_INVITE_TTL_H`` hours). No e-mail is sent: the operator hands the
    link over."""
    User = get_user_model()
    errors: dict[str, list[str]] = {}
    username = str(username or "").strip()
    email = str(email or "").strip()
    if not username:
        errors.setdefault("username", []).append("Required.")
    else:
        try:
            User._meta.get_field("username").run_validators(username)
        except ValidationError as exc:
            errors.setdefault("username", []).extend(exc.messages)
        if User.objects.filter(username__iexact=username).exists():
            errors.setdefault("username", []).append(f"The username {username!r} is taken.")
    try:
        EmailValidator()(email)
    except ValidationError:
        errors.setdefault("email", []).append("Enter a valid e-mail address.")
    else:
        if User.objects.filter(email__iexact=email).exists():
            errors.setdefault("email", []).append("A person with this e-mail address exists.")
    try:
        parsed = _parse_role(role)
    except ValidationError as exc:
        errors.update(exc.message_dict)
    if errors:
        raise ValidationError(errors)
    user = User(username=username, email=email)
    user.set_unusable_password()
    try:
        with transaction.atomic():
            user.save()
    except IntegrityError:  # a racing invite took the name
        raise ValidationError({"username": [f"The username {username!r} is taken."]}) from None
    user.groups.add(Group.objects.get_or_create(name=parsed.value)[0])  # type: ignore[attr-defined]
    link = _new_invitation(user=user, created_by=invited_by)
    _audit(
        actor=invited_by,
        target=user,
        action=Action.INVITED,
        detail=f"Invited as {parsed.value.lower()} ({email}); the link expires "
        f"{link.expires_at:%Y-%m-%d %H:%M} UTC.",
    )
    log.info("%s invited %s as %s", invited_by.get_username(), username, parsed.value)
    return link


@transaction.atomic
def invitation_reissue(*, user: Any, actor: Any) -> InviteLink:
    """A new link for someone who has not chosen a password yet; older links stop working."""
    if user.has_usable_password():
        raise ValidationError(
            {"user": [f"{user.get_username()} has chosen a password already; no link needed."]}
        )
    if not user.is_active:
        raise ValidationError({"user": [f"{user.get_username()} is deactivated."]})
    link = _new_invitation(user=user, created_by=actor)
    _audit(
        actor=actor,
        target=user,
        action=Action.INVITE_REISSUED,
        detail="New invite link; earlier links revoked; expires "
        f"{link.expires_at:%Y-%m-%d %H:%M} UTC.",
    )
    return link


def _live_invitations(token: str) -> Any:
    return Invitation.objects.select_related("user").filter(
        token_hash=token_hash(token),
        used_at=None,
        revoked_at=None,
        expires_at__gt=timezone.now(),
        user__is_active=True,
    )


def invitation_valid(token: str) -> Invitation | None:
    """The live invitation of ``token``: not used, revoked or expired, its person active."""
    if not token or len(token) > 200:
        return None
    invitation: Invitation | None = _live_invitations(token).first()
    return invitation


@transaction.atomic
def invitation_accept(*, token: str, password: str) -> Any:
    """Set the invited person's password through their link; the link then dies. Raises a
    ``ValidationError`` on ``token`` for a dead link, on ``new_password1`` for a weak one."""
    invitation = (
        _live_invitations(token).select_for_update(of=("self",)).first()
        if token and len(token) <= 200
        else None
    )
    if invitation is None:
        raise ValidationError({"token": ["This link was used already, replaced or has expired."]})
    user = invitation.user
    try:
        validate_password(password, user)
    except ValidationError as exc:
        raise ValidationError({"new_password1": exc.messages}) from None
    user.set_password(password)
    user.save(update_fields=["password"])
    invitation.used_at = timezone.now()
    invitation.save(update_fields=["used_at", "updated_at"])
    _audit(
        actor=user,
        target=user,
        action=Action.INVITE_ACCEPTED,
        detail="Accepted the invite and chose a password.",
    )
    return user


@transaction.atomic
def person_role_change(*, user: Any, role: Any, actor: Any) -> Any:
    parsed = _parse_role(role)
    if user.pk == actor.pk:
        raise ValidationError({"role": ["You cannot change your own role."]})
    if user.is_superuser:
        raise ValidationError({"role": ["A superuser is always an operator (Django admin)."]})
    before = person_role(user)
    if before == parsed:
        raise ValidationError({"role": [f"{user.get_username()} is a {parsed.value.lower()}."]})
    if before == Role.OPERATOR:
        _lock_operators()
        if user.is_active and _active_operators_besides(user) == 0:
            raise ValidationError(
                {"role": ["This is the last active operator; make another operator first."]}
            )
    if before == Role.MERCHANT:
        owned = Room.objects.filter(owner=user).count()
        if owned:
            raise ValidationError(
                {
                    "role": [
                        f"{user.get_username()} owns {owned} room{'s' if owned != 1 else ''}; "
                        "give them to another merchant first."
                    ]
                }
            )
    role_groups = Group.objects.filter(name__in=[r.value for r in Role])
    user.groups.remove(*role_groups)
    user.groups.add(Group.objects.get_or_create(name=parsed.value)[0])
    if hasattr(user, "_hat_roles"):
        del user._hat_roles
    was = before.value.lower() if before else "no role"
    _audit(
        actor=actor,
        target=user,
        action=Action.ROLE_CHANGED,
        detail=f"Role changed from {was} to {parsed.value.lower()}.",
    )
    return user


@transaction.atomic
def person_deactivate(*, user: Any, actor: Any) -> Any:
    """Deactivated people cannot log in, their sessions and API tokens stop working, and
    their unused invite links die. Their rooms stay theirs until given to someone else."""
    if user.pk == actor.pk:
        raise ValidationError({"user": ["You cannot deactivate yourself."]})
    if not user.is_active:
        raise ValidationError({"user": [f"{user.get_username()} is deactivated already."]})
    if person_role(user) == Role.OPERATOR:
        _lock_operators()
        if _active_operators_besides(user) == 0:
            raise ValidationError({"user": ["This is the last active operator."]})
    user.is_active = False
    user.save(update_fields=["is_active"])
    now = timezone.now()
    Invitation.objects.filter(user=user, used_at=None, revoked_at=None).update(
        revoked_at=now, updated_at=now
    )
    _audit(actor=actor, target=user, action=Action.DEACTIVATED, detail="Deactivated.")
    return user


@transaction.atomic
def person_reactivate(*, user: Any, actor: Any) -> Any:
    if user.is_active:
        raise ValidationError({"user": [f"{user.get_username()} is active already."]})
    user.is_active = True
    user.save(update_fields=["is_active"])
    detail = "Reactivated."
    if not user.has_usable_password():
        detail += " They have no password yet: re-issue an invite link."
    _audit(actor=actor, target=user, action=Action.REACTIVATED, detail=detail)
    return user


def _on_field(change: Any, field: str, **kwargs: Any) -> Any:
    """Call ``change``; its errors about the person (``user``) are put on ``field``."""
    try:
        return change(**kwargs)
    except ValidationError as exc:
        if not hasattr(exc, "error_dict"):
            raise
        errors = exc.message_dict
        raise ValidationError(
            {(field if key == "user" else key): msgs for key, msgs in errors.items()}
        ) from None


@transaction.atomic
def person_update(*, user: Any, actor: Any, role: Any = None, is_active: bool | None = None) -> Any:
    """The API's edit of a person: ``role`` through ``person_role_change``, ``is_active``
    through ``person_reactivate`` / ``person_deactivate`` (their rules, their audit rows).
    A value the person already has changes nothing; errors are keyed ``role`` or
    ``is_active``; a rejected edit changes nothing (one transaction)."""
    if is_active is True and not user.is_active:
        _on_field(person_reactivate, "is_active", user=user, actor=actor)
    if role is not None and person_role(user) != _parse_role(role):
        person_role_change(user=user, role=role, actor=actor)
    if is_active is False and user.is_active:
        _on_field(person_deactivate, "is_active", user=user, actor=actor)
    return user


@transaction.atomic
def room_owner_assign(*, room: Room, owner: Any, actor: Any) -> Room:
    """Give ``room`` to ``owner``, an active merchant; recorded on both merchants' logs."""
    if owner is None or not owner.is_active or person_role(owner) != Role.MERCHANT:
        raise ValidationError({"owner": ["Choose an active merchant."]})
    room = Room.objects.select_for_update().select_related("owner").get(pk=room.pk)
    before = room.owner
    if before.pk == owner.pk:
        raise ValidationError({"owner": [f"{owner.get_username()} owns {room.name!r} already."]})
    if Room.objects.filter(owner=owner, name=room.name).exists():
        raise ValidationError(
            {"owner": [f"{owner.get_username()} already has a room named {room.name!r}."]}
        )
    room.owner = owner
    room.save(update_fields=["owner", "updated_at"])
    detail = (
        f"Room {room.name!r} (#{room.pk}) given from {before.get_username()} "
        f"to {owner.get_username()}."
    )
    _audit(actor=actor, target=owner, action=Action.ROOM_OWNER_CHANGED, detail=detail)
    _audit(actor=actor, target=before, action=Action.ROOM_OWNER_CHANGED, detail=detail)
    return room
