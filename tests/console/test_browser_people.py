"""Done-when for People (issue #15 part 1), in headless chromium: an operator, from the
console alone, invites a second merchant, the merchant opens the one-time link and chooses a
password, the operator gives them a room, and each merchant sees only their own room (and no
People pages). No Content-Security-Policy violation on the way."""

# ruff: noqa: F811  (fixtures imported from other test modules)
from __future__ import annotations

import os
from typing import Any

from tests.console.test_browser_flow import (  # noqa: F401
    PASSWORD,
    browser_page,
    log_in,
    pytestmark,
    record_csp_violations,
)

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
NEW_PASSWORD = "b-merchant-password-42"


def room_names(page: Any) -> list[str]:
    return [t.strip() for t in page.locator("table.data tbody td:first-child b").all_inner_texts()]


def test_invite_a_second_merchant_give_a_room_and_tenancy_holds(
    live_server: Any, transactional_db: Any, browser_page: Any
) -> None:
    from console.roles import Role
    from harness_app import services
    from tests.factories import UserFactory

    UserFactory(username="op-people", role=Role.OPERATOR)
    shop_a = UserFactory(username="shop-a", role=Role.MERCHANT)
    services.room_create(owner=shop_a, name="Autumn Live")
    services.room_create(owner=shop_a, name="Winter Live")
    page = browser_page
    violations = record_csp_violations(page)
    base = live_server.url

    # the operator invites shop-b as a merchant from the People page
    log_in(page, base, "op-people")
    page.click("nav >> text=People")
    page.wait_for_url(f"{base}/people/")
    page.fill("#id_username", "shop-b")
    page.fill("#id_email", "shop-b@example.test")
    page.select_option("#id_role", "Merchant")
    page.click("button:has-text('Create invite link')")
    link = page.inner_text("[data-invite-link]").strip()
    assert link.startswith(f"{base}/invite/")
    assert page.locator("tr[data-person='shop-b']").inner_text().count("invited") == 1

    # the new merchant is in the room-create owner list; the operator gives them a room
    page.goto(f"{base}/rooms/new/")
    owners = page.locator("#id_owner option").all_inner_texts()
    assert "shop-a" in owners and "shop-b" in owners
    page.goto(f"{base}/people/")
    winter = page.locator("#id_room option", has_text="Winter Live").get_attribute("value")
    page.select_option("#id_room", value=winter)
    page.select_option("#id_owner", label="shop-b")
    page.click("button:has-text('Give the room')")
    page.wait_for_selector("text=Winter Live now belongs to shop-b.")
    audit = page.inner_text("[data-audit]")
    assert "Room owner changed" in audit and "Invited" in audit
    page.context.clear_cookies()

    # shop-b opens the link, chooses a password, logs in: only their room
    page.goto(link)
    assert "Welcome, shop-b" in page.inner_text("h1")
    page.fill("#id_new_password1", NEW_PASSWORD)
    page.fill("#id_new_password2", NEW_PASSWORD)
    page.click("button:has-text('Set password')")
    page.wait_for_url(f"{base}/login/")
    log_in(page, base, "shop-b", NEW_PASSWORD)
    assert room_names(page) == ["Winter Live"]
    assert page.locator("nav >> text=People").count() == 0
    assert page.goto(f"{base}/people/").status == 404  # type: ignore[union-attr]
    # the link worked once
    assert page.goto(link).status == 410  # type: ignore[union-attr]
    page.context.clear_cookies()

    # shop-a sees only the room they kept
    log_in(page, base, "shop-a")
    assert room_names(page) == ["Autumn Live"]
    page.context.clear_cookies()

    # the operator sees the acceptance in the audit log
    log_in(page, base, "op-people")
    page.goto(f"{base}/people/")
    assert "Invite accepted" in page.inner_text("[data-audit]")
    assert violations == []
