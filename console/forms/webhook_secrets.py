"""Add or rotate a room's webhook signing secret. The value is a password input that is
never rendered back, not even after an error."""

from __future__ import annotations

from django import forms
from django.core.validators import RegexValidator

from harness_app.services import WEBHOOK_SECRET_MAX_CHARS, WEBHOOK_SECRET_MIN_CHARS


def _value_field() -> forms.CharField:
    return forms.CharField(
        min_length=WEBHOOK_SECRET_MIN_CHARS,
        max_length=WEBHOOK_SECRET_MAX_CHARS,
        strip=False,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="The HMAC signing secret your receiver checks. Stored encrypted; it is "
        "never shown again.",
    )


class WebhookSecretCreateForm(forms.Form):
    name = forms.CharField(
        max_length=64,
        validators=[
            RegexValidator(
                r"^[A-Z][A-Z0-9_]{0,63}$", "use uppercase letters, digits and '_', starting A-Z"
            )
        ],
        help_text="What a webhook tool's secret_ref names, e.g. SHOP_WEBHOOK_SECRET.",
    )
    value = _value_field()


class WebhookSecretRotateForm(forms.Form):
    value = _value_field()
