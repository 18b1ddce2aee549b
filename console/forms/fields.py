"""Form fields shared by the console's forms."""

from __future__ import annotations

import json
from typing import Any

from django import forms

from harness_app.harness.json_limits import JsonLimitError, json_loads_bounded


def normalize_newlines(text: str) -> str:
    """Browsers submit textarea content with CRLF line ends; harness text is stored with LF,
    so an untouched field must come back byte-identical (no spurious diffs or new hashes)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


class TextBlockField(forms.CharField):
    """Free text (bodies, templates, feedback): kept exactly as typed, LF line ends."""

    def __init__(self, *, rows: int = 4, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("strip", False)
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": rows}))
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> str:
        return normalize_newlines(super().to_python(value) or "")


class JsonObjectField(forms.CharField):
    """A JSON object typed into a textarea; errors name the line and column. Nesting past the
    API's limit and U+0000 (which PostgreSQL cannot store) are field errors too."""

    default_error_messages = {
        "invalid_json": "not valid JSON: %(msg)s at line %(line)s, column %(col)s",
        "not_object": "must be a JSON object ({...}), got %(kind)s",
        "json_limit": "%(where)s%(msg)s",
    }

    def __init__(self, *, rows: int = 6, **kwargs: Any) -> None:
        kwargs.setdefault("strip", False)
        kwargs.setdefault(
            "widget", forms.Textarea(attrs={"rows": rows, "class": "mono", "spellcheck": "false"})
        )
        super().__init__(**kwargs)

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, dict):
            return json.dumps(value, indent=2, ensure_ascii=False)
        return value

    def to_python(self, value: Any) -> dict[str, Any] | None:  # type: ignore[override]
        text = super().to_python(value) or ""
        if not text.strip():
            return None
        try:
            parsed = json_loads_bounded(text)
        except JsonLimitError as exc:
            raise forms.ValidationError(
                self.error_messages["json_limit"],
                code="json_limit",
                params={"where": f"at {exc.path}: " if exc.path else "", "msg": exc.message},
            ) from None
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(
                self.error_messages["invalid_json"],
                code="invalid_json",
                params={"msg": exc.msg, "line": exc.lineno, "col": exc.colno},
            ) from None
        if not isinstance(parsed, dict):
            kind = "an array" if isinstance(parsed, list) else type(parsed).__name__
            raise forms.ValidationError(
                self.error_messages["not_object"], code="not_object", params={"kind": kind}
            )
        return parsed

    def has_changed(self, initial: Any, data: Any) -> bool:
        try:
            return self.to_python(data) != (
                initial if isinstance(initial, dict) else self.to_python(initial)
            )
        except forms.ValidationError:
            return True
