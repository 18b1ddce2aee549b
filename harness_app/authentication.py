"""Authentication of the live-room backend with a per-room API key.

Send ``Authorization: Bearer hat_<prefix>_<secret>``. The authenticated principal is the
key's room, never a user: console endpoints reject it.
"""

from __future__ import annotations

from typing import Any

from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from harness_app.models import Room, RoomApiKey


class RoomKeyPrincipal:
    """What ``request.user`` is for a request authenticated with a room key."""

    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = False
    is_superuser = False
    pk = None

    def __init__(self, key: RoomApiKey) -> None:
        self.key = key
        self.room: Room = key.room

    def __str__(self) -> str:
        return f"room key {self.key.prefix} of room {self.room.pk}"


class RoomApiKeyAuthentication(BaseAuthentication):
    keyword = b"bearer"

    def authenticate(self, request: Request) -> tuple[RoomKeyPrincipal, RoomApiKey] | None:
        from harness_app.selectors import api_key_lookup
        from harness_app.services import api_key_touch

        header = get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword:
            return None
        if len(header) != 2:
            raise AuthenticationFailed("Authorization header must be 'Bearer <room API key>'.")
        try:
            raw = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise AuthenticationFailed("The API key contains non-ASCII characters.") from None
        key = api_key_lookup(raw)
        if key is None:
            raise AuthenticationFailed("Unknown or revoked room API key.")
        api_key_touch(key=key)
        return RoomKeyPrincipal(key), key

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="live-room"'


def room_of(principal: Any) -> Room | None:
    return principal.room if isinstance(principal, RoomKeyPrincipal) else None
