"""Screenshots of the HAT study in the console, for docs/RESULTS.md: the score table of the
study's eval runs, the three training runs' loss curves side by side, and the HAT run's page.

Serves the console (gunicorn, as `make run` does) on the study's database, logs in as the
demo operator and drives headless chromium through Playwright, the way a user looks at the
pages. Reads the run ids from the study's results.json.

    DATABASE_URL=... .venv/bin/python scripts/study_screenshots.py [--scale cpu] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
PASSWORD = "hat-demo-2026"  # seed_demo's operator


def _wait_up(url: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the console did not come up at {url}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="cpu")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "hat_study")
    parser.add_argument("--port", type=int, default=8766)
    args = parser.parse_args()
    results = json.loads((ROOT / "var" / "hat_study" / args.scale / "results.json").read_text())
    base = f"http://127.0.0.1:{args.port}"
    training = results["training_runs"]
    pages = {
        "score_table": results["console"]["score_table_url"],
        "training_loss": "/training/runs/compare/?"
        + urlencode([*(("runs", pk) for pk in training.values()), ("metric", "loss")]),
    }
    if "hat" in training:
        pages["hat_run"] = f"/training/runs/{training['hat']}/"
    args.out.mkdir(parents=True, exist_ok=True)
    server = subprocess.Popen(
        [str(ROOT / ".venv/bin/gunicorn"), "console.wsgi", "--bind", f"127.0.0.1:{args.port}"],
        cwd=ROOT,
        env=os.environ.copy(),
    )
    try:
        _wait_up(f"{base}/login/")
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(60_000)
            page.goto(f"{base}/login/")
            page.fill("#id_username", "operator")
            page.fill("#id_password", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_url(f"{base}/rooms/")
            for name, path in pages.items():
                page.goto(base + path)
                page.wait_for_load_state("networkidle")
                if page.locator(".js-plotly-plot").count():
                    page.wait_for_selector(".js-plotly-plot .main-svg")
                target = args.out / f"{name}.png"
                page.screenshot(path=str(target), full_page=True)
                print(f"{target}  <- {path}")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
