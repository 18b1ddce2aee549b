"""Products and catalog import: row-level errors, all-or-nothing, upsert by sku."""

from __future__ import annotations

import csv
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


DEEP = "[" * 100_000 + "]" * 100_000


def import_file(client, room, data: bytes, name: str):  # type: ignore[no-untyped-def]
    return client.post(
        f"/api/v1/rooms/{room.pk}/products/import/",
        {"file": upload(data, name)},
        format="multipart",
    )


def test_deeply_nested_json_file_is_a_400_naming_the_row(room, merchant_api):
    text = '[{"sku": "A-1", "title": "T", "price": "1"}, {"sku": "A-2", "attributes": ' + DEEP
    response = import_file(merchant_api, room, (text + "}]").encode(), "p.json")
    assert response.status_code == 400, response.content[:300]
    (error,) = response.json()["errors"]
    assert (error["row"], error["field"]) == (2, "rows[2].attributes")
    assert error["message"] == "nested deeper than 64 levels of arrays/objects"
    assert not Product.objects.filter(room=room).exists()


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ("[" * 10_000 + "]" * 10_000, "nested deeper than 64 levels of arrays/objects"),
        (json.dumps({"a": {"b": {"c": {"d": {"e": {"f": 1}}}}}}), "nested deeper than 5 levels"),
        (json.dumps({"blob": "x" * 17_000}), "the limit is 16384 bytes"),
    ],
    ids=["10000-levels", "6-levels", "17-kb"],
)
def test_csv_attributes_keep_the_product_attribute_limits(room, merchant_api, attributes, message):
    buffer = io.StringIO()
    csv.writer(buffer).writerows(
        [["sku", "title", "price", "attributes"], ["A-1", "Tee", "1.00", attributes]]
    )
    response = import_file(merchant_api, room, buffer.getvalue().encode(), "p.csv")
    assert response.status_code == 400, response.content[:300]
    (error,) = response.json()["errors"]
    assert (error["row"], error["field"]) == (1, "rows[1].attributes")
    assert message in error["message"]
    assert not Product.objects.filter(room=room).exists()


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_nul_in_any_cell_is_a_400_naming_row_and_column(room, merchant_api, fmt):
    rows = [
        {"sku": "A-1", "title": "Tee", "price": "1"},
        {"sku": "A-2", "title": "T\x00", "price": "1"},
    ]
    if fmt == "json":
        data = json.dumps(rows).encode()
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=["sku", "title", "price"])
        writer.writeheader()
        writer.writerows(rows)
        data = buffer.getvalue().encode()
    response = import_file(merchant_api, room, data, f"p.{fmt}")
    assert response.status_code == 400, response.content[:300]
    assert response.json()["errors"] == [
        {
            "field": "rows[2].title",
            "row": 2,
            "message": "must not contain the NUL character (U+0000)",
        }
    ]
    assert not Product.objects.filter(room=room).exists()


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ({"a": {"b": {"c": {"d": {"e": {"f": 1}}}}}}, "nested deeper than 5 levels"),
        ({"blob": "x" * 17_000}, "17011 bytes as JSON; the limit is 16384 bytes"),
    ],
)
def test_api_product_attributes_have_depth_and_size_limits(room, merchant_api, attributes, message):
    url = f"/api/v1/rooms/{room.pk}/products/"
    product = {"sku": "A-1", "title": "Tee", "price": "1.00"}
    response = merchant_api.post(url, product | {"attributes": attributes}, format="json")
    assert response.status_code == 400, response.content[:300]
    (error,) = response.json()["errors"]
    assert error["field"] == "attributes" and message in error["message"]
    assert not Product.objects.filter(room=room).exists()
    # five levels and 16 KB are fine
    fine = {"a": {"b": {"c": {"d": {"e": 1}}}}, "blob": "x" * 16_000}
    assert merchant_api.post(url, product | {"attributes": fine}, format="json").status_code == 201


def test_a_csv_cell_over_the_csv_field_limit_is_a_400(room, merchant_api):
    data = b"sku,title,price,attributes\nA-1,Tee,1.00," + DEEP.encode() + b"\n"
    response = import_file(merchant_api, room, data, "p.csv")
    assert response.status_code == 400, response.content[:300]
    (error,) = response.json()["errors"]
    assert error["field"] == "file"
    assert error["message"].startswith("not valid CSV after line 1: field larger than field limit")
