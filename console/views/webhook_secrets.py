"""A room's webhook signing secrets: add, rotate, delete. Values are write-only: no page
ever shows one, and a form with an error does not echo it back."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from console.forms.webhook_secrets import WebhookSecretCreateForm, WebhookSecretRotateForm
from console.views.access import console_user_required
from harness_app import selectors, services


@require_http_methods(["GET", "POST"])
@console_user_required
def webhook_secret_create(request: HttpRequest, room_id: int) -> HttpResponse:
    room = selectors.room_get(user=request.user, room_id=room_id)
    form = WebhookSecretCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            secret = services.webhook_secret_create(
                room=room,
                name=form.cleaned_data["name"],
                value=form.cleaned_data["value"],
                created_by=request.user,
            )
        except services.WebhookSecretError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, exc.message)
        else:
            messages.success(request, f"Webhook secret {secret.name} saved.")
            return redirect("console:room-settings", room_id=room.pk)
    status = 400 if form.errors else 200
    return render(
        request,
        "harness_app/webhook_secret_form.html",
        {"room": room, "form": form, "secret": None},
        status=status,
    )


@require_http_methods(["GET", "POST"])
@console_user_required
def webhook_secret_rotate(request: HttpRequest, room_id: int, secret_id: int) -> HttpResponse:
    room = selectors.room_get(user=request.user, room_id=room_id)
    secret = selectors.webhook_secret_get(room=room, secret_id=secret_id)
    form = WebhookSecretRotateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.webhook_secret_rotate(secret=secret, value=form.cleaned_data["value"])
        except services.WebhookSecretError as exc:
            form.add_error("value", exc.message)
        else:
            messages.success(request, f"Webhook secret {secret.name} rotated.")
            return redirect("console:room-settings", room_id=room.pk)
    status = 400 if form.errors else 200
    return render(
        request,
        "harness_app/webhook_secret_form.html",
        {"room": room, "form": form, "secret": secret},
        status=status,
    )


@require_http_methods(["GET", "POST"])
@console_user_required
def webhook_secret_delete(request: HttpRequest, room_id: int, secret_id: int) -> HttpResponse:
    room = selectors.room_get(user=request.user, room_id=room_id)
    secret = selectors.webhook_secret_get(room=room, secret_id=secret_id)
    if request.method == "POST":
        services.webhook_secret_delete(secret=secret)
        messages.success(request, f"Webhook secret {secret.name} deleted.")
        return redirect("console:room-settings", room_id=room.pk)
    return render(
        request, "harness_app/webhook_secret_delete.html", {"room": room, "secret": secret}
    )
