"""End to end in a real browser: log in, edit a skill, save, publish, see the diff.

Drives Debian's chromium through Playwright against pytest-django's live server.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Playwright's sync API runs an event loop in this thread; Django's ORM refuses to run from
# a thread with a running loop unless told this is fine (the test thread is not async code).
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
DEMO_YAML = (
    Path(__file__).resolve().parents[2] / "harness_app" / "demo_data" / "live_stream_harness.yaml"
)
PASSWORD = "pw-for-tests-1"
NEW_DESCRIPTION = "Use when a viewer asks what a product costs or is made of."

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not (os.path.exists(CHROMIUM) and shutil.which(CHROMIUM)),
        reason=f"{CHROMIUM} is not installed (apt-get install chromium)",
    ),
]


@pytest.fixture
def browser_page() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(15_000)
        try:
            yield page
        finally:
            browser.close()


def log_in(page: Any, base_url: str, username: str, password: str = PASSWORD) -> None:
    """Log in through the login form and wait for the landing page."""
    page.goto(f"{base_url}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base_url}/rooms/")


def record_csp_violations(page: Any) -> list[str]:
    """The Content-Security-Policy violations the page reports, as they happen (console
    messages, and the page's own securitypolicyviolation events, which cover violations
    that log nothing)."""
    violations: list[str] = []
    page.on(
        "console",
        lambda msg: violations.append(msg.text) if "Content Security Policy" in msg.text else None,
    )
    page.add_init_script(
        "document.addEventListener('securitypolicyviolation', e => console.error("
        "'Content Security Policy violation: ' + e.violatedDirective + ' ' + e.blockedURI));"
    )
    return violations


@pytest.fixture
def seeded(transactional_db: Any) -> Any:
    """An operator, a merchant's room and the demo harness published as v1."""
    from console.roles import Role
    from harness_app import services
    from harness_app.harness.serialization import harness_from_yaml
    from tests.factories import UserFactory

    operator = UserFactory(username="op-browser", role=Role.OPERATOR)
    merchant = UserFactory(username="shop-owner", role=Role.MERCHANT)
    room = services.room_create(owner=merchant, name="Autumn Wardrobe Live")
    version = services.harness_version_create(
        harness=room.harness,
        content=harness_from_yaml(DEMO_YAML.read_text("utf-8")),
        base_version=None,
        author=operator,
        message="Initial live-stream host harness",
    )
    services.harness_version_publish(version=version)
    return room.harness


def test_edit_save_publish_and_diff(live_server: Any, seeded: Any, browser_page: Any) -> None:
    page = browser_page
    harness = seeded

    log_in(page, live_server.url, "op-browser")

    # open the seeded harness from the nav, then the editor
    page.click("nav >> text=Harnesses")
    page.click(f"text={harness.name}")
    page.wait_for_url(f"{live_server.url}/harnesses/{harness.pk}/")
    page.click("text=Edit from latest (v1)")
    page.wait_for_selector("#id_skills-0-description")

    # "+ Add skill" adds a blank entry in place (JavaScript); left blank, it is not saved
    skills_before = page.locator("#skills-entries .entry").count()
    page.click("[data-add-entry=skills]")
    assert page.locator("#skills-entries .entry").count() == skills_before + 1
    assert page.input_value("#id_skills-TOTAL_FORMS") == str(skills_before + 1)

    # edit the first skill's description and save
    page.fill("#id_skills-0-description", NEW_DESCRIPTION)
    page.fill("#id_message", "Tighter product-qa description")
    page.click("button:has-text('Save as new draft')")
    page.wait_for_url(f"{live_server.url}/harnesses/{harness.pk}/versions/2/")
    assert "Saved as draft version 2" in page.content()

    # publish with the confirmation step
    page.click("text=Publish v2…")
    page.wait_for_url("**/versions/2/publish/")
    page.click("button:has-text('Publish v2')")
    page.wait_for_url(f"{live_server.url}/harnesses/{harness.pk}/")
    assert "Published version 2" in page.content()
    assert page.locator("tr.is-published").inner_text().startswith("v2")

    # compare v1 -> v2 with the diff picker
    page.fill("#diff-from", "1")
    page.fill("#diff-to", "2")
    page.click("button:has-text('Show changes')")
    page.wait_for_url("**/diff/?from=1&to=2")
    skills = page.locator("#diff-skills").inner_text()
    assert "skill product-qa: description changed" in skills
    assert "hash changed" in skills
    assert "hash equal" in page.locator("#diff-tools").inner_text()

    harness.refresh_from_db()
    assert harness.published_version.number == 2
    assert harness.versions.count() == 2  # the blank added skill created nothing extra
    skill_names = [s["name"] for s in harness.published_version.content["skills"]]
    assert len(skill_names) == skills_before
