"""Task records for HSA-RL tests in the shared format, from the demo gold trajectories, the
demo harness and the demo catalog (``harness_app/demo_data``)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from harness_app.harness.serialization import harness_from_yaml, harness_to_dict

ROOT = Path(__file__).resolve().parents[3]
GOLD = ROOT / "training_app" / "demo_data" / "gold_trajectories.jsonl"
HARNESS = ROOT / "harness_app" / "demo_data" / "live_stream_harness.yaml"
PRODUCTS = ROOT / "harness_app" / "demo_data" / "products.csv"
HARNESS_ID = "demo-live"


def demo_harnesses() -> dict[str, dict[str, Any]]:
    return {HARNESS_ID: harness_to_dict(harness_from_yaml(HARNESS.read_text("utf-8")))}


def demo_tasks(limit: int | None = None) -> list[dict[str, Any]]:
    products = {row["sku"]: row for row in csv.DictReader(PRODUCTS.open(encoding="utf-8"))}
    records = []
    for number, line in enumerate(GOLD.read_text("utf-8").splitlines()):
        gold = json.loads(line)
        product = products[gold["product_sku"]]
        records.append(
            {
                "id": f"demo-{number:03d}",
                "harness_id": HARNESS_ID,
                "comment": gold["comment"],
                "context": {
                    "room_name": "Demo Knitwear Live",
                    "room_locale": "en-US",
                    "currency": "USD",
                    "product_sku": product["sku"],
                    "product_title": product["title"],
                    "product_price": product["price"],
                    "today": "2026-11-20",
                },
                "question_type": gold["skill"],
                "gold": gold,
            }
        )
    return records[:limit] if limit is not None else records
