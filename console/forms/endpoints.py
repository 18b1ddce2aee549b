"""Create or edit a model endpoint (operators)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.validators import RegexValidator

from training_app.models import ModelEndpoint

FIELDS = (
    "name",
    "base_url",
    "model_name",
    "api_key_ref",
    "role",
    "tool_mode",
    "timeout_s",
    "max_concurrency",
    "max_tokens",
    "is_active",
)


class EndpointForm(forms.Form):
    name = forms.CharField(
        max_length=64,
        validators=[
            RegexValidator(
                r"^[a-z0-9][a-z0-9-]{0,63}$",
                "use lowercase letters, digits and '-', starting with a letter or digit",
            )
        ],
        help_text="How rooms, experiments and manage.py vllm_command refer to it.",
    )
    base_url = forms.URLField(
        label="Base URL",
        max_length=300,
        assume_scheme="http",
        help_text="The OpenAI-compatible API root, ending in /v1, e.g. http://10.0.0.5:8000/v1",
    )
    model_name = forms.CharField(
        max_length=300,
        required=False,
        help_text="Sent as the request's model field (vLLM: --served-model-name). Leave empty "
        "for a server pinned to one model.",
    )
    api_key_ref = forms.CharField(
        label="API key variable",
        max_length=64,
        required=False,
        validators=[
            RegexValidator(
                r"^[A-Z][A-Z0-9_]{0,63}$",
                "the NAME of an environment variable (A-Z, 0-9, _), not the key itself",
            )
        ],
        help_text="Name of the environment variable that holds the key, e.g. VLLM_KEY_PROD. "
        "The key itself is never stored here.",
    )
    role = forms.ChoiceField(choices=ModelEndpoint.Role.choices)
    tool_mode = forms.ChoiceField(
        choices=ModelEndpoint.ToolMode.choices,
        help_text="Native: the server parses tool calls (vLLM --tool-call-parser). Text: the "
        "model writes JSON action blocks (small models without a parser).",
    )
    timeout_s = forms.FloatField(
        label="Timeout (s)",
        min_value=0.1,
        max_value=600,
        initial=15.0,
        help_text="Read timeout of one model call; the room's reply deadline still applies.",
    )
    max_concurrency = forms.IntegerField(min_value=1, max_value=1024, initial=8)
    max_tokens = forms.IntegerField(
        min_value=1, max_value=32768, initial=256, help_text="Per model call."
    )
    is_active = forms.BooleanField(
        label="Active",
        required=False,
        initial=True,
        help_text="Inactive endpoints cannot be chosen, and rooms that use one fall back.",
    )

    def clean_base_url(self) -> str:
        url = str(self.cleaned_data["base_url"]).rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise forms.ValidationError("must be an http:// or https:// URL")
        return url

    def endpoint_fields(self) -> dict[str, Any]:
        return {name: self.cleaned_data[name] for name in FIELDS}

    @staticmethod
    def initial_from(endpoint: ModelEndpoint) -> dict[str, Any]:
        return {name: getattr(endpoint, name) for name in FIELDS}
