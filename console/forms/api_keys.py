"""Create a live-room API key."""

from __future__ import annotations

from django import forms

from harness_app.models import RoomApiKey


class ApiKeyCreateForm(forms.Form):
    name = forms.CharField(max_length=80, help_text="Who uses it, e.g. 'live backend (prod)'.")
    scopes = forms.MultipleChoiceField(
        choices=RoomApiKey.Scope.choices,
        widget=forms.CheckboxSelectMultiple,
        initial=[RoomApiKey.Scope.REPLY, RoomApiKey.Scope.EVENTS],
        error_messages={"required": "choose at least one scope"},
    )
