"""Read a rendered HTML form the way a browser would submit it, for test-client posts.

Posting what the page actually renders (not hand-built dicts) is what catches round-trip
bugs: a textarea that gains CRLFs, a checkbox that loses its state, a missing hidden field.
"""

from __future__ import annotations

from html.parser import HTMLParser


class _FormReader(HTMLParser):
    def __init__(self, form_id: str | None) -> None:
        super().__init__(convert_charrefs=True)
        self.form_id = form_id
        self.in_form = False
        self.in_template = 0
        self.fields: list[tuple[str, str]] = []
        self._textarea: str | None = None
        self._text: list[str] = []
        self._select: str | None = None
        self._select_multiple = False
        self._options: list[tuple[str, bool]] = []
        self._option_value: str | None = None
        self._option_selected = False
        self._option_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: (v if v is not None else "") for k, v in attrs}
        if tag == "form" and (self.form_id is None or a.get("id") == self.form_id):
            self.in_form = True
            return
        if not self.in_form:
            return
        if tag == "template":
            self.in_template += 1
        if self.in_template:
            return
        name = a.get("name")
        if tag == "input" and name and "disabled" not in a:
            kind = a.get("type", "text").lower()
            if kind in ("checkbox", "radio"):
                if "checked" in a:
                    self.fields.append((name, a.get("value", "on")))
            elif kind not in ("submit", "button", "file", "reset", "image"):
                self.fields.append((name, a.get("value", "")))
        elif tag == "textarea" and name:
            self._textarea, self._text = name, []
        elif tag == "select" and name:
            self._select, self._select_multiple, self._options = name, "multiple" in a, []
        elif tag == "option" and self._select is not None:
            self._option_value = a.get("value")
            self._option_selected = "selected" in a
            self._option_text = []

    def handle_endtag(self, tag: str) -> None:
        if not self.in_form:
            return
        if tag == "template":
            self.in_template -= 1
        elif tag == "form" and not self.in_template:
            self.in_form = False
        elif tag == "textarea" and self._textarea is not None:
            text = "".join(self._text)
            # The HTML parser drops one newline right after <textarea>, like a browser.
            if text.startswith("\n"):
                text = text[1:]
            self.fields.append((self._textarea, text.replace("\r\n", "\n").replace("\n", "\r\n")))
            self._textarea = None
        elif tag == "option" and self._select is not None:
            value = self._option_value
            if value is None:
                value = "".join(self._option_text).strip()
            self._options.append((value, self._option_selected))
        elif tag == "select" and self._select is not None:
            chosen = [v for v, selected in self._options if selected]
            if not chosen and not self._select_multiple and self._options:
                chosen = [self._options[0][0]]
            self.fields.extend((self._select, v) for v in chosen)
            self._select = None

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self._text.append(data)
        elif self._select is not None and self._option_value is None:
            self._option_text.append(data)


def form_fields(html: str, form_id: str | None = None) -> list[tuple[str, str]]:
    """The (name, value) pairs a browser submits for the form (textareas with CRLF)."""
    reader = _FormReader(form_id)
    reader.feed(html)
    return reader.fields


def as_post_data(fields: list[tuple[str, str]]) -> dict[str, str | list[str]]:
    """Pairs -> a dict for ``Client.post`` (repeated names become lists)."""
    data: dict[str, str | list[str]] = {}
    for name, value in fields:
        if name in data:
            existing = data[name]
            data[name] = [*existing, value] if isinstance(existing, list) else [existing, value]
        else:
            data[name] = value
    return data


def set_field(fields: list[tuple[str, str]], name: str, value: str) -> list[tuple[str, str]]:
    """Replace the value of the (single-valued) field ``name``; it must exist."""
    if not any(n == name for n, _v in fields):
        raise KeyError(f"the form has no field {name!r}")
    return [(n, value if n == name else v) for n, v in fields]
