"""The publish gate in a real browser, under the Content-Security-Policy: an operator sets the
room's gate on its Publish gate tab, opens the publish page of a version that renames a tool
the model needs, starts the safety check, watches its progress bar until the verdict (Block)
appears with the deltas, and publishes anyway with a reason; no CSP violation.

Drives Debian's chromium through Playwright like tests/console/test_browser_flow.py (skipped
where chromium is not installed)."""

# ruff: noqa: F811  (fixtures imported from other test modules)
from __future__ import annotations

import os
import threading
from typing import Any

from django.db import connection

from bench.gold_model import GoldModelServer
from tests import publish_gate_edits as edits
from tests.console.test_browser_flow import (  # noqa: F401
    browser_page,
    log_in,
    pytestmark,
    record_csp_violations,
)
from training_app.models import ModelEndpoint, PublishCheck

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
SCREENSHOTS = os.environ.get("HAT_SCREENSHOT_DIR", "")


def test_check_a_risky_edit_and_override_its_block(  # type: ignore[no-untyped-def]
    live_server: Any,
    transactional_db: Any,
    compact_room: Any,
    operator: Any,
    browser_page: Any,
    monkeypatch,
    tmp_path,
    settings,
) -> None:
    from training_app.tasks import run_eval

    settings.MEDIA_ROOT = tmp_path / "artifacts"
    monkeypatch.setattr(run_eval, "delay", lambda run_id: None)
    gate_set = edits.build_gate_set(compact_room, operator)
    published = compact_room.harness.published_version
    broken = edits.draft(
        compact_room, edits.renamed(published.content, "get_product", "product_facts"), operator
    )
    page = browser_page
    violations = record_csp_violations(page)
    with GoldModelServer(edits.document(gate_set).items) as server:
        endpoint = ModelEndpoint.objects.create(
            name="fixed", base_url=server.base_url, tool_mode="text", max_concurrency=8
        )
        log_in(page, live_server.url, "op")
        page.goto(f"{live_server.url}/rooms/{compact_room.pk}/")
        page.click("nav.tabs >> text=Publish gate")
        page.select_option("#id_eval_set", str(gate_set.pk))
        page.select_option("#id_endpoint", str(endpoint.pk))
        page.fill("#id_item_limit", "8")
        page.click("text=Save gate")
        page.wait_for_selector("text=Publish gate saved.")
        page.goto(
            f"{live_server.url}/harnesses/{compact_room.harness.pk}/versions/{broken.number}/publish/"
        )
        page.click("text=Run the safety check")
        page.wait_for_selector("#publish-check [data-check-count]")
        check = PublishCheck.objects.get()

        def execute() -> None:
            try:
                edits.finish_check(check)
            finally:
                connection.close()

        worker = threading.Thread(target=execute)
        worker.start()
        page.wait_for_selector("text=Verdict: Block", timeout=60_000)
        worker.join()
    assert page.locator("#publish-check table tbody tr").count() == 1
    if SCREENSHOTS:
        page.screenshot(path=f"{SCREENSHOTS}/publish-check-block.png", full_page=True)
    page.fill("#id_override_reason", "The model was retrained on product_facts")
    page.click(f"text=Publish v{broken.number} anyway")
    page.wait_for_selector(f"text=Published version {broken.number}")
    check.refresh_from_db()
    assert check.override_reason == "The model was retrained on product_facts"
    assert violations == []
