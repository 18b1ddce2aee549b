"""An eval run from the console in a real browser, under the Content-Security-Policy: start it
from the form, watch the progress bar until the run finishes, read the score and the
per-item results, then the score table's plotly chart; no CSP violation.

Drives Debian's chromium through Playwright like tests/console/test_browser_flow.py (skipped
where chromium is not installed)."""

# ruff: noqa: F811  (fixtures imported from other test modules)
from __future__ import annotations

import os
import threading
from typing import Any

from django.db import connection

from bench.gold_model import GoldModelServer
from tests.console.test_browser_flow import (  # noqa: F401
    browser_page,
    log_in,
    pytestmark,
    record_csp_violations,
)
from training_app.evals.qa_set_document import loads_qa_set
from training_app.models import EvalRun, ModelEndpoint
from training_app.services import evals

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
SCREENSHOTS = os.environ.get("HAT_SCREENSHOT_DIR", "")


def test_start_an_eval_run_and_read_its_results(  # type: ignore[no-untyped-def]
    live_server: Any,
    transactional_db: Any,
    compact_room: Any,
    browser_page: Any,
    monkeypatch,
    tmp_path,
    settings,
) -> None:
    from training_app.tasks import run_eval

    settings.MEDIA_ROOT = tmp_path / "artifacts"
    started: list[int] = []
    monkeypatch.setattr(run_eval, "delay", lambda run_id: started.append(run_id))
    eval_set = evals.eval_set_build_qa(
        harness_version=compact_room.harness.published_version, name="Demo LS", per_type=1
    )
    with eval_set.file.open("rb") as handle:
        items = loads_qa_set(handle.read()).items
    page = browser_page
    violations = record_csp_violations(page)
    with GoldModelServer(items, wrong_items={items[0].id}) as server:
        endpoint = ModelEndpoint.objects.create(
            name="gold", base_url=server.base_url, tool_mode="text"
        )
        log_in(page, live_server.url, "op")
        page.click("nav >> text=Evaluation")
        page.click("text=New eval run")
        page.select_option("#id_eval_set", str(eval_set.pk))
        page.select_option("#id_endpoint", str(endpoint.pk))
        page.fill("#id_model_label", "HAT")
        page.click("text=Start run")
        page.wait_for_selector("#eval-run [data-run-status]")
        run = EvalRun.objects.get()
        assert started == [run.pk]
        assert page.inner_text("[data-run-status]") == "Queued"

        # the worker runs it while the page is open: the page follows and shows the results
        def execute() -> None:
            try:
                evals.eval_run_execute(run.pk)
            finally:
                connection.close()

        worker = threading.Thread(target=execute)
        worker.start()
        page.wait_for_selector("[data-headline]", timeout=60_000)
        worker.join()
    assert page.inner_text("[data-run-status]") == "Succeeded"
    n = len(items)
    assert page.inner_text("[data-headline] b") == f"{100 * (n - 1) / n:.1f}"
    assert page.locator("tr[data-item]").count() == n
    if SCREENSHOTS:
        page.screenshot(path=f"{SCREENSHOTS}/eval-run.png", full_page=True)
    page.click("text=Score table")
    page.wait_for_selector('[data-plotly-figure="score-table-figure"] .main-svg')
    assert page.inner_text('[data-cell="HAT:live_stream_qa"] b') == f"{100 * (n - 1) / n:.1f}"
    if SCREENSHOTS:
        page.screenshot(path=f"{SCREENSHOTS}/eval-score-table.png", full_page=True)
    assert violations == []
