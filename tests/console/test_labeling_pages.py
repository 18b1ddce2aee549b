"""The labeler's pages: my tasks with progress, the labeling page shell (instructions, reply A
left and B right, the four choices with their keys, undo, skip, a live progress line), no
inline script, and query counts that do not grow with the number of tests or pairs."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from experiments_app.models import BlindTest
from experiments_app.services import blind_labeling as labeling
from tests.experiments_app.blind_labeling_data import build_blind_test

pytestmark = pytest.mark.django_db


def test_my_tasks_list_progress_and_links(
    operator: Any, labeler: Any, labeler_client: Client, django_assert_max_num_queries: Any
) -> None:
    tests = [
        build_blind_test(
            operator=operator, labelers=[labeler], pairs=4, k=1, instructions=f"Task {i} rules"
        )
        for i in range(3)
    ]
    closed = build_blind_test(operator=operator, labelers=[labeler], pairs=2, k=1)
    BlindTest.objects.filter(pk=closed.pk).update(status=BlindTest.Status.CLOSED)
    shown = labeling.labeling_state(test=tests[0], labeler_id=labeler.pk).current
    assert shown is not None
    labeling.label_submit(
        test=tests[0], labeler_id=labeler.pk, pair_token=shown.pair.token, choice="a"
    )
    with django_assert_max_num_queries(6):
        response = labeler_client.get(reverse("console:labeling"))
    html = response.content.decode()
    assert response.status_code == 200
    for test in tests:
        assert reverse("console:labeling-test", args=[test.token]) in html
        assert test.name not in html
    assert reverse("console:labeling-test", args=[closed.token]) not in html
    assert "Task 0 rules" in html
    rows = re.findall(r'<td class="num">(\d+)</td>\s*<td class="num">(\d+)</td>', html)
    # newest first: task 2, task 1, task 0 (1 labeled by me, 3 pairs still need a label)
    assert rows == [("0", "4"), ("0", "4"), ("1", "3")]
    # more tests do not cost more queries
    for _ in range(5):
        build_blind_test(operator=operator, labelers=[labeler], pairs=1, k=1)
    with django_assert_max_num_queries(6):
        assert labeler_client.get(reverse("console:labeling")).status_code == 200


def test_an_empty_list_says_so(labeler_client: Client) -> None:
    html = labeler_client.get(reverse("console:labeling")).content.decode()
    assert "There is nothing to label yet" in html
    assert "Coming soon" not in html


def test_the_labeling_page_shell(
    operator: Any, labeler: Any, labeler_client: Client, django_assert_max_num_queries: Any
) -> None:
    test = build_blind_test(
        operator=operator, labelers=[labeler], pairs=300, k=3, instructions="Judge accuracy first."
    )
    with django_assert_max_num_queries(6):
        response = labeler_client.get(reverse("console:labeling-test", args=[test.token]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Judge accuracy first." in html
    assert test.name not in html
    for label, keys in (
        ("A is better", "1 A"),
        ("Tie", "2 T"),
        ("B is better", "3 B"),
        ("Both bad", "4 X"),
    ):
        assert re.search(rf'aria-keyshortcuts="{keys}">{label}', html), label
    assert 'aria-keyshortcuts="Z">Undo' in html and 'aria-keyshortcuts="S">Skip' in html
    assert 'id="labeling-progress"' in html and 'aria-live="polite"' in html
    assert html.index("Reply A") < html.index("Reply B")
    assert 'for="labeling-reason"' in html and 'maxlength="1000"' in html
    for name in ("next", "labels", "undo", "skip"):
        assert reverse(f"api:labeling-{name}", args=[test.token]) in html
    # JS only from static files (strict CSP): no inline script, no inline handlers
    scripts = re.findall(r"<script([^>]*)>", html)
    assert scripts and all("src=" in attrs for attrs in scripts)
    assert "console/labeling.js" in html
    assert not re.search(r"\son[a-z]+=", html)
    # showing the page reserves nothing: the pair is fetched by the script
    assert not test.pairs.filter(pair_assignments__isnull=False).exists()


def test_who_may_open_the_labeling_page(
    operator: Any,
    labeler: Any,
    merchant_client: Client,
    operator_client: Client,
    labeler_client: Client,
) -> None:
    from console.roles import Role
    from tests.factories import UserFactory

    test = build_blind_test(operator=operator, labelers=[labeler], pairs=2, k=1)
    page = reverse("console:labeling-test", args=[test.token])
    assert merchant_client.get(page).status_code == 404
    assert merchant_client.get(reverse("console:labeling")).status_code == 404
    stranger = Client()
    stranger.force_login(UserFactory(username="unassigned", role=Role.LABELER))
    assert stranger.get(page).status_code == 404
    assert labeler_client.get(reverse("console:labeling-test", args=["nope"])).status_code == 404
    # an operator previews: the page says so, and shows the operator-only name
    html = operator_client.get(page).content.decode()
    assert "data-preview-note" in html and 'data-preview="1"' in html
    assert test.name in html
    assert Client().get(page).status_code == 302  # to the login page
