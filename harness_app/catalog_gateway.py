"""The room's catalog as the agent runtime sees it (implements
``inference.tools.catalog.CatalogGateway``). Every answer is plain JSON; an unknown SKU is an
``{"error": ...}`` the model can read, not an exception."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from django.db.models import Q
from django.utils import timezone

from harness_app.models import Coupon, Product, Room

FREE_SHIPPING_FROM = Decimal("99.00")
STANDARD_SHIPPING = Decimal("6.00")
SEARCH_LIMIT = 5
# Arguments come from a model: text PostgreSQL cannot hold (NUL, lone surrogates) matches no
# stored row, and sending it in a query would fail the whole reply instead of the lookup.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _matches_nothing(text: str) -> bool:
    return _UNSTORABLE.search(text) is not None


class RoomCatalogGateway:
    def __init__(self, room: Room) -> None:
        self.room = room
        self._products: dict[str, Product | None] = {}

    def _product(self, sku: str) -> Product | None:
        if _matches_nothing(sku):
            return None
        if sku not in self._products:
            self._products[sku] = Product.objects.filter(room=self.room, sku=sku).first()
        return self._products[sku]

    def _missing(self, sku: str) -> dict[str, Any]:
        return {"error": f"no product with SKU {sku!r} in this room's catalog"}

    def get_product(self, sku: str) -> dict[str, Any]:
        product = self._product(sku)
        if product is None:
            return self._missing(sku)
        attributes = dict(product.attributes)
        attributes.pop("stock_by_size", None)
        now = timezone.now()
        on_sale = (product.sale_starts_at is None or product.sale_starts_at <= now) and (
            product.sale_ends_at is None or now < product.sale_ends_at
        )
        return {
            "sku": product.sku,
            "title": product.title,
            "price": f"{product.price:.2f}",
            "currency": self.room.currency,
            "in_stock": product.stock > 0,
            "on_sale": on_sale,
            **attributes,
        }

    def check_stock(self, sku: str, size: str | None = None) -> dict[str, Any]:
        product = self._product(sku)
        if product is None:
            return self._missing(sku)
        by_size = product.attributes.get("stock_by_size") or {}
        if size:
            if size not in by_size:
                sizes = ", ".join(by_size) or "none (this product has no sizes)"
                return {"error": f"{sku} has no size {size!r}; sizes: {sizes}"}
            return {"sku": sku, "size": size, "units": int(by_size[size])}
        return {"sku": sku, "units": product.stock, "by_size": by_size or None}

    def list_coupons(self, sku: str | None = None) -> dict[str, Any]:
        now = timezone.now()
        coupons = Coupon.objects.filter(room=self.room).filter(
            Q(starts_at__isnull=True) | Q(starts_at__lte=now),
            Q(ends_at__isnull=True) | Q(ends_at__gt=now),
        )
        if sku:
            coupons = coupons.filter(
                Q(sku="") | Q(sku=sku) if not _matches_nothing(sku) else Q(sku="")
            )
        return {
            "currency": self.room.currency,
            "coupons": [
                {
                    "code": c.code,
                    "description": c.description,
                    "amount": f"{c.amount:.2f}",
                    "threshold": f"{c.threshold:.2f}",
                    "sku": c.sku or None,
                    "ends_at": c.ends_at.isoformat() if c.ends_at else None,
                }
                for c in coupons.order_by("code")[:20]
            ],
        }

    def get_shipping(self, sku: str, region: str) -> dict[str, Any]:
        product = self._product(sku)
        if product is None:
            return self._missing(sku)
        if not region.strip():
            return {"error": "region is required (a province or city)"}
        rules = product.attributes.get("shipping") or {}
        cost = Decimal("0.00") if product.price >= FREE_SHIPPING_FROM else STANDARD_SHIPPING
        return {
            "sku": sku,
            "region": region,
            "carrier": rules.get("carrier", "SF Express"),
            "delivery_days": rules.get("delivery_days", "2-4"),
            "shipping_cost": f"{Decimal(str(rules.get('cost', cost))):.2f}",
            "currency": self.room.currency,
        }

    def search_products(self, query: str) -> dict[str, Any]:
        if _matches_nothing(query):
            return {"results": []}
        matches = Product.objects.filter(room=self.room, title__icontains=query.strip())[
            :SEARCH_LIMIT
        ]
        return {
            "results": [
                {"sku": p.sku, "title": p.title, "price": f"{p.price:.2f}"} for p in matches
            ]
        }
