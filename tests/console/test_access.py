"""Who reaches which console page: anonymous -> login, labelers -> 404, tenancy -> 404."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db


def console_urls(room: Any, key_id: int = 1, sku: str = "SKU-1") -> list[str]:
    return [
        reverse("console:room-list"),
        reverse("console:harness-list"),
        *room_urls(room, key_id, sku),
    ]


def room_urls(room: Any, key_id: int = 1, sku: str = "SKU-1") -> list[str]:
    """Every page that belongs to one room (tenancy applies)."""
    h, r = room.harness.pk, room.pk
    return [
        reverse("console:room-detail", args=[r]),
        reverse("console:room-settings", args=[r]),
        reverse("console:reply-list", args=[r]),
        reverse("console:reply-detail", args=[r, 1]),
        reverse("console:latency-list", args=[r]),
        reverse("console:latency-detail", args=[r, 1]),
        reverse("console:product-create", args=[r]),
        reverse("console:catalog-import", args=[r]),
        reverse("console:product-edit", args=[r, sku]),
        reverse("console:product-delete", args=[r, sku]),
        reverse("console:api-key-create", args=[r]),
        reverse("console:api-key-revoke", args=[r, key_id]),
        reverse("console:harness-detail", args=[h]),
        reverse("console:harness-edit", args=[h]),
        reverse("console:harness-diff", args=[h]) + "?from=1&to=1",
        reverse("console:version-detail", args=[h, 1]),
        reverse("console:version-publish", args=[h, 1]),
        reverse("console:version-rollback", args=[h, 1]),
        reverse("console:version-export", args=[h, 1]),
    ]


def test_anonymous_is_sent_to_login_from_every_console_page(published_room: Any) -> None:
    client = Client()
    for url in [
        *console_urls(published_room),
        reverse("console:home"),
        reverse("console:labeling"),
    ]:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login") + "?next="), url


def test_labeler_gets_404_on_every_console_page(
    labeler_client: Client, published_room: Any
) -> None:
    for url in console_urls(published_room):
        assert labeler_client.get(url).status_code == 404, url


def test_labeler_lands_on_the_labeling_page_with_labeling_nav_only(
    labeler_client: Client,
) -> None:
    response = labeler_client.get(reverse("console:home"), follow=True)
    assert response.redirect_chain[-1][0] == reverse("console:labeling")
    html = response.content.decode()
    assert "Labeling" in html and "nothing to label yet" in html.lower()
    assert reverse("console:room-list") not in html
    assert "/api/v1/docs/" not in html


def test_merchant_cannot_open_the_labeling_page(merchant_client: Client) -> None:
    assert merchant_client.get(reverse("console:labeling")).status_code == 404


@pytest.mark.parametrize("method", ["get", "post"])
def test_merchant_b_gets_404_on_merchant_a_pages(
    other_merchant_client: Client, published_room: Any, method: str
) -> None:
    from tests.factories import ProductFactory

    product = ProductFactory(room=published_room, sku="SKU-1")
    from harness_app import services

    key, _raw = services.api_key_create(
        room=published_room, name="k", scopes=["reply"], created_by=None
    )
    read_only = (
        "/export/",
        "/diff/",
        "/replies/",
        "/latency/",
        "/replies/1/",
        "/latency/1/",
        f"/rooms/{published_room.pk}/",
        f"/harnesses/{published_room.harness.pk}/",
        "/versions/1/",
    )
    for url in room_urls(published_room, key_id=key.pk, sku=product.sku):
        if method == "post" and url.split("?")[0].endswith(read_only):
            continue  # GET-only pages answer any POST with 405, whoever owns the room
        response = getattr(other_merchant_client, method)(url)
        assert response.status_code == 404, (method, url, response.status_code)
    # and nothing changed
    product.refresh_from_db()  # not deleted
    key.refresh_from_db()
    assert key.revoked_at is None
    assert published_room.harness.versions.count() == 1


def test_login_page_shows_an_error_for_a_wrong_password(operator: Any) -> None:
    response = Client().post(reverse("login"), {"username": "op", "password": "wrong"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "Please enter a correct username and password" in html
    assert 'name="csrfmiddlewaretoken"' in html


def test_login_then_home_leads_an_operator_to_the_rooms(operator: Any) -> None:
    client = Client()
    response = client.post(
        reverse("login"), {"username": "op", "password": "pw-for-tests-1"}, follow=True
    )
    assert response.redirect_chain[-1][0] == reverse("console:room-list")
    html = response.content.decode()
    for nav in ("Rooms", "Harnesses", "/api/v1/docs/", "operator", "Log out"):
        assert nav in html


def test_logout_is_a_csrf_protected_post(operator: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    page = client.get(reverse("console:room-list")).content.decode()
    assert f'action="{reverse("logout")}"' in page
    assert client.post(reverse("logout")).status_code == 403  # no token
    token = client.cookies["csrftoken"].value
    response = client.post(reverse("logout"), {"csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert client.get(reverse("console:room-list")).status_code == 302


def test_every_post_form_carries_a_csrf_token(merchant_client: Client, published_room: Any) -> None:
    h, r = published_room.harness.pk, published_room.pk
    pages = [
        reverse("console:room-detail", args=[r]),
        reverse("console:room-settings", args=[r]),
        reverse("console:product-create", args=[r]),
        reverse("console:catalog-import", args=[r]),
        reverse("console:harness-detail", args=[h]),
        reverse("console:harness-edit", args=[h]),
        reverse("console:harness-edit", args=[h]) + "?mode=yaml",
    ]
    for url in pages:
        html = merchant_client.get(url).content.decode()
        forms = html.split('<form method="post"')[1:]
        assert forms, url
        for form in forms:
            assert 'name="csrfmiddlewaretoken"' in form.split("</form>")[0], url
