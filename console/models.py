"""People: one-time invitations and the audit log of changes to people (docs/CONSOLE.md)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class Invitation(models.Model):
    """A one-time link for an invited person to choose their password.

    Only the SHA-256 of the link's token is stored (the token has 256 bits of entropy, so a
    fast hash is enough); the link is shown once, to the inviting operator. It works until
    ``expires_at``, once (``used_at``), and not after it is replaced or revoked.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="invitations"
    )
    token_hash = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(token_hash__regex=r"^[0-9a-f]{64}$"), name="invitation_hash_hex"
            ),
            models.CheckConstraint(
                condition=Q(expires_at__gt=models.F("created_at")),
                name="invitation_expires_after_creation",
            ),
        ]

    def __str__(self) -> str:
        return f"invitation of user {self.user_id}"


class PeopleAuditEvent(models.Model):
    """One change to a person: who did it, when, to whom, and what (a sentence)."""

    class Action(models.TextChoices):
        INVITED = "invited", "Invited"
        INVITE_REISSUED = "invite_reissued", "Invite link re-issued"
        INVITE_ACCEPTED = "invite_accepted", "Invite accepted"
        ROLE_CHANGED = "role_changed", "Role changed"
        DEACTIVATED = "deactivated", "Deactivated"
        REACTIVATED = "reactivated", "Reactivated"
        ROOM_OWNER_CHANGED = "room_owner_changed", "Room owner changed"

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    # Names are copied so the log still reads after an account is deleted.
    actor_username = models.CharField(max_length=150)
    target = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    target_username = models.CharField(max_length=150)
    action = models.CharField(max_length=32, choices=Action.choices)
    detail = models.CharField(max_length=500)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["target", "-created_at"], name="people_audit_target")]
        constraints = [
            models.CheckConstraint(
                condition=Q(
                    action__in=[
                        "invited",
                        "invite_reissued",
                        "invite_accepted",
                        "role_changed",
                        "deactivated",
                        "reactivated",
                        "room_owner_changed",
                    ]
                ),
                name="people_audit_action_valid",
            )
        ]

    def __str__(self) -> str:
        return f"{self.actor_username} {self.action} {self.target_username}"
