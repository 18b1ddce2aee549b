"""Arm identity never reaches a labeler. A blind test whose sides have distinctive arm names,
harness version numbers, endpoint names and model names; as a labeler, fetch every response a
labeler can reach (the home redirect, the pages, the static files they load, every labeling API
answer including the errors) and search each for those strings, for the test's operator-only
name, and for the left/right order ("one"/"two" side terms, ``left_side``). Operator pages are
a 404 for the labeler."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.staticfiles import finders
from django.test import Client
from django.urls import reverse

from experiments_app.models import BlindPair, BlindTest
from tests.experiments_app.blind_labeling_data import build_blind_test, identity_strings

pytestmark = pytest.mark.django_db

ORDER_TERMS = re.compile(
    r"\b(one|two)\b|left_side|side_one|side_two|reply_one|reply_two|gold|is_gold", re.IGNORECASE
)


def assert_no_identity(where: str, text: str, test: BlindTest) -> None:
    for secret in identity_strings():
        assert secret.lower() not in text.lower(), f"{where} shows {secret!r}"
    assert test.order_salt not in text, f"{where} shows the order salt"
    match = ORDER_TERMS.search(text)
    assert match is None, (
        f"{where} shows {match.group(0)!r}: …{text[max(0, match.start() - 60) : match.end() + 60]}…"
    )  # type: ignore[union-attr]
    # pairs and tests are addressed by token, never by database id
    for pair in BlindPair.objects.filter(test=test):
        assert f"/{pair.pk}/" not in text


def static_text(path: str) -> str:
    found = finders.find(path)
    assert found, path
    with open(found, encoding="utf-8") as handle:  # type: ignore[arg-type]
        return handle.read()


def test_no_labeler_response_carries_arm_identity_or_order(
    operator: Any, labeler: Any, labeler_client: Client
) -> None:
    test = build_blind_test(operator=operator, labelers=[labeler], pairs=6, k=2, gold_every=3)
    client = labeler_client
    seen: list[tuple[str, int, str]] = []

    def fetch(method: str, url: str, payload: dict[str, Any] | None = None) -> Any:
        if method == "GET":
            response = client.get(url)
        else:
            response = client.post(url, payload or {}, content_type="application/json")
        body = b"".join(response.streaming_content) if response.streaming else response.content
        text = body.decode()
        text += " ".join(f"{k}: {v}" for k, v in response.headers.items())
        seen.append((f"{method} {url}", response.status_code, text))
        return response

    # pages, following the home redirect
    home = fetch("GET", "/")
    assert home.status_code == 302 and home["Location"] == reverse("console:labeling")
    fetch("GET", reverse("console:labeling"))
    page = fetch("GET", reverse("console:labeling-test", args=[test.token]))
    assert page.status_code == 200
    # the static files those pages load
    html = page.content.decode()
    for asset in re.findall(r'(?:src|href)="/static/([^"?]+)', html):
        seen.append((f"static {asset}", 200, static_text(asset)))
    assert any("labeling.js" in where for where, _, _ in seen)
    # every labeling API answer
    api = {
        n: reverse(f"api:labeling-{n}", args=[test.token])
        for n in ("next", "labels", "undo", "skip")
    }
    fetch("GET", reverse("api:labeling-test-list"))
    state = fetch("GET", api["next"]).json()
    token = state["pair"]["token"]
    assert (
        fetch("POST", api["labels"], {"pair": token, "choice": "a", "reason": "ok"}).status_code
        == 201
    )
    assert fetch("POST", api["labels"], {"pair": token, "choice": "b"}).status_code == 200
    assert fetch("POST", api["labels"], {"pair": token, "choice": "left"}).status_code in (200, 400)
    assert fetch("POST", api["labels"], {"pair": "bogus", "choice": "a"}).status_code == 400
    assert fetch("POST", api["labels"], {"choice": "tie"}).status_code == 400
    assert fetch("POST", api["undo"]).status_code == 200
    assert fetch("POST", api["undo"]).status_code == 400
    current = fetch("GET", api["next"]).json()["pair"]["token"]
    assert fetch("POST", api["skip"], {"pair": current}).status_code == 200
    assert fetch("POST", api["skip"], {"pair": current}).status_code in (200, 400)
    # label everything open (every gold pair too), then the empty state and its undo
    for _ in range(10):
        now = fetch("GET", api["next"]).json()["pair"]
        if now is None:
            break
        fetch("POST", api["labels"], {"pair": now["token"], "choice": "tie"})
    assert fetch("GET", api["next"]).json()["pair"] is None
    fetch("POST", api["undo"])
    # errors: unknown tokens, a page that does not exist
    fetch("GET", reverse("api:labeling-next", args=["unknown-token"]))
    fetch("GET", reverse("console:labeling-test", args=["unknown-token"]))

    assert len(seen) > 20
    for where, _status, text in seen:
        assert_no_identity(where, text, test)


def test_the_pair_order_is_not_in_the_markup(
    operator: Any, labeler: Any, labeler_client: Client
) -> None:
    """Reply A and reply B are the same elements whichever side is on the left: ids, classes
    and attributes do not change with the order, only the text does."""
    test = build_blind_test(operator=operator, labelers=[labeler], pairs=2, k=1)
    html = labeler_client.get(reverse("console:labeling-test", args=[test.token])).content.decode()
    assert 'id="reply-a-title"' in html and 'id="reply-b-title"' in html
    assert "data-reply-a" in html and "data-reply-b" in html
    # the replies themselves are fetched; the page carries none of them
    for pair in BlindPair.objects.filter(test=test):
        assert pair.reply_one not in html and pair.reply_two not in html


def test_operator_pages_are_a_404_for_a_labeler(
    operator: Any, labeler: Any, labeler_client: Client
) -> None:
    test = build_blind_test(operator=operator, labelers=[labeler], pairs=2, k=1)
    operator_pages = [
        reverse("console:blind-test-list"),
        reverse("console:blind-test-detail", args=[test.pk]),
        reverse("console:room-list"),
        reverse("console:experiment-list"),
        reverse("console:endpoint-list"),
        reverse("console:harness-list"),
    ]
    for url in operator_pages:
        response = labeler_client.get(url)
        assert response.status_code == 404, url
        assert_no_identity(url, response.content.decode(), test)
    for url in (reverse("api:experiment-list"), f"/api/v1/experiments/{test.experiment_id}/"):
        response = labeler_client.get(url)
        assert response.status_code in (403, 404), url
        assert_no_identity(url, response.content.decode(), test)


@pytest.mark.parametrize(
    "leak",
    [
        "quokka-harness-arm",
        "okapi-endpoint-west",
        "capybara-13b-chat",
        "v5923",
        '"left_side"',
        '{"side": "two"}',
        "Side one",
    ],
)
def test_the_search_finds_each_kind_of_leak(operator: Any, leak: str) -> None:
    test = build_blind_test(operator=operator, pairs=1, k=1)
    with pytest.raises(AssertionError):
        assert_no_identity("sample", f"<p>a reply {leak} here</p>", test)
