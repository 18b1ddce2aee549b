"""Rooms: the list (operators: all, merchants: their own), one room's page, and its
live-reply settings."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import IntegrityError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from console.api_errors import model_validation_errors
from console.forms.api_keys import ApiKeyCreateForm
from console.forms.products import CatalogImportForm
from console.forms.rooms import RoomCreateForm, RoomSettingsForm
from console.forms.webhook_secrets import WebhookSecretCreateForm
from console.roles import is_operator
from console.views.access import console_user_required
from console.views.pagination import paginate
from experiments_app.selectors.room_endpoints import endpoints_usable
from harness_app import selectors, services
from harness_app.models import Room

ROOMS_PER_PAGE = 25
PRODUCTS_PER_PAGE = 20


@require_GET
@console_user_required
def room_list(request: HttpRequest) -> HttpResponse:
    page = paginate(request, selectors.rooms_visible_to(request.user), ROOMS_PER_PAGE)
    return render(request, "harness_app/room_list.html", {"page_obj": page})


@require_http_methods(["GET", "POST"])
@console_user_required
def room_create(request: HttpRequest) -> HttpResponse:
    """Operators create rooms; for merchants this page does not exist."""
    if not is_operator(request.user):
        raise Http404("No such page.")
    form = RoomCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            room = services.room_create(**form.cleaned_data)
        except IntegrityError:
            form.add_error("name", "this merchant already has a room with that name")
        except ValidationError as exc:  # full_clean(): e.g. the (owner, name) clash, on name
            for field, errors in model_validation_errors(exc).items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            return redirect("console:room-detail", room_id=room.pk)
    status = 400 if form.errors else 200
    return render(request, "harness_app/room_form.html", {"form": form}, status=status)


@require_GET
@console_user_required
def room_detail(request: HttpRequest, room_id: int) -> HttpResponse:
    room = selectors.room_get(user=request.user, room_id=room_id)
    return render(request, "harness_app/room_detail.html", _room_detail_context(request, room))


def _room_detail_context(request: HttpRequest, room: Room) -> dict[str, object]:
    return {
        "room": room,
        "products": paginate(request, selectors.products_of_room(room), PRODUCTS_PER_PAGE),
        "api_keys": selectors.api_keys_of_room(room),
        "import_form": CatalogImportForm(),
        "api_key_form": ApiKeyCreateForm(),
        "default_endpoint_name": settings.HAT_DEFAULT_ENDPOINT,
    }


@require_http_methods(["GET", "POST"])
@console_user_required
def room_settings(request: HttpRequest, room_id: int) -> HttpResponse:
    """Deadline, fallback reply, comment limit, serving agent and endpoint (operators and
    the room's merchant)."""
    room = selectors.room_get(user=request.user, room_id=room_id)
    form = RoomSettingsForm(
        request.POST or None,
        initial=RoomSettingsForm.initial_from(room),
        default_endpoint_name=settings.HAT_DEFAULT_ENDPOINT,
        endpoints=endpoints_usable(room=room, user=request.user),
    )
    if request.method == "POST" and form.is_valid():
        try:
            services.room_update(room=room, **form.cleaned_data)
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
            room = selectors.room_get(user=request.user, room_id=room_id)
        else:
            messages.success(request, "Live-reply settings saved.")
            return redirect("console:room-detail", room_id=room.pk)
    status = 400 if form.errors else 200
    context = {
        "room": room,
        "form": form,
        "webhook_secrets": selectors.webhook_secrets_of_room(room),
        "webhook_secret_form": WebhookSecretCreateForm(),
    }
    return render(request, "harness_app/room_settings.html", context, status=status)
