"""Every main page fits its window (issue #15, part 3): in a real browser at 1,400 px and at
390 px (a phone), the document is exactly as wide as the viewport. Long YAML, JSON lines,
the navigation and wide tables wrap or scroll inside their own box, never the page.

Drives Debian's chromium through Playwright like tests/console/test_browser_flow.py.
"""

# ruff: noqa: F811  (fixtures imported from other test modules)
from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from experiments_app.traffic_simulation import simulate_traffic
from tests.console.test_browser_flow import (  # noqa: F401 (fixtures)
    CHROMIUM,
    CHROMIUM_ARGS,
    log_in,
    pytestmark,
)
from tests.experiments_app.conftest import endpoint, make_experiment  # noqa: F401
from tests.training_app.conftest import enqueued, gold_dataset, run_config_dict  # noqa: F401

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
ROOT = Path(__file__).resolve().parents[2]
WIDTHS = (1400, 390)
SCREENSHOTS = os.environ.get("HAT_SCREENSHOT_DIR", "")  # set it to look at every page

# The elements that stick out past the viewport's right edge (outermost first), to name the
# culprit when a page is too wide.
OVERFLOWING = """() => {
  const width = document.documentElement.clientWidth;
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    const box = el.getBoundingClientRect();
    if (box.right > width + 1 && !out.some(o => o.contains(el))) out.push(el);
  }
  return out.slice(0, 5).map(el => el.tagName.toLowerCase() + (el.className ? '.' +
    String(el.className).trim().replace(/\\s+/g, '.') : '') + ' ' +
    Math.round(el.getBoundingClientRect().right) + 'px');
}"""


@pytest.fixture
def pages(
    transactional_db: Any,
    published_room: Any,
    gold_dataset: Any,
    run_config_dict: dict[str, Any],
    make_experiment: Any,
    operator: Any,
    enqueued: Any,
    demo_harness: Any,
) -> dict[str, str]:
    from harness_app import services as harness_services
    from training_app.models import EvalRun, ModelEndpoint
    from training_app.services import evals, runs

    harness_services.products_import(
        room=published_room,
        data=(ROOT / "harness_app" / "demo_data" / "products.csv").read_bytes(),
        fmt="csv",
    )
    experiment = make_experiment([published_room], secondary_metrics=["views"])
    simulate_traffic(experiment=experiment, uvs=300, days=2, lift=0.1, seed=3)
    run = runs.run_create(config=run_config_dict, created_by=operator)
    now = timezone.now()
    run.stage_runs.filter(order=0).update(
        status="running",
        started_at=now - timedelta(minutes=3),
        lease_owner="layout-test",
        lease_expires_at=now + timedelta(hours=1),
        heartbeat_at=now,
    )
    version = published_room.harness.published_version
    eval_set = evals.eval_set_build_qa(harness_version=version, name="Demo LS", per_type=1)
    gold = ModelEndpoint.objects.create(name="gold-layout", base_url="http://127.0.0.1:9/v1")
    eval_run = EvalRun.objects.create(eval_set=eval_set, endpoint=gold, model_label="HAT")
    from tests.console.test_replies import make_reply
    from tests.console.test_trace_requests_page import agent_trace

    reply = make_reply(published_room, 1, trace=agent_trace(demo_harness)[0])
    harness = published_room.harness
    return {
        "reply": f"/rooms/{published_room.pk}/replies/{reply.pk}/",
        "home": "/",
        "rooms": "/rooms/",
        "room": f"/rooms/{published_room.pk}/",
        "harness": f"/harnesses/{harness.pk}/",
        "editor": f"/harnesses/{harness.pk}/edit/",
        "hsa preview": f"/harnesses/{harness.pk}/versions/{version.number}/hsa/",
        "datasets": "/training/datasets/",
        "dataset": f"/training/datasets/{gold_dataset.pk}/",
        "experiments": "/experiments/",
        "experiment": f"/experiments/{experiment.pk}/",
        "training runs": "/training/runs/",
        "training run": f"/training/runs/{run.pk}/",
        "evaluation": "/evaluation/",
        "eval set": f"/evaluation/sets/{eval_set.pk}/",
        "eval run": f"/evaluation/runs/{eval_run.pk}/",
        "endpoints": "/endpoints/",
    }


def test_every_main_page_is_as_wide_as_the_window(live_server: Any, pages: dict[str, str]) -> None:
    from playwright.sync_api import sync_playwright

    too_wide: dict[str, Any] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for width in WIDTHS:
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.set_default_timeout(15_000)
                log_in(page, live_server.url, "op")
                for name, path in pages.items():
                    response = page.goto(live_server.url + path)
                    assert response is not None and response.status == 200, (name, path)
                    page.wait_for_load_state("load")
                    # with every collapsed section open too (system prompts, tool specs)
                    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = 1)")
                    scroll, viewport = page.evaluate(
                        "[document.documentElement.scrollWidth,"
                        " document.documentElement.clientWidth]"
                    )
                    if SCREENSHOTS:
                        shot = f"{SCREENSHOTS}/{name.replace(' ', '-')}-{width}.png"
                        page.screenshot(path=shot, full_page=True)
                    if scroll != viewport:
                        too_wide[f"{name} @ {width}px"] = (scroll, page.evaluate(OVERFLOWING))
                page.close()
        finally:
            browser.close()
    assert too_wide == {}


def test_hsa_preview_panels_sit_side_by_side_on_a_wide_screen(
    live_server: Any, pages: dict[str, str]
) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            log_in(page, live_server.url, "op")
            page.goto(live_server.url + pages["hsa preview"])
            panels = page.evaluate(
                "[...document.querySelectorAll('.side-by-side > .panel')].map(p => {"
                " const b = p.getBoundingClientRect(); return [b.left, b.right, b.top]; })"
            )
        finally:
            browser.close()
    (left_a, right_a, top_a), (left_b, right_b, top_b) = panels
    assert left_a >= 0
    # the augmented panel is on screen, to the right of the original, on the same row
    assert top_a == top_b
    assert right_a < left_b and right_b <= 1400
