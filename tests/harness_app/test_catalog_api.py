"""Products and catalog import: row-level errors, all-or-nothing, upsert by sku."""

from __future__ import annotations

import io
import json
from decimal import Decimal
from pathlib import Path

import pytest

from harness_app.models import Product

pytestmark = pytest.mark.django_db

DEMO_CSV = Path(__file__).resolve().parents[2] / "harness_app" / "demo_data" / "products.csv"


def upload(data: bytes, name: str) -> io.BytesIO:
    f = io.BytesIO(data)
    f.name = name
    return f


def test_demo_catalog_imports_all_30_products(room, merchant_api):
    response = merchant_api.post(
        f"/api/v1/rooms/{room.pk}/products/import/",
        {"file": upload(DEMO_CSV.read_bytes(), "products.csv")},
        format="multipart",
    )
    assert response.status_code == 200, response.json()
    assert response.json() == {"created": 30, "updated": 0}
    sweater = Product.objects.get(room=room, sku="SW-1001")
    assert sweater.price == Decimal("89.00")
    assert sweater.attributes["sizes"] == ["XS", "S", "M", "L", "XL"]
    assert len(sweater.image_urls) == 2


def test_reimport_updates_by_sku(room, merchant_api):
    rows = [{"sku": "A-1", "title": "Tee", "price": "10.00", "stock": 3}]
    merchant_api.post(
        f"/api/v1/rooms/{room.pk}/products/import/",
        {"file": upload(json.dumps(rows).encode(), "p.json")},
        format="multipart",
    )
    rows[0]["price"] = "12.50"
    response = merchant_api.post(
        f"/api/v1/rooms/{room.pk}/products/import/",
        {"file": upload(json.dumps(rows).encode(), "p.json")},
        format="multipart",
    )
    assert response.json() == {"created": 0, "updated": 1}
    assert Product.objects.get(room=room, sku="A-1").price == Decimal("12.50")


def test_bad_rows_are_reported_by_row_and_field_and_nothing_is_saved(room, merchant_api):
    csv_text = (
        "sku,title,price,stock\n"
        "OK-1,Good,10.00,1\n"
        "BAD 2,Space in sku,5.00,1\n"
        "OK-3,Negative price,-1,1\n"
        "OK-4,Bad stock,3.00,many\n"
        "OK-1,Duplicate,4.00,1\n"
    )
    response = merchant_api.post(
        f"/api/v1/rooms/{room.pk}/products/import/",
        {"file": upload(csv_text.encode(), "p.csv")},
        format="multipart",
    )
    assert response.status_code == 400
    got = {(e["row"], e["field"].split(".")[-1]) for e in response.json()["errors"]}
    assert got == {(2, "sku"), (3, "price"), (4, "stock"), (5, "sku")}
    assert Product.objects.filter(room=room).count() == 0


def test_non_utf8_and_unknown_columns_are_clear_errors(room, merchant_api):
    bad = merchant_api.post(
        f"/api/v1/rooms/{room.pk}/products/import/",
        {"file": upload("sku,title,price\nA,T\xe9,1\n".encode("latin-1"), "p.csv")},
        format="multipart",
    )
    assert bad.status_code == 400
    assert "not UTF-8" in bad.json()["errors"][0]["message"]
    cols = merchant_api.post(
        f"/api/v1/rooms/{room.pk}/products/import/",
        {"file": upload(b"sku,title,price,colour\nA,T,1,red\n", "p.csv")},
        format="multipart",
    )
    assert "unknown column(s) colour" in cols.json()["errors"][0]["message"]


def test_product_crud(room, merchant_api):
    base = f"/api/v1/rooms/{room.pk}/products/"
    created = merchant_api.post(
        base, {"sku": "HAT-1", "title": "Bucket hat", "price": "19.99", "stock": 5}, format="json"
    )
    assert created.status_code == 201
    dup = merchant_api.post(base, {"sku": "HAT-1", "title": "x", "price": "1"}, format="json")
    assert dup.status_code == 400 and dup.json()["errors"][0]["field"] == "sku"
    bad = merchant_api.put(f"{base}HAT-1/", {"title": "Bucket hat", "price": "-3"}, format="json")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "price"
    ok = merchant_api.put(
        f"{base}HAT-1/", {"title": "Bucket hat", "price": "17.00", "stock": 2}, format="json"
    )
    assert ok.json()["price"] == "17.00"
    assert merchant_api.delete(f"{base}HAT-1/").status_code == 204
    assert merchant_api.get(f"{base}HAT-1/").status_code == 404


def test_product_list_does_not_grow_queries_with_rows(
    room, merchant_api, django_assert_max_num_queries
):
    from tests.factories import ProductFactory

    ProductFactory.create_batch(25, room=room)
    with django_assert_max_num_queries(6):
        response = merchant_api.get(f"/api/v1/rooms/{room.pk}/products/")
    assert response.json()["count"] == 25
