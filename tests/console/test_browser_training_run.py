"""The training run page in a real browser, under the Content-Security-Policy: the static
script polls the metrics API, draws one plotly chart per metric, extends it as new steps
arrive and moves the stage's progress bar, with no CSP violation.

Drives Debian's chromium through Playwright like tests/console/test_browser_flow.py (skipped
where chromium is not installed)."""

# ruff: noqa: F811  (fixtures imported from other test modules)
from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from tests.console.test_browser_flow import (  # noqa: F401
    browser_page,
    log_in,
    pytestmark,
    record_csp_violations,
)
from tests.training_app.conftest import enqueued, gold_dataset, run_config_dict  # noqa: F401
from training_app.models import StageMetric, StageRun
from training_app.services import runs

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"


@pytest.fixture
def running_run(
    transactional_db: Any, run_config_dict: dict[str, Any], operator: Any, enqueued: Any
) -> Any:
    run = runs.run_create(config=run_config_dict, created_by=operator)
    stage = run.stage_runs.get(order=0)
    now = timezone.now()
    StageRun.objects.filter(pk=stage.pk).update(
        status="running",
        lease_owner="browser-test",
        lease_expires_at=now + timedelta(hours=1),
        heartbeat_at=now,
        progress_step=2,
        progress_total=8,
        attempt_started_at=now - timedelta(seconds=20),
    )
    StageMetric.objects.bulk_create(
        StageMetric(stage=stage, step=step, name=name, value=value)
        for step in (1, 2)
        for name, value in (("loss", 3.0 / step), ("grad_norm", 1.5), ("entropy", 0.9))
    )
    return run, stage


def test_run_page_draws_and_extends_live_curves(
    live_server: Any,
    running_run: Any,
    browser_page: Any,
) -> None:
    run, stage = running_run
    page = browser_page
    violations = record_csp_violations(page)
    log_in(page, live_server.url, "op")

    page.goto(f"{live_server.url}/training/runs/{run.pk}/")
    page.wait_for_selector('[data-metric="loss"] .main-svg')
    page.wait_for_selector('[data-metric="grad_norm"] .main-svg')
    points = "document.querySelector('[data-metric=\"loss\"]').data[0].x.length"
    # key curves in the main grid; the rest folded under "More metrics", with a count
    assert page.evaluate(
        "document.querySelector('[data-charts] [data-metric=\"loss\"]') !== null"
        " && document.querySelector('[data-charts-more] [data-metric=\"entropy\"]') !== null"
    )
    assert page.inner_text("[data-charts-more-count]") == "1"
    page.click("[data-charts-more-box] > summary")
    page.wait_for_selector('[data-metric="entropy"] .main-svg', state="visible")
    assert page.evaluate(points) == 2
    assert page.inner_text(f'[data-stage="{stage.pk}"] [data-stage-steps]') == "2 / 8"

    # new steps arrive while the page is open: the chart and the bar follow without a reload
    StageMetric.objects.bulk_create(
        StageMetric(stage=stage, step=step, name="loss", value=1.0 / step) for step in (3, 4)
    )
    StageRun.objects.filter(pk=stage.pk).update(progress_step=4)
    page.wait_for_function(f"() => {points} === 4")
    # a function, not an expression: Playwright evals expressions, which the CSP forbids
    page.wait_for_function(
        f"() => document.querySelector('[data-stage=\"{stage.pk}\"] [data-stage-steps]')"
        ".textContent === '4 / 8'"
    )
    assert (
        page.evaluate(
            f"document.querySelector('[data-stage=\"{stage.pk}\"] [data-stage-bar]').style.width"
        )
        == "50%"
    )
    assert violations == []
