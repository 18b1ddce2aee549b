"""Write the demo gold-trajectory dataset for the demo harness (deterministic).

Each line is a gold trajectory (``harness_app.hsa.trajectory`` format) of what a correct
host does for one viewer comment: which skill it loads, which catalog tools it calls with
which arguments (and what they return), and the final answer. The facts come from the demo
catalog (harness_app/demo_data/products.csv), so every price in an answer is a catalog price.

    python training_app/demo_data/make_gold_set.py > training_app/demo_data/gold_trajectories.jsonl
"""

from __future__ import annotations

import csv
import json
import random
import sys
from pathlib import Path
from typing import Any

CATALOG = Path(__file__).resolve().parents[2] / "harness_app" / "demo_data" / "products.csv"
SIZE_FOR = {"M": ("168 cm", "58 kg"), "S": ("158 cm", "48 kg"), "L": ("175 cm", "66 kg")}
REGIONS = ("Zhejiang", "Guangdong", "Sichuan", "Beijing", "Jiangsu")


def _products() -> list[dict[str, Any]]:
    rows = list(csv.DictReader(CATALOG.open(encoding="utf-8")))
    for row in rows:
        row["attributes"] = json.loads(row["attributes"])
    return rows


def _product_result(row: dict[str, Any]) -> dict[str, Any]:
    attributes = {k: v for k, v in row["attributes"].items() if k != "stock_by_size"}
    return {
        "sku": row["sku"],
        "title": row["title"],
        "price": row["price"],
        "currency": "USD",
        "in_stock": int(row["stock"]) > 0,
        "on_sale": True,
        **attributes,
    }


def _trajectory(
    skill: str,
    calls: list[dict[str, Any]],
    answer: str,
    comment: str,
    sku: str,
    quoted: list[float],
    catalog: list[float],
) -> dict[str, Any]:
    return {
        "skill": skill,
        "tool_calls": calls,
        "final_answer": answer,
        "comment": comment,
        "product_sku": sku,
        "quoted_prices": quoted,
        "catalog_prices": catalog,
    }


def examples(seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for row in _products():
        sku, title, price = row["sku"], row["title"], float(row["price"])
        attributes = row["attributes"]
        product = _product_result(row)
        get = {"name": "get_product", "arguments": {"sku": sku}, "result": product}
        material = attributes.get("material", "described on the product card")
        out.append(
            _trajectory(
                "product-qa",
                [get],
                f"The {title} is {material}, and it is ${row['price']}.",
                rng.choice(
                    [
                        f"what is the {title.lower()} made of and how much?",
                        f"price and material of the {title.lower()} please",
                        "how much is this one and what's it made of?",
                    ]
                ),
                sku,
                [price],
                [price],
            )
        )
        chart = attributes.get("size_chart")
        by_size = attributes.get("stock_by_size") or {}
        if chart:
            size = rng.choice([s for s in SIZE_FOR if s in chart] or list(chart))
            height, weight = SIZE_FOR.get(size, ("170 cm", "60 kg"))
            units = int(by_size.get(size, 0))
            stock = {
                "name": "check_stock",
                "arguments": {"sku": sku, "size": size},
                "result": {"sku": sku, "size": size, "units": units},
            }
            stock_text = f"{units} left in {size}" if units else f"{size} is sold out right now"
            out.append(
                _trajectory(
                    "size-advice",
                    [get, stock],
                    f"I'd go with {size}: it fits {chart[size]}. {stock_text}.",
                    f"I'm {height} and {weight}, which size should I take?",
                    sku,
                    [],
                    [price],
                )
            )
        region = rng.choice(REGIONS)
        cost = "0.00" if price >= 99 else "6.00"
        ship = {
            "name": "get_shipping",
            "arguments": {"sku": sku, "region": region},
            "result": {
                "sku": sku,
                "region": region,
                "carrier": "SF Express",
                "delivery_days": "2-4",
                "shipping_cost": cost,
                "currency": "USD",
            },
        }
        cost_text = "shipping is free" if cost == "0.00" else f"shipping is ${cost}"
        out.append(
            _trajectory(
                "after-sales",
                [ship],
                f"To {region} it ships with SF Express in 2-4 days, and {cost_text}.",
                f"how long does delivery to {region} take?",
                sku,
                [] if cost == "0.00" else [float(cost)],
                [float(cost)],
            )
        )
    coupon = {
        "code": "AUTUMN20",
        "description": "20 off orders over 199",
        "amount": "20.00",
        "threshold": "199.00",
        "sku": None,
        "ends_at": None,
    }
    for row in _products()[:10]:
        sku = row["sku"]
        listed = {
            "name": "list_coupons",
            "arguments": {"sku": sku},
            "result": {"currency": "USD", "coupons": [coupon]},
        }
        out.append(
            _trajectory(
                "promo-push",
                [listed],
                "Use AUTUMN20 for 20 off orders over 199; "
                "the product card shows the price after it.",
                rng.choice(["any coupons today?", "is there a discount on this?", "deals?"]),
                sku,
                [],
                [20.0, 199.0],
            )
        )
    return out


if __name__ == "__main__":
    for example in examples():
        sys.stdout.write(json.dumps(example, ensure_ascii=False, sort_keys=True) + "\n")
