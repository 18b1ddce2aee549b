"""A room's live-backend API keys: create (the raw key is shown once), revoke."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_http_methods

from console.forms.api_keys import ApiKeyCreateForm
from console.views.access import console_user_required
from harness_app import selectors, services


@require_http_methods(["GET", "POST"])
@console_user_required
def api_key_create(request: HttpRequest, room_id: int) -> HttpResponse:
    room = selectors.room_get(user=request.user, room_id=room_id)
    form = ApiKeyCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        key, raw_key = services.api_key_create(
            room=room,
            name=form.cleaned_data["name"],
            scopes=sorted(form.cleaned_data["scopes"]),
            created_by=request.user,
        )
        # Rendered (not redirected) so the raw key never sits in a session or a URL; it is
        # never stored, so this response is the only place it ever appears.
        response = render(
            request,
            "harness_app/api_key_created.html",
            {"room": room, "key": key, "raw_key": raw_key},
        )
        add_never_cache_headers(response)
        return response
    return render(request, "harness_app/api_key_form.html", {"room": room, "form": form})


@require_http_methods(["GET", "POST"])
@console_user_required
def api_key_revoke(request: HttpRequest, room_id: int, key_id: int) -> HttpResponse:
    room = selectors.room_get(user=request.user, room_id=room_id)
    key = selectors.api_key_get(room=room, key_id=key_id)
    if request.method == "POST":
        if key.revoked_at is None:
            services.api_key_revoke(key=key)
            messages.success(request, f"Key {key.name!r} (hat_{key.prefix}_…) revoked.")
        return redirect("console:room-detail", room_id=room.pk)
    return render(request, "harness_app/api_key_revoke.html", {"room": room, "key": key})
