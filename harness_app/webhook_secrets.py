"""The Django side of webhook tools: the deployer's address policy, and the rooms' signing
secrets (encrypted at rest, resolved only inside their room).

Secrets are encrypted with Fernet (AES-128-CBC + HMAC-SHA256) under ``HAT_SECRETS_KEY``;
with several keys (MultiFernet) the first encrypts and all decrypt, so a key can be rotated
without downtime (``manage.py rotate_webhook_secrets`` re-encrypts under the first key).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from harness_app.harness.webhook_address import AddressPolicy, parse_networks
from harness_app.models import Room, WebhookSecret


def address_policy() -> AddressPolicy:
    return AddressPolicy(parse_networks(settings.HAT_WEBHOOK_ALLOWED_NETWORKS))


def _keys() -> list[str]:
    keys = [k for k in settings.HAT_SECRETS_KEY if k.strip()]
    if keys:
        return keys
    if not settings.HAT_SECRETS_DEV_KEY_ALLOWED:
        raise ImproperlyConfigured(
            "HAT_SECRETS_KEY is not set: generate one with "
            '`python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key()'
            '.decode())"` (see docs/OPERATIONS.md)'
        )
    # Embedded/dev only: stable across restarts, and distinct from SECRET_KEY itself.
    digest = hashlib.sha256(b"hat-webhook-secrets:" + settings.SECRET_KEY.encode()).digest()
    return [base64.urlsafe_b64encode(digest).decode()]


def _box() -> MultiFernet:
    try:
        return MultiFernet([Fernet(key.strip().encode()) for key in _keys()])
    except ValueError as exc:  # a malformed key
        raise ImproperlyConfigured(f"HAT_SECRETS_KEY holds an invalid Fernet key: {exc}") from None


def encrypt(value: str) -> str:
    return _box().encrypt(value.encode()).decode()


def decrypt(token: str) -> str | None:
    """The plaintext, or None when no configured key opens it (a key was dropped too soon)."""
    try:
        return _box().decrypt(token.encode()).decode()
    except InvalidToken:
        return None


def reencrypt(token: str) -> str:
    """``token`` under the current first key (MultiFernet.rotate)."""
    return _box().rotate(token.encode()).decode()


def room_secret_resolver(room: Room) -> Callable[[str], str | None]:
    """A resolver for one room's harness: a ``secret_ref`` names a secret of *this* room, and
    nothing else (no environment variables, no other room)."""

    def resolve(name: str) -> str | None:
        secret = WebhookSecret.objects.filter(room_id=room.pk, name=name).first()
        if secret is None:
            return None
        value = decrypt(secret.value_encrypted)
        now = timezone.now()
        if value is not None and (
            secret.last_used_at is None or (now - secret.last_used_at).total_seconds() > 60
        ):
            WebhookSecret.objects.filter(pk=secret.pk).update(last_used_at=now)
        return value

    return resolve
