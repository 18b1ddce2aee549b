"""DRF permission classes for the console API and the live-room API.

Tenancy (which rooms a user sees) is in ``selectors``; these classes say which roles may call
which endpoints at all.
"""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from console.roles import can_use_console, is_operator
from harness_app.authentication import RoomKeyPrincipal


def _signed_in_person(user: Any) -> bool:
    """A signed-in console account (a room key authenticates too, but is no person)."""
    return bool(user and user.is_authenticated and not isinstance(user, RoomKeyPrincipal))


class IsConsoleUser(BasePermission):
    """Operators (all rooms) and merchants (own rooms); not labelers, not room keys."""

    message = "This endpoint is for operators and merchants."

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        return _signed_in_person(user) and can_use_console(user)


class IsOperator(BasePermission):
    message = "Only operators may do this."

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        return _signed_in_person(user) and is_operator(user)


class HasRoomKeyScope(BasePermission):
    """A live-room API key with the view's ``required_scope``."""

    message = "A room API key with the required scope is needed."

    def has_permission(self, request: Request, view: Any) -> bool:
        principal = request.user
        scope = getattr(view, "required_scope", None)
        return isinstance(principal, RoomKeyPrincipal) and scope in principal.key.scopes
