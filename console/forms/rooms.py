"""Create a room (operators) and assign its merchant; edit a room's live-reply settings."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.core.validators import RegexValidator
from django.db.models import QuerySet

from console.roles import Role
from training_app.models import ModelEndpoint


class RoomCreateForm(forms.Form):
    name = forms.CharField(max_length=120)
    owner = forms.ModelChoiceField(
        queryset=get_user_model().objects.none(),
        help_text="The merchant who owns the room; only they (and operators) will see it.",
    )
    locale = forms.CharField(
        max_length=16,
        initial="en-US",
        validators=[
            RegexValidator(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$", "use a BCP 47 tag like en-US")
        ],
    )
    currency = forms.CharField(
        max_length=3,
        initial="USD",
        validators=[RegexValidator(r"^[A-Z]{3}$", "use a 3-letter ISO 4217 code like USD")],
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        merchants = get_user_model().objects.filter(
            groups__name=Role.MERCHANT.value, is_active=True
        )
        self.fields["owner"].queryset = merchants.order_by("username")  # type: ignore[attr-defined]


class RoomSettingsForm(forms.Form):
    """How a room answers live comments (operators and the owning merchant)."""

    reply_deadline_ms = forms.IntegerField(
        label="Reply deadline (ms)",
        min_value=100,
        max_value=60_000,
        help_text="Past this the viewer gets the fallback reply. The report's target is "
        "15000 (15 s).",
    )
    fallback_reply = forms.CharField(
        max_length=500,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Said when the model is late, down, or a hook blocks the reply.",
    )
    max_comment_chars = forms.IntegerField(
        label="Longest comment (characters)",
        min_value=1,
        max_value=10_000,
        help_text="Longer comments are refused by the reply API with a 400.",
    )
    serving_arm = forms.ChoiceField(
        label="Serving agent",
        choices=[("harness", "Harness agent"), ("react", "ReAct baseline")],
        help_text="Which agent answers when no experiment is running.",
    )
    reply_endpoint = forms.ModelChoiceField(
        label="Model endpoint",
        queryset=ModelEndpoint.objects.none(),
        required=False,
    )

    def __init__(
        self,
        *args: Any,
        default_endpoint_name: str = "",
        endpoints: QuerySet[ModelEndpoint] | None = None,
        **kwargs: Any,
    ) -> None:
        """``endpoints``: the ones the user may pick (``endpoints_usable``); default: every
        active endpoint."""
        super().__init__(*args, **kwargs)
        field = self.fields["reply_endpoint"]
        if endpoints is None:
            endpoints = ModelEndpoint.objects.filter(is_active=True).order_by("name")
        field.queryset = endpoints  # type: ignore[attr-defined]
        field.empty_label = f"Default ({default_endpoint_name})"  # type: ignore[attr-defined]
        field.help_text = (
            "Active endpoints only. Default: the console's default endpoint "
            f"({default_endpoint_name})."
        )

    def clean_fallback_reply(self) -> str:
        text = str(self.cleaned_data["fallback_reply"]).strip()
        if not text:
            raise forms.ValidationError("must not be blank: viewers see it when the model fails")
        return text

    @staticmethod
    def initial_from(room: Any) -> dict[str, Any]:
        return {
            "reply_deadline_ms": room.reply_deadline_ms,
            "fallback_reply": room.fallback_reply,
            "max_comment_chars": room.max_comment_chars,
            "serving_arm": room.serving_arm,
            "reply_endpoint": room.reply_endpoint_id,
        }
