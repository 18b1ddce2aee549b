"""The harness page's try-it box, and the filters of a room's reply list."""

from __future__ import annotations

from typing import Any

from django import forms

from console.forms.products import SKU_VALIDATOR
from experiments_app.models import LiveReply
from experiments_app.routing import NoServingConfig, default_endpoint
from experiments_app.selectors.room_endpoints import endpoints_usable
from harness_app import selectors as harness_selectors
from training_app.models import ModelEndpoint


class TryItForm(forms.Form):
    """Run one comment through a chosen version, endpoint and agent; nothing is published."""

    version = forms.TypedChoiceField(coerce=int, label="Harness version")
    endpoint = forms.TypedChoiceField(coerce=int, label="Model endpoint")
    arm = forms.ChoiceField(
        label="Agent",
        choices=[
            (LiveReply.Arm.HARNESS, "Harness agent"),
            (LiveReply.Arm.REACT, "ReAct baseline"),
        ],
    )
    comment = forms.CharField(
        label="Viewer comment",
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "How much is the sweater?"}),
    )
    product_sku = forms.CharField(
        label="Product on screen (SKU)",
        max_length=64,
        required=False,
        validators=[SKU_VALIDATOR],
        help_text="Optional. An unknown SKU is passed on as-is, like the live API does.",
    )

    def __init__(
        self,
        *args: Any,
        versions: list[tuple[int, str]],
        endpoints: list[ModelEndpoint],
        max_comment_chars: int,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["version"].choices = [(n, f"v{n} ({status})") for n, status in versions]  # type: ignore[attr-defined]
        # A plain choice over the endpoints loaded once (a ModelChoiceField would query again
        # to render and again to validate).
        self.endpoints = {endpoint.pk: endpoint for endpoint in endpoints}
        self.fields["endpoint"].choices = [  # type: ignore[attr-defined]
            (endpoint.pk, f"{endpoint.name} · {endpoint.role}") for endpoint in endpoints
        ]
        self.max_comment_chars = max_comment_chars
        comment = self.fields["comment"]
        comment.help_text = f"At most {max_comment_chars} characters (this room's limit)."
        comment.widget.attrs["maxlength"] = str(max_comment_chars)

    def clean_endpoint(self) -> ModelEndpoint:
        return self.endpoints[self.cleaned_data["endpoint"]]

    def clean_comment(self) -> str:
        text = str(self.cleaned_data["comment"])
        if len(text) > self.max_comment_chars:
            raise forms.ValidationError(
                f"the comment is {len(text)} characters; this room allows at most "
                f"{self.max_comment_chars}"
            )
        return text


class ReplyFilterForm(forms.Form):
    fallback = forms.ChoiceField(
        required=False,
        choices=[("", "Any"), ("yes", "Fallback only"), ("no", "No fallback")],
    )
    source = forms.ChoiceField(
        required=False, choices=[("", "Any source"), *LiveReply.Source.choices]
    )

    def filters(self) -> dict[str, Any]:
        """Keyword arguments for ``replies_of_room``; invalid values filter nothing."""
        if not self.is_valid():
            return {}
        fallback = {"yes": True, "no": False}.get(self.cleaned_data["fallback"])
        return {"fallback": fallback, "source": self.cleaned_data["source"] or None}


def try_it_form(harness: Any, data: Any = None, *, user: Any) -> TryItForm:
    """The try-it form of a harness page: every version of the harness (default: the
    published one, else the newest), the active endpoints ``user`` may use for the room
    (a merchant: only the room's own, ``endpoints_usable``; default: the room's), the
    room's serving agent."""
    room = harness.room
    endpoints = list(endpoints_usable(room=room, user=user))
    versions = list(harness_selectors.harness_versions(harness).values_list("number", "status"))
    if harness.published_version_id is not None and harness.published_version is not None:
        version_default = harness.published_version.number
    else:
        version_default = versions[0][0] if versions else None
    try:
        endpoint_default = default_endpoint(room).pk
    except NoServingConfig:
        endpoint_default = None
    return TryItForm(
        data,
        versions=versions,
        endpoints=endpoints,
        max_comment_chars=room.max_comment_chars,
        initial={"version": version_default, "endpoint": endpoint_default, "arm": room.serving_arm},
    )
