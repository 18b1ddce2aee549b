"""A latency replay from the console in a real browser, under the Content-Security-Policy:
start it from the room's latency page, watch the progress bar move while the worker runs it
(the page reloads as each level is stored), then read the table and the four plotly charts
drawn from this server's plotly.js; no CSP violation.

Drives Debian's chromium through Playwright like tests/console/test_browser_flow.py (skipped
where chromium is not installed)."""

# ruff: noqa: F811  (fixtures imported from other test modules)
from __future__ import annotations

import os
import threading
from typing import Any

from django.db import connection

from experiments_app.models import LatencyReport
from experiments_app.services import latency_replay
from tests.console.test_browser_flow import (  # noqa: F401
    browser_page,
    log_in,
    pytestmark,
    record_csp_violations,
)
from tests.experiments_app.test_latency_replay import EndlessServer
from training_app.models import ModelEndpoint

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
SCREENSHOTS = os.environ.get("HAT_SCREENSHOT_DIR", "")
CHARTS = ("latency-by-concurrency", "latency-share-under", "latency-ttft", "latency-histogram")


def test_start_a_replay_and_watch_it_finish(  # type: ignore[no-untyped-def]
    live_server: Any, transactional_db: Any, published_room: Any, browser_page: Any, monkeypatch
) -> None:
    from experiments_app.tasks import run_latency_replay

    queued: list[int] = []
    monkeypatch.setattr(run_latency_replay, "delay", lambda report_id: queued.append(report_id))
    page = browser_page
    violations = record_csp_violations(page)
    with EndlessServer() as server:
        server.delay_s = 0.25
        server.gate = threading.Event()  # requests wait until the page has been seen queued
        endpoint = ModelEndpoint.objects.create(
            name="scripted", base_url=server.base_url, model_name="scripted-model", timeout_s=5
        )
        log_in(page, live_server.url, "op")
        page.goto(f"{live_server.url}/rooms/{published_room.pk}/latency/")
        page.select_option("#id_endpoint", str(endpoint.pk))
        page.fill("#id_concurrency", "1,2")
        page.fill("#id_limit", "6")
        page.click("text=Start replay")
        page.wait_for_selector("#latency-replay [data-run-status]")
        report = LatencyReport.objects.get()
        assert queued == [report.pk]
        assert page.inner_text("[data-run-status]") == "Queued"
        assert page.inner_text("[data-run-count]") == "0 / 12"

        # the worker runs it while the page is open: the bar moves, then the charts appear
        def execute() -> None:
            try:
                latency_replay.latency_replay_run(report.pk)
            finally:
                connection.close()

        worker = threading.Thread(target=execute)
        worker.start()
        server.gate.set()
        page.wait_for_function(
            "() => { const t = document.querySelector('[data-run-count]');"
            " return t && /^[1-9]\\d* \\/ 12$/.test(t.textContent) }",
            timeout=30_000,
        )
        worker.join(60)
        page.wait_for_selector("[data-run-status]:text('Succeeded')", timeout=30_000)
    for chart in CHARTS:
        page.wait_for_selector(f'[data-plotly-figure="{chart}"] .main-svg')
    assert page.inner_text("[data-run-count]") == "12 / 12"
    assert page.locator("table.data tbody tr").count() == 2
    assert page.locator("[data-run-cancel]").count() == 0
    if SCREENSHOTS:
        page.screenshot(path=f"{SCREENSHOTS}/latency-replay.png", full_page=True)
    assert violations == []
