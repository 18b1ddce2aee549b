"""The Content-Security-Policy header (django-csp, CONTENT_SECURITY_POLICY in settings) on
console pages and the API docs, and no inline script anywhere that it would block."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
EXPECTED = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'", "'unsafe-inline'"],
    "img-src": ["'self'", "data:"],
    "font-src": ["'self'", "data:"],
    "connect-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}


def policy(response: Any) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    directives = [part.split() for part in header.split(";") if part.strip()]
    return {name: values for name, *values in directives}


class _Scripts(HTMLParser):
    """Collects inline scripts (those that would execute) and inline event handlers."""

    def __init__(self) -> None:
        super().__init__()
        self.inline: list[str] = []
        self.handlers: list[str] = []
        self._in_inline = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = dict(attrs)
        self.handlers += [f"<{tag} {k}=...>" for k in names if k.startswith("on")]
        if tag == "script" and "src" not in names and names.get("type") != "application/json":
            self._in_inline = True

    def handle_endtag(self, tag: str) -> None:
        self._in_inline = False if tag == "script" else self._in_inline

    def handle_data(self, data: str) -> None:
        if self._in_inline and data.strip():
            self.inline.append(data.strip()[:80])


def scripts_of(html: str) -> _Scripts:
    parser = _Scripts()
    parser.feed(html)
    return parser


def test_console_pages_carry_the_strict_policy(
    operator_client: Client, published_room: Any
) -> None:
    for url in ("/login/", "/rooms/", f"/harnesses/{published_room.harness.pk}/edit/"):
        response = operator_client.get(url)
        assert response.status_code == 200, url
        assert policy(response) == EXPECTED, url
        found = scripts_of(response.content.decode())
        assert (found.inline, found.handlers) == ([], []), url


def test_api_docs_have_the_policy_and_load_their_init_script_from_self(
    operator_client: Client,
) -> None:
    page = operator_client.get("/api/v1/docs/")
    assert page.status_code == 200
    assert policy(page) == EXPECTED
    html = page.content.decode()
    assert scripts_of(html).inline == []
    init = re.search(r'<script src="(/api/v1/docs/\?[^"]*script=[^"]*)"', html)
    assert init is not None
    script = operator_client.get(init.group(1).replace("&amp;", "&"))
    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle(" in script.content.decode()


def test_no_template_has_an_inline_script_or_event_handler() -> None:
    offenders = []
    for template in sorted(TEMPLATES.rglob("*.html")):
        found = scripts_of(template.read_text("utf-8"))
        offenders += [f"{template.relative_to(TEMPLATES)}: {s}" for s in found.inline]
        offenders += [f"{template.relative_to(TEMPLATES)}: {h}" for h in found.handlers]
    assert offenders == []
