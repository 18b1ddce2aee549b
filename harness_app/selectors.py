"""Reads for rooms, catalog, API keys, webhook secrets and harness versions.

Tenancy lives here: every room-scoped read goes through ``rooms_visible_to`` so a merchant
only ever sees their own rooms, and anything else is a 404 (never a 403 that leaks existence).
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from django.db.models import Q, QuerySet
from django.http import Http404
from django.utils import timezone

from console.roles import is_merchant, is_operator
from harness_app import live_key_cache
from harness_app.harness.diff import Change, semantic_diff
from harness_app.harness.errors import FieldError, join_path
from harness_app.harness.model import Harness as HarnessContent
from harness_app.harness.serialization import harness_from_dict
from harness_app.models import Harness, HarnessVersion, Product, Room, RoomApiKey, WebhookSecret

API_KEY_PREFIX_LEN = 8


def rooms_visible_to(user: Any) -> QuerySet[Room]:
    rooms = Room.objects.select_related("owner", "harness", "harness__published_version")
    if is_operator(user):
        return rooms.all()
    if is_merchant(user):
        return rooms.filter(owner=user)
    return rooms.none()


def room_get(*, user: Any, room_id: int) -> Room:
    try:
        return rooms_visible_to(user).get(pk=room_id)
    except (Room.DoesNotExist, ValueError, TypeError):
        raise Http404("No such room.") from None


def products_of_room(room: Room) -> QuerySet[Product]:
    return Product.objects.filter(room=room).order_by("sku")


def room_catalog_snapshot(room: Room, *, at: Any = None) -> dict[str, Any]:
    """The room's catalog at one moment as plain data (the format of
    ``training_app.pipeline.catalog_snapshot``): the products on sale then and the coupons
    active then, money as ``"89.00"`` strings. Training generates gold trajectories from it."""
    now = at or timezone.now()
    on_sale = (Q(sale_starts_at__isnull=True) | Q(sale_starts_at__lte=now)) & (
        Q(sale_ends_at__isnull=True) | Q(sale_ends_at__gt=now)
    )
    active = (Q(starts_at__isnull=True) | Q(starts_at__lte=now)) & (
        Q(ends_at__isnull=True) | Q(ends_at__gt=now)
    )
    return {
        "room_name": room.name,
        "room_locale": room.locale,
        "currency": room.currency,
        "today": now.date().isoformat(),
        "products": [
            {
                "sku": p.sku,
                "title": p.title,
                "price": f"{p.price:.2f}",
                "stock": p.stock,
                "attributes": p.attributes,
            }
            for p in room.products.filter(on_sale).order_by("sku")
        ],
        "coupons": [
            {
                "code": c.code,
                "description": c.description,
                "amount": f"{c.amount:.2f}",
                "threshold": f"{c.threshold:.2f}",
                "sku": c.sku,
                "ends_at": c.ends_at.isoformat() if c.ends_at else None,
            }
            for c in room.coupons.filter(active).order_by("code")
        ],
    }


def product_get(*, room: Room, sku: str) -> Product:
    try:
        return products_of_room(room).get(sku=sku)
    except Product.DoesNotExist:
        raise Http404(f"No product with sku {sku!r} in this room.") from None


def harnesses_visible_to(user: Any) -> QuerySet[Harness]:
    return Harness.objects.select_related("room", "room__owner", "published_version").filter(
        room__in=rooms_visible_to(user)
    )


def harness_get(*, user: Any, harness_id: int) -> Harness:
    try:
        return harnesses_visible_to(user).get(pk=harness_id)
    except (Harness.DoesNotExist, ValueError, TypeError):
        raise Http404("No such harness.") from None


def harness_versions(harness: Harness) -> QuerySet[HarnessVersion]:
    """Version history, newest first, without the (large) content column."""
    return (
        HarnessVersion.objects.filter(harness=harness)
        .select_related("author", "parent")
        .defer("content")
        .order_by("-number")
    )


def harness_version_get(*, harness: Harness, number: int) -> HarnessVersion:
    try:
        return HarnessVersion.objects.select_related("author", "parent", "harness").get(
            harness=harness, number=number
        )
    except (HarnessVersion.DoesNotExist, ValueError, TypeError):
        raise Http404(f"Harness {harness.pk} has no version {number}.") from None


def harness_version_latest(harness: Harness) -> HarnessVersion | None:
    return (
        HarnessVersion.objects.select_related("author", "parent")
        .filter(harness=harness)
        .order_by("-number")
        .first()
    )


def harness_version_edit_source(
    *, harness: Harness, latest: HarnessVersion | None
) -> HarnessVersion | None:
    """The version a new edit starts from by default.

    The latest version, unless it is not a draft and something else is live: after a
    rollback the newest version is the one that was rolled back *from*, and building on it
    would silently bring back what the rollback removed. Then the published version is the
    default (the operator can still pick any version with ``?from=N``).
    """
    published = harness.published_version
    if (
        latest is not None
        and published is not None
        and latest.pk != published.pk
        and latest.status != HarnessVersion.Status.DRAFT
    ):
        return published
    return latest


def harness_version_content(version: HarnessVersion) -> HarnessContent:
    return harness_from_dict(version.content)


def harness_versions_diff(
    *, harness: Harness, from_number: int, to_number: int
) -> tuple[HarnessVersion, HarnessVersion, list[Change]]:
    old = harness_version_get(harness=harness, number=from_number)
    new = harness_version_get(harness=harness, number=to_number)
    changes = semantic_diff(harness_version_content(old), harness_version_content(new))
    return old, new, changes


def api_keys_of_room(room: Room) -> QuerySet[RoomApiKey]:
    return RoomApiKey.objects.filter(room=room).select_related("created_by").order_by("-created_at")


def api_key_get(*, room: Room, key_id: int) -> RoomApiKey:
    try:
        return api_keys_of_room(room).get(pk=key_id)
    except (RoomApiKey.DoesNotExist, ValueError, TypeError):
        raise Http404("No such API key for this room.") from None


def api_key_hash(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


def api_key_lookup(raw_key: str) -> RoomApiKey | None:
    """The active key matching ``raw_key`` (``hat_<prefix>_<secret>``), or None."""
    parts = raw_key.split("_")
    if len(parts) != 3 or parts[0] != "hat" or len(parts[1]) != API_KEY_PREFIX_LEN:
        return None
    digest = api_key_hash(raw_key)
    cached = live_key_cache.get(digest)
    if cached is not None:
        return cached
    # One query loads everything a live reply needs about the room (not the version's
    # content: parsed harnesses are cached by version id).
    key = (
        RoomApiKey.objects.select_related(
            "room", "room__harness", "room__harness__published_version", "room__reply_endpoint"
        )
        .defer("room__harness__published_version__content")
        .filter(prefix=parts[1], revoked_at__isnull=True)
        .first()
    )
    if key is None:
        return None
    if not hmac.compare_digest(key.key_hash, digest):
        return None
    live_key_cache.put(digest, key)
    return key


def webhook_secrets_of_room(room: Room) -> QuerySet[WebhookSecret]:
    """Names and dates only: the encrypted value is never loaded for a listing."""
    return (
        WebhookSecret.objects.filter(room=room)
        .select_related("created_by")
        .defer("value_encrypted")
        .order_by("name")
    )


def webhook_secret_get(*, room: Room, secret_id: int) -> WebhookSecret:
    try:
        return WebhookSecret.objects.select_related("created_by").get(room=room, pk=secret_id)
    except (WebhookSecret.DoesNotExist, ValueError, TypeError):
        raise Http404("No such webhook secret for this room.") from None


def missing_webhook_secrets(*, room_id: int, content: HarnessContent) -> list[FieldError]:
    """One error per webhook whose ``secret_ref`` names no secret of the room: such a
    version may be saved as a draft (a warning), but not published."""
    refs = [
        (index, tool.executor.secret_ref)
        for index, tool in enumerate(content.tools)
        if tool.executor.kind == "webhook" and tool.executor.secret_ref
    ]
    if not refs:
        return []
    existing = set(
        WebhookSecret.objects.filter(
            room_id=room_id, name__in={ref for _, ref in refs}
        ).values_list("name", flat=True)
    )
    return [
        FieldError(
            join_path("tools", index, "executor", "secret_ref"),
            f"webhook secret {ref!r} does not exist in this room; add it under the room's "
            f"Webhook secrets before publishing",
        )
        for index, ref in refs
        if ref not in existing
    ]
