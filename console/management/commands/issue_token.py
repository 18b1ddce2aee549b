"""Issue an API token for a console user and print it once (only its digest is stored)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from console.api_tokens import TokenLimitReached, api_token_issue


class Command(BaseCommand):
    help = "Issue an API token for USER and print it once (send it as 'Authorization: Token ...')."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--ttl-hours",
            type=float,
            default=None,
            help="lifetime in hours (default: HAT_API_TOKEN_TTL_H)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        user_model = get_user_model()
        try:
            user = user_model._default_manager.get_by_natural_key(options["username"])
        except user_model.DoesNotExist as exc:
            raise CommandError(f"no user named {options['username']!r}") from exc
        if not user.is_active:
            raise CommandError(f"user {options['username']!r} is inactive")
        ttl_hours = options["ttl_hours"]
        if ttl_hours is not None and ttl_hours <= 0:
            raise CommandError("--ttl-hours must be positive")
        ttl = timedelta(hours=ttl_hours) if ttl_hours is not None else None
        try:
            instance, token = api_token_issue(user=user, ttl=ttl)
        except TokenLimitReached as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(token)
        self.stderr.write(f"expires {instance.expiry:%Y-%m-%d %H:%M} UTC; it is not shown again")
