"""Roles of HAT Console users, as Django auth groups.

- Operator: owns harnesses, experiments, training and evaluation across all rooms.
- Merchant: sees and edits only the rooms they own (others are 404, never 403).
- Labeler: sees only the blind labeling pages.
Superusers have every operator right.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import HttpRequest


class Role(StrEnum):
    OPERATOR = "Operator"
    MERCHANT = "Merchant"
    LABELER = "Labeler"


UserLike = AbstractBaseUser | AnonymousUser


def user_roles(user: UserLike) -> frozenset[Role]:
    """The roles of ``user``, cached on the instance for the length of a request."""
    if not user.is_authenticated:
        return frozenset()
    cached: frozenset[Role] | None = getattr(user, "_hat_roles", None)
    if cached is not None:
        return cached
    names = set(user.groups.values_list("name", flat=True))  # type: ignore[union-attr,attr-defined]
    roles = frozenset(r for r in Role if r.value in names)
    if getattr(user, "is_superuser", False):
        roles = roles | {Role.OPERATOR}
    user._hat_roles = roles  # type: ignore[union-attr,attr-defined]
    return roles


def is_operator(user: UserLike) -> bool:
    return Role.OPERATOR in user_roles(user)


def is_merchant(user: UserLike) -> bool:
    return Role.MERCHANT in user_roles(user)


def is_labeler(user: UserLike) -> bool:
    return Role.LABELER in user_roles(user)


def can_use_console(user: UserLike) -> bool:
    """Operators and merchants use the operator console; labelers only their pages."""
    return is_operator(user) or is_merchant(user)


def roles_context(request: HttpRequest) -> dict[str, Any]:
    roles = user_roles(request.user)
    return {
        "is_operator": Role.OPERATOR in roles,
        "is_merchant": Role.MERCHANT in roles,
        "is_labeler": Role.LABELER in roles,
    }
