"""API tokens for console users (django-rest-knox): issue one (shown once), revoke.

Only a digest of each token is stored; the token itself exists in the issuing response (or
the `issue_token` command's output) and nowhere else.
"""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from knox.models import AuthToken
from knox.settings import knox_settings


class TokenLimitReached(Exception):
    """The user already holds the most live tokens allowed (HAT_API_TOKEN_LIMIT_PER_USER)."""


def api_tokens_live_count(*, user: AbstractBaseUser) -> int:
    now = timezone.now()
    return AuthToken.objects.filter(Q(expiry__gt=now) | Q(expiry__isnull=True), user=user).count()


@transaction.atomic
def api_token_issue(
    *, user: AbstractBaseUser, ttl: timedelta | None = None
) -> tuple[AuthToken, str]:
    """A new token for ``user``: the stored row (digest, expiry) and the token, shown once."""
    limit = knox_settings.TOKEN_LIMIT_PER_USER
    if limit is not None and api_tokens_live_count(user=user) >= limit:
        raise TokenLimitReached(
            f"you already hold {limit} live API tokens; revoke one "
            "(POST /api/v1/auth/logout/ with it, or /api/v1/auth/logout-all/) first"
        )
    instance, token = AuthToken.objects.create(user=user, expiry=ttl or knox_settings.TOKEN_TTL)
    return instance, token


def api_tokens_revoke_all(*, user: AbstractBaseUser) -> int:
    deleted, _ = AuthToken.objects.filter(user=user).delete()
    return deleted
