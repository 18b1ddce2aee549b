"""Re-encrypt every webhook secret under the first key of HAT_SECRETS_KEY (after a new key
was put in front of the old one); the old key can be removed once this has run."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django.db import transaction

from harness_app import webhook_secrets
from harness_app.models import WebhookSecret


class Command(BaseCommand):
    help = "Re-encrypt every webhook secret under the first HAT_SECRETS_KEY key."

    def handle(self, *args: Any, **options: Any) -> None:
        count = 0
        with transaction.atomic():
            for secret in WebhookSecret.objects.select_for_update().only("id", "value_encrypted"):
                secret.value_encrypted = webhook_secrets.reencrypt(secret.value_encrypted)
                secret.save(update_fields=["value_encrypted"])
                count += 1
        self.stdout.write(f"re-encrypted {count} webhook secret(s) under the current key")
