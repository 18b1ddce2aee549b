"""The raw YAML editor in a real browser (issue 15.2): a save with a bad line keeps the typed
text, lists "line L, column C: ..." and marks that line beside the textarea (a red gutter
number and a band over the line, at the line's height); the error link puts the caret on the
line, by keyboard too; no CSP violation.

Drives Debian's chromium through Playwright like tests/console/test_browser_flow.py (skipped
where chromium is not installed)."""

# ruff: noqa: F811  (fixtures imported from other test modules)
from __future__ import annotations

import os
from typing import Any

from tests.console.test_browser_flow import (  # noqa: F401
    browser_page,
    log_in,
    pytestmark,
    record_csp_violations,
    seeded,
)

SCREENSHOTS = os.environ.get("HAT_SCREENSHOT_DIR", "")


def test_a_yaml_error_is_marked_at_its_line_and_the_typed_text_is_kept(
    live_server: Any, seeded: Any, browser_page: Any
) -> None:
    page = browser_page
    harness = seeded
    violations = record_csp_violations(page)
    log_in(page, live_server.url, "op-browser")
    page.goto(f"{live_server.url}/harnesses/{harness.pk}/edit/?mode=yaml")
    area = page.locator("#id_content_yaml")

    # given the operator types an unknown tool into the first skill's allowed tools
    text = area.input_value()
    typed = text.replace("      - check_stock\n", "      - check_stock\n      - no_such_tool\n", 1)
    line = typed.split("\n").index("      - no_such_tool") + 1
    area.fill(typed)
    # the gutter follows the typing: one number per line
    assert page.locator(".code-gutter li").count() == typed.count("\n")

    # when saving
    page.click("button:has-text('Save as new draft')")
    page.wait_for_selector("#yaml-errors")

    # then the error names the line and column, and the typed text is still there
    errors = page.locator("#yaml-errors").inner_text()
    assert f"line {line}, column 9: skills[0].allowed_tools[2]" in errors
    assert "no_such_tool" in errors
    assert area.input_value() == typed
    assert area.get_attribute("aria-invalid") == "true"
    assert area.get_attribute("aria-describedby") == "yaml-errors"

    # the line is marked where the user sees it: gutter number and band on that line's row
    marked = page.locator(f".code-gutter li[data-error-line='{line}']")
    assert marked.inner_text().strip().endswith(str(line))
    band = page.locator(f".code-line-mark[data-error-line='{line}']")
    assert band.is_visible()
    area_box = area.bounding_box()
    band_box = band.bounding_box()
    gutter_box = marked.bounding_box()
    line_height = float(area.evaluate("el => parseFloat(getComputedStyle(el).lineHeight)"))
    padding_top = float(area.evaluate("el => parseFloat(getComputedStyle(el).paddingTop)"))
    expected_top = area_box["y"] + 1 + padding_top + (line - 1) * line_height
    assert abs(band_box["y"] - expected_top) < 2, (band_box, expected_top)
    assert abs(gutter_box["y"] - band_box["y"]) < 2
    assert band_box["width"] > area_box["width"] * 0.9
    colour = marked.evaluate("el => getComputedStyle(el).backgroundColor")
    assert colour not in ("rgba(0, 0, 0, 0)", "transparent")

    if SCREENSHOTS:
        marked.scroll_into_view_if_needed()
        page.screenshot(path=os.path.join(SCREENSHOTS, "yaml-error-line.png"))

    # the error link (keyboard: focus + Enter) puts the caret on the marked line
    link = page.locator("#yaml-errors a[data-yaml-line]").first
    link.focus()
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "id_content_yaml"
    caret = int(area.evaluate("el => el.selectionStart"))
    assert typed[:caret].count("\n") + 1 == line
    assert typed[caret:].startswith("no_such_tool")

    assert harness.versions.count() == 1
    assert violations == []
