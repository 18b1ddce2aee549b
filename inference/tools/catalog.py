"""Built-in catalog tools. The agent runtime only knows this interface; the Django side
implements it over the room's products (harness_app.catalog_gateway)."""

from __future__ import annotations

from typing import Any, Protocol


class CatalogGateway(Protocol):
    """Read-only catalog operations a room's built-in tools may call. Each returns a JSON-able
    dict; an unknown SKU returns ``{"error": "..."}`` rather than raising."""

    def get_product(self, sku: str) -> dict[str, Any]: ...

    def check_stock(self, sku: str, size: str | None = None) -> dict[str, Any]: ...

    def list_coupons(self, sku: str | None = None) -> dict[str, Any]: ...

    def get_shipping(self, sku: str, region: str) -> dict[str, Any]: ...

    def search_products(self, query: str) -> dict[str, Any]: ...


def call_catalog(
    gateway: CatalogGateway, operation: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    """Dispatch a validated call to the named operation (arguments already schema-checked)."""
    if operation == "get_product":
        return gateway.get_product(str(arguments.get("sku", "")))
    if operation == "check_stock":
        size = arguments.get("size")
        return gateway.check_stock(str(arguments.get("sku", "")), str(size) if size else None)
    if operation == "list_coupons":
        sku = arguments.get("sku")
        return gateway.list_coupons(str(sku) if sku else None)
    if operation == "get_shipping":
        return gateway.get_shipping(str(arguments.get("sku", "")), str(arguments.get("region", "")))
    if operation == "search_products":
        return gateway.search_products(str(arguments.get("query", "")))
    return {"error": f"unknown catalog operation {operation!r}"}
