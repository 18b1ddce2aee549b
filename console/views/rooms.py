"""Rooms: the list (operators: all, merchants: their own) and one room's page."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from console.forms.api_keys import ApiKeyCreateForm
from console.forms.products import CatalogImportForm
from console.views.access import console_user_required
from console.views.pagination import paginate
from harness_app import selectors
from harness_app.models import Room

ROOMS_PER_PAGE = 25
PRODUCTS_PER_PAGE = 20


@require_GET
@console_user_required
def room_list(request: HttpRequest) -> HttpResponse:
    page = paginate(request, selectors.rooms_visible_to(request.user), ROOMS_PER_PAGE)
    return render(request, "harness_app/room_list.html", {"page_obj": page})


@require_GET
@console_user_required
def room_detail(request: HttpRequest, room_id: int) -> HttpResponse:
    room = selectors.room_get(user=request.user, room_id=room_id)
    return render(request, "harness_app/room_detail.html", room_detail_context(request, room))


def room_detail_context(request: HttpRequest, room: Room) -> dict[str, object]:
    return {
        "room": room,
        "products": paginate(request, selectors.products_of_room(room), PRODUCTS_PER_PAGE),
        "api_keys": selectors.api_keys_of_room(room),
        "import_form": CatalogImportForm(),
        "api_key_form": ApiKeyCreateForm(),
    }
