"""An in-memory catalog for agent unit tests (implements inference.tools.catalog.CatalogGateway)."""

from __future__ import annotations

from typing import Any

PRODUCTS = {
    "SW-1001": {
        "sku": "SW-1001",
        "title": "Merino Wool Crew Sweater",
        "price": "89.00",
        "currency": "USD",
        "stock": 140,
        "stock_by_size": {"S": 56, "M": 28, "XL": 0},
    },
    "JN-3001": {
        "sku": "JN-3001",
        "title": "High-Rise Straight Leg Jeans",
        "price": "69.00",
        "currency": "USD",
        "stock": 180,
    },
}


class DictCatalog:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def get_product(self, sku: str) -> dict[str, Any]:
        self.calls.append(("get_product", {"sku": sku}))
        return dict(PRODUCTS[sku]) if sku in PRODUCTS else {"error": f"no product {sku!r}"}

    def check_stock(self, sku: str, size: str | None = None) -> dict[str, Any]:
        self.calls.append(("check_stock", {"sku": sku, "size": size}))
        product = PRODUCTS.get(sku)
        if product is None:
            return {"error": f"no product {sku!r}"}
        if size:
            return {
                "sku": sku,
                "size": size,
                "in_stock": product.get("stock_by_size", {}).get(size, 0),
            }
        return {"sku": sku, "in_stock": product["stock"]}

    def list_coupons(self, sku: str | None = None) -> dict[str, Any]:
        self.calls.append(("list_coupons", {"sku": sku}))
        return {"coupons": [{"code": "AUTUMN20", "amount": "20.00", "threshold": "199.00"}]}

    def get_shipping(self, sku: str, region: str) -> dict[str, Any]:
        self.calls.append(("get_shipping", {"sku": sku, "region": region}))
        return {"carrier": "SF Express", "days": "2-3", "cost": "0.00"}

    def search_products(self, query: str) -> dict[str, Any]:
        self.calls.append(("search_products", {"query": query}))
        return {"results": [p for p in PRODUCTS.values() if query.lower() in p["title"].lower()]}
