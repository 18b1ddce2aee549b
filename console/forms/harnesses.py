"""Harness page forms: zip import and the diff picker."""

from __future__ import annotations

from typing import Any

from django import forms


class HarnessImportForm(forms.Form):
    file = forms.FileField(
        help_text="A harness zip as exported here: skills/<name>/SKILL.md, tools.json, "
        "prompt.yaml, hooks.yaml."
    )
    message = forms.CharField(max_length=500, required=False, label="Change note")
    base_version = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)


class DiffPickerForm(forms.Form):
    # "from"/"to" are Python keywords, hence the prefixes and the explicit names in clean.
    from_version = forms.IntegerField(min_value=1, label="From version")
    to_version = forms.IntegerField(min_value=1, label="To version")

    def __init__(self, params: Any = None, **kwargs: Any) -> None:
        data = None
        if params is not None and ("from" in params or "to" in params):
            data = {"from_version": params.get("from", ""), "to_version": params.get("to", "")}
        super().__init__(data, **kwargs)
