"""In a real browser, under the Content-Security-Policy: the console's pages (with plotly
charts), the harness editor and Swagger UI work and report no CSP violation.

Drives Debian's chromium through Playwright like tests/console/test_browser_flow.py.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from experiments_app.traffic_simulation import simulate_traffic
from tests.console.test_browser_flow import (  # noqa: F401 (fixture)
    browser_page,
    log_in,
    pytestmark,
    record_csp_violations,
)
from tests.console.test_latency_pages import make_report
from tests.experiments_app.conftest import endpoint, make_experiment  # noqa: F401 (fixtures)

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"


@pytest.fixture
def pages(transactional_db: Any, published_room: Any, make_experiment: Any) -> dict[str, str]:  # noqa: F811
    experiment = make_experiment([published_room], secondary_metrics=["views"])
    simulate_traffic(experiment=experiment, uvs=600, days=3, lift=0.1, seed=3)
    report = make_report(published_room)
    harness = published_room.harness.pk
    return {
        "readout": f"/experiments/{experiment.pk}/",
        "latency": f"/rooms/{published_room.pk}/latency/{report.pk}/",
        "editor": f"/harnesses/{harness}/edit/",
        "docs": "/api/v1/docs/",
    }


def test_pages_work_under_the_policy_without_violations(
    live_server: Any,
    pages: dict[str, str],
    browser_page: Any,  # noqa: F811
) -> None:
    page = browser_page
    violations = record_csp_violations(page)
    log_in(page, live_server.url, "op")

    # plotly drew its charts (scripts from 'self', its styles allowed)
    page.goto(live_server.url + pages["readout"])
    page.wait_for_selector(".js-plotly-plot .main-svg")
    assert page.locator(".js-plotly-plot").count() >= 3
    page.goto(live_server.url + pages["latency"])
    page.wait_for_selector(".js-plotly-plot .main-svg")

    # the editor's JavaScript runs: "+ Add skill" adds an entry in place
    page.goto(live_server.url + pages["editor"])
    before = page.locator("#skills-entries .entry").count()
    page.click("[data-add-entry=skills]")
    assert page.locator("#skills-entries .entry").count() == before + 1

    # Swagger UI loaded its init script and rendered the schema
    page.goto(live_server.url + pages["docs"])
    page.wait_for_selector(".swagger-ui .info .title")
    assert "HAT Console API" in page.locator(".swagger-ui .info .title").inner_text()
    page.wait_for_selector(".opblock-tag")

    assert violations == []
