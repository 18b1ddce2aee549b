"""Rooms list and room page: catalog, product form, catalog import, API keys."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from harness_app.models import Product, RoomApiKey
from harness_app.selectors import api_key_lookup
from tests.factories import ProductFactory, RoomFactory

pytestmark = pytest.mark.django_db


def test_operator_sees_all_rooms_merchant_only_own(
    operator_client: Client, merchant_client: Client, room: Any, other_room: Any
) -> None:
    # when
    all_rooms = operator_client.get(reverse("console:room-list")).content.decode()
    own_rooms = merchant_client.get(reverse("console:room-list")).content.decode()
    # then
    assert "Room A" in all_rooms and "Room B" in all_rooms
    assert "Room A" in own_rooms and "Room B" not in own_rooms


def test_rooms_list_query_count_does_not_grow_with_rooms(
    operator_client: Client, operator: Any, django_assert_max_num_queries: Any
) -> None:
    for _ in range(12):
        RoomFactory()
    # session, user, groups, count, one page of rooms with owner/harness/published version
    with django_assert_max_num_queries(5):
        response = operator_client.get(reverse("console:room-list"))
    assert response.status_code == 200
    assert len(re.findall(r'href="/rooms/\d+/"', response.content.decode())) == 12


def test_rooms_list_is_paginated(operator_client: Client) -> None:
    for i in range(30):
        RoomFactory(name=f"Room {i:02d}")
    first = operator_client.get(reverse("console:room-list")).content.decode()
    second = operator_client.get(reverse("console:room-list") + "?page=2").content.decode()
    assert "Room 00" in first and "Room 29" not in first
    assert "Room 29" in second and "Page 2 of 2" in second


def test_room_page_shows_a_paginated_catalog(merchant_client: Client, room: Any) -> None:
    for i in range(25):
        ProductFactory(room=room, sku=f"SKU-{i:03d}", title=f"Sweater {i}")
    response = merchant_client.get(reverse("console:room-detail", args=[room.pk]))
    html = response.content.decode()
    assert response.status_code == 200
    assert "SKU-000" in html and "SKU-019" in html and "SKU-020" not in html
    assert "25 products" in html
    page2 = merchant_client.get(reverse("console:room-detail", args=[room.pk]) + "?page=2")
    assert "SKU-024" in page2.content.decode()


def test_product_create_and_edit(merchant_client: Client, room: Any) -> None:
    url = reverse("console:product-create", args=[room.pk])
    response = merchant_client.post(
        url,
        {
            "sku": "SW-1",
            "title": "Wool sweater",
            "price": "89.50",
            "stock": "3",
            "attributes": '{"material": "wool"}',
            "image_urls": "https://img.example.com/a.jpg\r\n",
            "sale_starts_at": "",
            "sale_ends_at": "",
        },
    )
    assert response.status_code == 302
    product = Product.objects.get(room=room, sku="SW-1")
    assert product.price == Decimal("89.50") and product.attributes == {"material": "wool"}
    assert product.image_urls == ["https://img.example.com/a.jpg"]

    edit = reverse("console:product-edit", args=[room.pk, "SW-1"])
    page = merchant_client.get(edit).content.decode()
    assert "Wool sweater" in page and 'name="sku"' not in page
    response = merchant_client.post(
        edit,
        {
            "title": "Merino sweater",
            "price": "79",
            "stock": "3",
            "attributes": "",
            "image_urls": "",
        },
    )
    assert response.status_code == 302
    product.refresh_from_db()
    assert product.title == "Merino sweater" and product.image_urls == []


def test_product_form_errors_point_at_their_fields(merchant_client: Client, room: Any) -> None:
    ProductFactory(room=room, sku="TAKEN")
    response = merchant_client.post(
        reverse("console:product-create", args=[room.pk]),
        {
            "sku": "TAKEN",
            "title": "x",
            "price": "-1",
            "stock": "1",
            "attributes": "[1]",
            "image_urls": "ftp://nope",
            "sale_starts_at": "2026-01-02T10:00",
            "sale_ends_at": "2026-01-01T10:00",
        },
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert _error_of(html, "price") and _error_of(html, "attributes")
    assert "must be a JSON object" in _error_of(html, "attributes")
    assert "line 1 is not an http(s) URL" in _error_of(html, "image_urls")
    assert "must be after the sale start" in _error_of(html, "sale_ends_at")
    assert Product.objects.filter(room=room).count() == 1


def test_duplicate_sku_is_reported_on_the_sku_field(merchant_client: Client, room: Any) -> None:
    ProductFactory(room=room, sku="TAKEN")
    response = merchant_client.post(
        reverse("console:product-create", args=[room.pk]),
        {"sku": "TAKEN", "title": "x", "price": "1", "stock": "1"},
    )
    assert "already exists" in _error_of(response.content.decode(), "sku")


def test_product_delete_needs_a_confirmation_post(merchant_client: Client, room: Any) -> None:
    ProductFactory(room=room, sku="GONE")
    url = reverse("console:product-delete", args=[room.pk, "GONE"])
    assert "cannot be undone" in merchant_client.get(url).content.decode()
    assert Product.objects.filter(sku="GONE").exists()
    merchant_client.post(url)
    assert not Product.objects.filter(sku="GONE").exists()


def test_catalog_import_csv_upserts(merchant_client: Client, room: Any) -> None:
    ProductFactory(room=room, sku="A-1", title="Old")
    csv_data = b"sku,title,price,stock\nA-1,New title,10.00,5\nB-2,Scarf,19.90,7\n"
    response = merchant_client.post(
        reverse("console:catalog-import", args=[room.pk]),
        {"file": SimpleUploadedFile("catalog.csv", csv_data, "text/csv"), "format": ""},
    )
    assert response.status_code == 302
    assert Product.objects.get(room=room, sku="A-1").title == "New title"
    assert Product.objects.filter(room=room).count() == 2
    page = merchant_client.get(response["Location"]).content.decode()
    assert "1 product(s) added, 1 updated" in page


def test_catalog_import_errors_are_a_row_field_message_table(
    merchant_client: Client, room: Any
) -> None:
    rows = [
        {"sku": "OK-1", "title": "Fine", "price": 1},
        {"sku": "bad sku!", "title": "x", "price": 1},
        {"sku": "P-3", "title": "y", "price": "cheap"},
    ]
    response = merchant_client.post(
        reverse("console:catalog-import", args=[room.pk]),
        {"file": SimpleUploadedFile("catalog.json", json.dumps(rows).encode(), "application/json")},
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "Nothing was imported" in html
    assert '<td class="num">2</td><td class="mono">sku</td>' in html
    assert '<td class="num">3</td><td class="mono">price</td>' in html
    assert not Product.objects.filter(room=room).exists()


def test_api_key_is_shown_once_then_only_its_prefix(merchant_client: Client, room: Any) -> None:
    # when
    response = merchant_client.post(
        reverse("console:api-key-create", args=[room.pk]),
        {"name": "backend", "scopes": ["reply", "events"]},
    )
    # then: the page shows the full key, which authenticates, and is not cached
    html = response.content.decode()
    key = RoomApiKey.objects.get(room=room)
    raw = html.split('<code id="raw-key">')[1].split("</code>")[0]
    assert raw.startswith(f"hat_{key.prefix}_")
    assert api_key_lookup(raw) == key
    assert "shown only once" in html and "no-store" in response["Cache-Control"]
    room_page = merchant_client.get(reverse("console:room-detail", args=[room.pk])).content.decode()
    assert f"hat_{key.prefix}_…" in room_page and raw not in room_page


def test_api_key_form_errors(merchant_client: Client, room: Any) -> None:
    response = merchant_client.post(reverse("console:api-key-create", args=[room.pk]), {"name": ""})
    html = response.content.decode()
    assert "choose at least one scope" in _error_of(html, "scopes")
    assert "This field is required" in _error_of(html, "name")
    assert not RoomApiKey.objects.exists()


def test_api_key_revoke_asks_first(merchant_client: Client, room: Any) -> None:
    from harness_app import services

    key, raw = services.api_key_create(room=room, name="old", scopes=["events"], created_by=None)
    url = reverse("console:api-key-revoke", args=[room.pk, key.pk])
    assert "Revoke “old”?" in merchant_client.get(url).content.decode()
    key.refresh_from_db()
    assert key.revoked_at is None
    response = merchant_client.post(url)
    assert response.status_code == 302
    key.refresh_from_db()
    assert key.revoked_at is not None and api_key_lookup(raw) is None


def _error_of(html: str, field: str) -> str:
    """The error text rendered inside the field wrapper of ``field`` ('' when none)."""
    marker = f'data-field="{field}"'
    if marker not in html:
        raise AssertionError(f"no field {field!r} on the page")
    block = html.split(marker, 1)[1].split('data-field="', 1)[0]
    return " ".join(part.split("</p>")[0] for part in block.split('class="field-error"')[1:])


def test_operator_creates_a_room_for_a_merchant(client, operator, merchant):
    from harness_app.models import Room

    client.force_login(operator)
    bad = client.post(
        "/rooms/new/",
        {"name": "Shoes Live", "owner": merchant.pk, "locale": "en-US", "currency": "usd"},
    )
    assert bad.status_code == 400
    assert "3-letter ISO 4217" in bad.content.decode()
    assert not Room.objects.filter(name="Shoes Live").exists()
    ok = client.post(
        "/rooms/new/",
        {"name": "Shoes Live", "owner": merchant.pk, "locale": "en-US", "currency": "EUR"},
    )
    room = Room.objects.get(name="Shoes Live")
    assert ok.status_code == 302 and ok["Location"] == f"/rooms/{room.pk}/"
    assert room.owner == merchant and room.currency == "EUR" and room.harness is not None


def test_merchants_cannot_create_rooms(client, merchant):
    client.force_login(merchant)
    assert client.get("/rooms/new/").status_code == 404


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested deeper than 64 levels"),
        ('{"care": ["wash\\u0000"]}', "at care[0]: must not contain the NUL character"),
        ('{"k\\u0000": 1}', "must not contain the NUL character"),
        (json.dumps({"a": {"b": {"c": {"d": {"e": {"f": 1}}}}}}), "nested deeper than 5 levels"),
        (json.dumps({"blob": "x" * 17_000}), "the limit is 16384 bytes"),
    ],
    ids=["100000-levels", "nul-value", "nul-key", "6-levels", "17-kb"],
)
def test_product_form_attribute_limits_are_field_errors(
    merchant_client: Client, room: Any, attributes: str, message: str
) -> None:
    response = merchant_client.post(
        reverse("console:product-create", args=[room.pk]),
        {"sku": "A-1", "title": "Tee", "price": "1.00", "stock": "1", "attributes": attributes},
    )
    assert response.status_code == 200
    assert message in _error_of(response.content.decode(), "attributes")
    assert not Product.objects.filter(room=room).exists()


def test_a_duplicate_room_name_for_the_merchant_is_a_name_error(client, operator, merchant, room):  # type: ignore[no-untyped-def]
    from harness_app.models import Room

    client.force_login(operator)
    response = client.post(
        "/rooms/new/",
        {"name": room.name, "owner": merchant.pk, "locale": "en-US", "currency": "USD"},
    )
    assert response.status_code == 400
    assert "Room with this Owner and Name already exists." in _error_of(
        response.content.decode(), "name"
    )
    assert Room.objects.filter(owner=merchant).count() == 1
