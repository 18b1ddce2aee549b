"""Start a latency replay from a room's latency page (operators and the room's merchant).

The form checks shapes (a list of whole numbers, a file); ``services.latency_replay`` checks
the rest (levels in range and distinct, the endpoint usable by this room, the JSONL lines)
and its ``ValidationError`` dict lands on the same field names here.
"""

from __future__ import annotations

from typing import Any

from django import forms

from experiments_app.services.latency_replay import MAX_CONCURRENCY, MAX_LEVELS, MAX_REQUESTS
from training_app.models import ModelEndpoint


class LatencyReplayForm(forms.Form):
    endpoint = forms.ModelChoiceField(
        queryset=ModelEndpoint.objects.none(),
        empty_label=None,
        help_text="The model server every request is answered by.",
    )
    concurrency = forms.CharField(
        label="Concurrency levels",
        max_length=100,
        initial="1,4,8",
        help_text=f"Comma-separated, up to {MAX_LEVELS} levels, each 1 to {MAX_CONCURRENCY}: "
        "each level replays the whole set with that many requests in flight.",
    )
    request_set = forms.ChoiceField(
        label="Requests",
        choices=[
            ("demo", "The shipped demo set (100 requests, experiments_app/demo_data)"),
            ("upload", "Upload a JSONL file"),
        ],
        initial="demo",
        widget=forms.RadioSelect,
    )
    upload = forms.FileField(
        label="JSONL file",
        required=False,
        help_text='One request a line: {"comment": "...", "product_sku": "...", '
        '"uv_id": "...", "recent_comments": ["..."]}; only comment is required.',
    )
    limit = forms.IntegerField(
        label="Replay the first N only",
        required=False,
        min_value=1,
        max_value=MAX_REQUESTS,
    )
    arm = forms.ChoiceField(
        label="Agent",
        required=False,
        choices=[
            ("", "The room's serving agent"),
            ("harness", "Harness agent"),
            ("react", "ReAct baseline"),
        ],
    )

    def __init__(
        self, *args: Any, endpoints: Any, initial_endpoint: int | None = None, **kw: Any
    ) -> None:
        super().__init__(*args, **kw)
        field = self.fields["endpoint"]
        field.queryset = endpoints  # type: ignore[attr-defined]
        field.initial = initial_endpoint

    def clean_concurrency(self) -> list[int]:
        text = str(self.cleaned_data["concurrency"])
        parts = [part.strip() for part in text.split(",") if part.strip()]
        try:
            levels = [int(part) for part in parts]
        except ValueError:
            raise forms.ValidationError(
                f"Give comma-separated whole numbers like 1,4,8; got {text!r}."
            ) from None
        if not levels:
            raise forms.ValidationError("Give at least one level, e.g. 1,4,8.")
        return levels

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("request_set") == "upload" and not data.get("upload"):
            self.add_error("upload", "Attach the JSONL file to replay.")
        return data
