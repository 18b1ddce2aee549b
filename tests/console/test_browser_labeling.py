"""Done-when for blind labeling, in headless chromium under the Content-Security-Policy: a
labeler logs in, labels five pairs with the keyboard only (1, 3, 2, 4, A), undoes the last
label (Z) and labels that pair again (T); then an operator logs in and sees the aggregated
result on the blind test's page. No CSP violation, and no response the labeler's browser
received names an arm, version, endpoint, model or the test, or the side order.

Drives Debian's chromium through Playwright like tests/console/test_browser_flow.py (skipped
where chromium is not installed)."""

# ruff: noqa: F811  (fixtures imported from other test modules)
from __future__ import annotations

import os
from typing import Any

from experiments_app.models import BlindLabel, BlindPair
from tests.console.test_browser_flow import (  # noqa: F401
    PASSWORD,
    browser_page,
    pytestmark,
    record_csp_violations,
)
from tests.console.test_labeling_leaks import ORDER_TERMS
from tests.experiments_app.blind_labeling_data import build_blind_test, identity_strings

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
SCREENSHOTS = os.environ.get("HAT_SCREENSHOT_DIR", "")


def log_in(page: Any, base_url: str, username: str, lands_on: str) -> None:
    page.goto(f"{base_url}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base_url}{lands_on}")


def wait_for_done(page: Any, done: int) -> None:
    page.wait_for_function(
        "n => document.getElementById('labeling-progress').textContent.startsWith(n + ' labeled')",
        arg=done,
    )


def shown_token(page: Any) -> str:
    return str(page.get_attribute("#labeling-pair", "data-pair"))


def test_label_five_pairs_by_keyboard_then_the_operator_sees_the_result(  # type: ignore[no-untyped-def]
    live_server: Any, transactional_db: Any, browser_page: Any
) -> None:
    from console.roles import Role
    from tests.factories import UserFactory

    operator = UserFactory(username="op-blind", role=Role.OPERATOR)
    labeler = UserFactory(username="labeler-blind", role=Role.LABELER)
    test = build_blind_test(operator=operator, labelers=[labeler], pairs=8, k=1)
    page = browser_page
    violations = record_csp_violations(page)
    responses: list[Any] = []
    page.on("response", lambda response: responses.append(response))

    # the labeler logs in, lands on their tasks, opens the test
    log_in(page, live_server.url, "labeler-blind", "/labeling/")
    page.click(f"a[href='/labeling/{test.token}/']")
    page.wait_for_selector("#labeling-pair:not([hidden])")
    wait_for_done(page, 0)
    assert "available to you" in page.inner_text("#labeling-progress")

    # five labels, keyboard only
    tokens = []
    for done, key in enumerate(["1", "3", "2", "4", "a"], start=1):
        page.wait_for_function("() => document.querySelector('[data-reply-a]').textContent")
        tokens.append(shown_token(page))
        page.keyboard.press(key)
        wait_for_done(page, done)
    assert len(set(tokens)) == 5
    # undo the last one: its pair comes back; label it again as a tie
    page.keyboard.press("z")
    wait_for_done(page, 4)
    page.wait_for_function(
        "t => document.getElementById('labeling-pair').dataset.pair === t", arg=tokens[-1]
    )
    page.keyboard.press("t")
    wait_for_done(page, 5)
    if SCREENSHOTS:
        page.screenshot(path=f"{SCREENSHOTS}/labeling.png", full_page=True)

    labels = {
        label.pair.token: label
        for label in BlindLabel.objects.filter(test=test, labeler=labeler).select_related("pair")
    }
    assert set(labels) == set(tokens)
    assert labels[tokens[-1]].choice == "tie"
    expected_screen = ["a", "b", "tie", "both_bad"]
    for token, screen in zip(tokens[:4], expected_screen, strict=True):
        label = labels[token]
        left = label.left_side
        right = "two" if left == "one" else "one"
        assert label.choice == {"a": left, "b": right}.get(screen, screen)
    assert [p.label_count for p in BlindPair.objects.filter(token__in=tokens)] == [1] * 5

    # nothing the labeler's browser received names a side
    secrets = [s.lower() for s in identity_strings()]
    checked = 0
    for response in responses:
        try:
            text = response.text()
        except Exception:  # redirects and aborted requests have no body
            continue
        checked += 1
        lowered = text.lower()
        for secret in secrets:
            assert secret not in lowered, (response.url, secret)
        assert ORDER_TERMS.search(text) is None, response.url
    assert checked >= 10
    assert violations == []

    # the operator logs in and sees the aggregate on the blind test's page
    page.click("text=Log out")
    log_in(page, live_server.url, "op-blind", "/rooms/")
    page.goto(f"{live_server.url}/blind-tests/{test.pk}/")
    wins = sum(label.choice == "one" for label in labels.values())
    losses = sum(label.choice == "two" for label in labels.values())
    ties = 5 - wins - losses
    row = page.locator("[data-results-table] tr", has_text="wins / ties /")
    assert row.locator("td.num").inner_text().strip() == f"{wins} / {ties} / {losses}"
    assert page.locator("[data-labeler-table]").inner_text().count("labeler-blind") == 1
    assert violations == []
