"""A room's catalog as plain data, served through the runtime's ``CatalogGateway`` interface.

Training builds gold trajectories by *running* the catalog tools, so it needs the same
answers the live room would give without a database. ``CatalogSnapshot`` answers every
catalog operation the way ``harness_app.catalog_gateway.RoomCatalogGateway`` does over the
room's rows (same keys, money as ``"89.00"`` strings, ``{"error": ...}`` for an unknown SKU),
from a plain dict the Django side exports (or ``demo_catalog()`` reads from the demo CSV)::

    {"room_name": str, "room_locale": str, "currency": str, "today": "YYYY-MM-DD",
     "products": [{"sku", "title", "price": "89.00", "stock": int, "attributes": {...}}],
     "coupons": [{"code", "description", "amount": "20.00", "threshold": "199.00",
                  "sku": "" | sku, "ends_at": None | iso}]}

Sale windows and coupon start/end times are taken as already resolved by the exporter (a
snapshot is of one moment): every product listed is on sale, every coupon listed is active.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

FREE_SHIPPING_FROM = Decimal("99.00")
STANDARD_SHIPPING = Decimal("6.00")
SEARCH_LIMIT = 5
DEMO_PRODUCTS_CSV = (
    Path(__file__).resolve().parents[2] / "harness_app" / "demo_data" / "products.csv"
)
# The demo room's coupons (console/management/commands/seed_demo.py: DEMO_COUPONS).
DEMO_COUPONS: tuple[tuple[str, str, str, str, str], ...] = (
    ("AUTUMN20", "20 off orders over 199", "20.00", "199.00", ""),
    ("KNIT10", "10 off any knitwear over 80", "10.00", "80.00", "SW-1001"),
    ("SHOES15", "15 off the Chelsea boots", "15.00", "0.00", "SH-6001"),
)


class CatalogSnapshotError(ValueError):
    """The catalog data has the wrong shape; the message names the field."""


# Not simulator.ProductCatalog: an empty search lists products, coupons are reformatted (<= 20).
class CatalogSnapshot:
    """Implements ``inference.tools.catalog.CatalogGateway`` over plain data."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        products = data.get("products")
        if not isinstance(products, list) or not products:
            raise CatalogSnapshotError("catalog.products must be a non-empty list")
        self.data = data
        self.currency = str(data.get("currency", "USD"))
        self.room_name = str(data.get("room_name", "Demo Live Room"))
        self.room_locale = str(data.get("room_locale", "en-US"))
        self.today = str(data.get("today", "2026-10-15"))
        self.products: dict[str, dict[str, Any]] = {}
        for index, product in enumerate(products):
            for key in ("sku", "title", "price", "stock"):
                if key not in product:
                    raise CatalogSnapshotError(f"catalog.products[{index}].{key} is missing")
            try:
                Decimal(str(product["price"]))
            except ArithmeticError as exc:
                raise CatalogSnapshotError(
                    f"catalog.products[{index}].price is not a number: {product['price']!r}"
                ) from exc
            self.products[str(product["sku"])] = dict(product)
        self.coupons = [dict(c) for c in data.get("coupons", [])]

    # --- CatalogGateway --------------------------------------------------------------------

    def _missing(self, sku: str) -> dict[str, Any]:
        return {"error": f"no product with SKU {sku!r} in this room's catalog"}

    def get_product(self, sku: str) -> dict[str, Any]:
        product = self.products.get(sku)
        if product is None:
            return self._missing(sku)
        attributes = dict(product.get("attributes") or {})
        attributes.pop("stock_by_size", None)
        return {
            "sku": product["sku"],
            "title": product["title"],
            "price": money(product["price"]),
            "currency": self.currency,
            "in_stock": int(product["stock"]) > 0,
            "on_sale": True,
            **attributes,
        }

    def check_stock(self, sku: str, size: str | None = None) -> dict[str, Any]:
        product = self.products.get(sku)
        if product is None:
            return self._missing(sku)
        by_size = (product.get("attributes") or {}).get("stock_by_size") or {}
        if size:
            if size not in by_size:
                sizes = ", ".join(by_size) or "none (this product has no sizes)"
                return {"error": f"{sku} has no size {size!r}; sizes: {sizes}"}
            return {"sku": sku, "size": size, "units": int(by_size[size])}
        return {"sku": sku, "units": int(product["stock"]), "by_size": by_size or None}

    def list_coupons(self, sku: str | None = None) -> dict[str, Any]:
        coupons = [c for c in self.coupons if not sku or not c.get("sku") or c.get("sku") == sku]
        return {
            "currency": self.currency,
            "coupons": [
                {
                    "code": c["code"],
                    "description": c.get("description", ""),
                    "amount": money(c["amount"]),
                    "threshold": money(c.get("threshold", "0")),
                    "sku": c.get("sku") or None,
                    "ends_at": c.get("ends_at"),
                }
                for c in sorted(coupons, key=lambda c: str(c["code"]))[:20]
            ],
        }

    def get_shipping(self, sku: str, region: str) -> dict[str, Any]:
        product = self.products.get(sku)
        if product is None:
            return self._missing(sku)
        if not region.strip():
            return {"error": "region is required (a province or city)"}
        rules = (product.get("attributes") or {}).get("shipping") or {}
        price = Decimal(str(product["price"]))
        cost = Decimal("0.00") if price >= FREE_SHIPPING_FROM else STANDARD_SHIPPING
        return {
            "sku": sku,
            "region": region,
            "carrier": rules.get("carrier", "SF Express"),
            "delivery_days": rules.get("delivery_days", "2-4"),
            "shipping_cost": money(rules.get("cost", cost)),
            "currency": self.currency,
        }

    def search_products(self, query: str) -> dict[str, Any]:
        needle = query.strip().lower()
        matches = [p for p in self.products.values() if needle in str(p["title"]).lower()]
        return {
            "results": [
                {"sku": p["sku"], "title": p["title"], "price": money(p["price"])}
                for p in matches[:SEARCH_LIMIT]
            ]
        }


def money(value: Any) -> str:
    return f"{Decimal(str(value)):.2f}"


def demo_catalog(path: Path = DEMO_PRODUCTS_CSV) -> dict[str, Any]:
    """The demo room's catalog (harness_app/demo_data/products.csv and the demo coupons)."""
    products = []
    with path.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            products.append(
                {
                    "sku": row["sku"],
                    "title": row["title"],
                    "price": row["price"],
                    "stock": int(row["stock"]),
                    "attributes": json.loads(row["attributes"] or "{}"),
                }
            )
    return {
        "room_name": "Demo Live Room",
        "room_locale": "en-US",
        "currency": "USD",
        "today": "2026-10-15",
        "products": products,
        "coupons": [
            {"code": c, "description": d, "amount": a, "threshold": t, "sku": s, "ends_at": None}
            for c, d, a, t, s in DEMO_COUPONS
        ],
    }
