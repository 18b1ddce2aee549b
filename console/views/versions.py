"""One harness version: its rendered components, and publish / rollback (with confirmation;
a publish passes the room's safety gate, console.views.publish_gate)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods

from console.forms.publish_gate import OverrideForm
from console.views.access import console_user_required
from console.views.publish_gate import publish_panel
from experiments_app.selectors.room_pins import running_experiments_pinning
from harness_app import selectors, services
from harness_app.harness.model import Harness as HarnessContent
from harness_app.harness.prompt import (
    PROMPT_LAYOUTS,
    PromptContext,
    TemplateError,
    assemble_prompt,
)
from harness_app.harness.validation import harness_warnings
from harness_app.models import HarnessVersion, Product, Room

SAMPLE_COMMENTS = ("Is this true to size?", "How much is it with the coupon?")


@require_GET
@console_user_required
def version_detail(request: HttpRequest, harness_id: int, number: int) -> HttpResponse:
    harness = selectors.harness_get(user=request.user, harness_id=harness_id)
    version = selectors.harness_version_get(harness=harness, number=number)
    content = selectors.harness_version_content(version)
    requested = request.GET.get("layout", "")
    layout = requested if requested in PROMPT_LAYOUTS else "markdown"
    sample_product = selectors.products_of_room(harness.room).first()
    prompt_preview, prompt_error = _prompt_preview(content, harness.room, sample_product, layout)
    latest = selectors.harness_version_latest(harness)
    return render(
        request,
        "harness_app/version_detail.html",
        {
            "harness": harness,
            "room": harness.room,
            "version": version,
            "content": content,
            "tools": [
                (tool, json.dumps(tool.input_schema, indent=2, ensure_ascii=False))
                for tool in content.tools
            ],
            "warnings": harness_warnings(content),
            "layout": layout,
            "layouts": PROMPT_LAYOUTS,
            "prompt_preview": prompt_preview,
            "prompt_error": prompt_error,
            "sample_product": sample_product,
            "latest": latest,
            "can_publish": version.status == HarnessVersion.Status.DRAFT,
            "can_rollback": _can_rollback(version),
        },
    )


def _prompt_preview(
    content: HarnessContent, room: Room, product: Product | None, layout: str
) -> tuple[str, str]:
    ctx = PromptContext(
        room_name=room.name,
        room_locale=room.locale,
        currency=room.currency,
        product_title=product.title if product else "",
        product_sku=product.sku if product else "",
        product_price=f"{product.price}" if product else "",
        recent_comments=SAMPLE_COMMENTS,
        today=timezone.localdate().isoformat(),
    )
    try:
        return assemble_prompt(content, ctx, layout), ""  # type: ignore[arg-type]
    except TemplateError as exc:
        return "", str(exc)


def _can_rollback(version: HarnessVersion) -> bool:
    return version.status == HarnessVersion.Status.ARCHIVED and version.published_at is not None


@require_http_methods(["GET", "POST"])
@console_user_required
def version_publish(request: HttpRequest, harness_id: int, number: int) -> HttpResponse:
    return _confirm_and_publish(request, harness_id, number, rollback=False)


@require_http_methods(["GET", "POST"])
@console_user_required
def version_rollback(request: HttpRequest, harness_id: int, number: int) -> HttpResponse:
    return _confirm_and_publish(request, harness_id, number, rollback=True)


def _confirm_and_publish(
    request: HttpRequest, harness_id: int, number: int, *, rollback: bool
) -> HttpResponse:
    harness = selectors.harness_get(user=request.user, harness_id=harness_id)
    version = selectors.harness_version_get(harness=harness, number=number)
    if request.method == "POST":
        override = OverrideForm(request.POST) if "override_reason" in request.POST else None
        if override is not None and not override.is_valid():
            messages.error(request, "Nothing changed: say why you publish past the check.")
            return redirect("console:version-publish", harness_id=harness.pk, number=number)
        try:
            if rollback:
                services.harness_rollback(harness=harness, to_number=version.number)
            else:
                services.harness_version_publish(
                    version=version,
                    by=request.user,
                    override_reason=override.cleaned_data["override_reason"] if override else "",
                )
        except services.VersionStateError as exc:
            messages.error(request, f"Nothing changed: {exc}.")
            if not rollback:
                return redirect("console:version-publish", harness_id=harness.pk, number=number)
        else:
            verb = "Rolled back to" if rollback else "Published"
            messages.success(
                request, f"{verb} version {version.number}; room {harness.room.name!r} now runs it."
            )
        return redirect("console:harness-detail", harness_id=harness.pk)
    context: dict[str, Any] = {
        "harness": harness,
        "room": harness.room,
        "version": version,
        "published": harness.published_version,
        "rollback": rollback,
        "allowed": _can_rollback(version)
        if rollback
        else version.status != HarnessVersion.Status.PUBLISHED,
        "override_form": OverrideForm(),
        # A publish moves only the room's default traffic: running experiments keep the
        # versions their arms pin.
        "running_pins": running_experiments_pinning(room=harness.room, user=request.user),
    }
    if not rollback and context["allowed"]:
        context.update(publish_panel(request, version))
    return render(request, "harness_app/version_confirm.html", context)
