"""The labeler's JSON API: my tests, next pair with the prefetched one, labels in screen terms,
undo, skip, errors naming the field, who gets a 404, CSRF for the page's session fetches."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from console.roles import Role
from experiments_app.models import BlindLabel, BlindPair, PairAssignment
from tests.experiments_app.blind_labeling_data import build_blind_test
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def api_for(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=user)
    return client


def url(name: str, token: str) -> str:
    return reverse(f"api:labeling-{name}", args=[token])


@pytest.fixture
def setup(operator: Any, labeler: Any) -> Any:
    test = build_blind_test(operator=operator, labelers=[labeler], pairs=5, k=2)
    return test, api_for(labeler)


def test_my_tests_list_shows_instructions_and_progress_not_the_name(setup: Any) -> None:
    test, api = setup
    body = api.get(reverse("api:labeling-test-list")).json()
    assert body["count"] == 1
    (row,) = body["results"]
    assert row == {
        "token": test.token,
        "instructions": test.instructions,
        "labeled_by_me": 0,
        "open_pairs": 5,
        "preview": False,
        "page": f"/labeling/{test.token}/",
    }


def test_next_gives_the_pair_and_the_prefetched_one(setup: Any) -> None:
    test, api = setup
    first = api.get(url("next", test.token))
    assert first.status_code == 200
    body = first.json()
    assert set(body) == {"pair", "next", "progress", "preview"}
    assert set(body["pair"]) == {"token", "comment", "product", "reply_a", "reply_b"}
    assert body["pair"]["token"] != body["next"]["token"]
    assert body["progress"] == {"done": 0, "available": 5}
    assert body["preview"] is False
    pair = BlindPair.objects.get(token=body["pair"]["token"])
    assignment = PairAssignment.objects.get(pair=pair)
    a, b = (
        (pair.reply_one, pair.reply_two)
        if assignment.left_side == "one"
        else (pair.reply_two, pair.reply_one)
    )
    assert (body["pair"]["reply_a"], body["pair"]["reply_b"]) == (a, b)
    assert body["pair"]["product"] == pair.context["product"]
    # a reload shows the same two pairs
    assert api.get(url("next", test.token)).json() == body


def test_label_moves_on_and_a_repeat_is_a_200_with_the_first_label(setup: Any) -> None:
    test, api = setup
    state = api.get(url("next", test.token)).json()
    shown, prefetched = state["pair"], state["next"]
    sent = {"pair": shown["token"], "choice": "b", "reason": "  warmer tone  ", "seconds": 4.2}
    response = api.post(url("labels", test.token), sent, format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["created"] is True
    assert body["label"]["choice"] == "b"
    assert body["label"]["reason"] == "warmer tone"
    assert body["label"]["seconds"] == 4.2
    # the prefetched pair is now the current one, and another one is prefetched
    assert body["pair"]["token"] == prefetched["token"]
    assert body["next"]["token"] not in (shown["token"], prefetched["token"])
    assert body["progress"] == {"done": 1, "available": 5}
    stored = BlindLabel.objects.get()
    right = "two" if stored.left_side == "one" else "one"
    assert stored.choice == right
    # the same label again: 200, the first label, counted once
    again = api.post(url("labels", test.token), {**sent, "choice": "a"}, format="json")
    assert again.status_code == 200
    assert again.json()["created"] is False and again.json()["label"]["choice"] == "b"
    assert BlindPair.objects.get(token=shown["token"]).label_count == 1


def test_undo_and_skip(setup: Any) -> None:
    test, api = setup
    shown = api.get(url("next", test.token)).json()["pair"]
    api.post(url("labels", test.token), {"pair": shown["token"], "choice": "tie"}, format="json")
    undone = api.post(url("undo", test.token), format="json")
    assert undone.status_code == 200
    body = undone.json()
    assert body["undone"] == {"pair": shown["token"], "choice": "tie"}
    assert body["pair"]["token"] == shown["token"]
    assert body["progress"]["done"] == 0
    # nothing left to undo: a 400 in the API's error shape
    nothing = api.post(url("undo", test.token), format="json")
    assert nothing.status_code == 400
    assert nothing.json()["detail"] == "There is no label to undo."
    skipped = api.post(url("skip", test.token), {"pair": shown["token"]}, format="json")
    assert skipped.status_code == 200
    assert skipped.json()["pair"]["token"] != shown["token"]
    assert skipped.json()["progress"]["available"] == 4


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"choice": "a"}, "pair"),
        ({"pair": "nope", "choice": "a"}, "pair"),
        ({"pair": "PAIR", "choice": "one"}, "choice"),
        ({"pair": "PAIR", "choice": "a", "reason": "x" * 1001}, "reason"),
        ({"pair": "PAIR", "choice": "a", "reason": "nul\u0000here"}, "reason"),
        ({"pair": "PAIR", "choice": "a", "seconds": -3}, "seconds"),
    ],
)
def test_refused_labels_name_the_field_and_store_nothing(
    setup: Any, payload: dict[str, Any], field: str
) -> None:
    test, api = setup
    shown = api.get(url("next", test.token)).json()["pair"]
    if payload.get("pair") == "PAIR":
        payload = {**payload, "pair": shown["token"]}
    response = api.post(url("labels", test.token), payload, format="json")
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert errors and errors[0]["field"] == field
    assert BlindLabel.objects.count() == 0


def test_who_gets_a_404(operator: Any, labeler: Any, merchant: Any) -> None:
    other = UserFactory(username="other-labeler", role=Role.LABELER)
    test = build_blind_test(operator=operator, labelers=[labeler, merchant], pairs=2, k=1)
    # a merchant (even one assigned by mistake): the whole API is a 404
    merchant_api = api_for(merchant)
    assert merchant_api.get(reverse("api:labeling-test-list")).status_code == 404
    assert merchant_api.get(url("next", test.token)).status_code == 404
    # a labeler not assigned, and an unknown token
    other_api = api_for(other)
    for name in ("next", "labels", "undo", "skip"):
        method = other_api.get if name == "next" else other_api.post
        response = method(url(name, test.token), {"pair": "x", "choice": "a"}, format="json")
        assert response.status_code == 404, name
        assert test.name not in response.content.decode()
    assert api_for(labeler).get(url("next", "not-a-token")).status_code == 404
    assert other_api.get(reverse("api:labeling-test-list")).json()["count"] == 0
    # signed out: 401/403, never the data
    assert APIClient().get(url("next", test.token)).status_code in (401, 403)
    assert PairAssignment.objects.count() == 0


def test_an_operator_previews_without_reserving_or_labeling(operator: Any, labeler: Any) -> None:
    test = build_blind_test(operator=operator, labelers=[labeler], pairs=3, k=1)
    api = api_for(operator)
    body = api.get(url("next", test.token)).json()
    assert body["preview"] is True and body["pair"] is not None
    assert body["progress"] == {"done": 0, "available": 3}
    refused = api.post(
        url("labels", test.token), {"pair": body["pair"]["token"], "choice": "a"}, format="json"
    )
    assert refused.status_code == 403
    assert api.post(url("undo", test.token), format="json").status_code == 403
    assert PairAssignment.objects.count() == 0 and BlindLabel.objects.count() == 0
    assert api.get(reverse("api:labeling-test-list")).json()["results"][0]["preview"] is True


def test_session_fetches_need_the_csrf_token(setup: Any, labeler: Any) -> None:
    test, _ = setup
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(labeler)
    page = browser.get(reverse("console:labeling-test", args=[test.token]))
    token = page.context["csrf_token"]
    shown = browser.get(url("next", test.token)).json()["pair"]
    payload = {"pair": shown["token"], "choice": "a"}
    without = browser.post(url("labels", test.token), payload, content_type="application/json")
    assert without.status_code == 403
    assert BlindLabel.objects.count() == 0
    with_token = browser.post(
        url("labels", test.token),
        payload,
        content_type="application/json",
        headers={"X-CSRFToken": str(token)},
    )
    assert with_token.status_code == 201
