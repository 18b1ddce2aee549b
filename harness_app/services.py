"""Writes for rooms, catalog, API keys, webhook secrets and the harness registry.

Callers pass objects they already loaded through ``selectors`` (which enforce tenancy) and a
``permissions`` check; these functions enforce the invariants: validation before any write,
no lost updates (a stale base version is a conflict), one published version per harness.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from harness_app import webhook_secrets
from harness_app.catalog_import import PRODUCT_VALUE_FIELDS, ImportFormat, parse_catalog
from harness_app.harness.archive import import_harness_zip
from harness_app.harness.errors import FieldError, HarnessValidationError
from harness_app.harness.json_limits import json_value_problem
from harness_app.harness.model import Harness as HarnessContent
from harness_app.harness.serialization import component_hashes, harness_from_dict, harness_to_dict
from harness_app.harness.validation import ensure_valid, validate_harness
from harness_app.models import (
    Harness,
    HarnessVersion,
    Product,
    ReactBaseline,
    Room,
    RoomApiKey,
    WebhookSecret,
)
from harness_app.selectors import API_KEY_PREFIX_LEN, api_key_hash, missing_webhook_secrets

DEFAULT_REACT_PROMPT = (
    "You are the host of a live-commerce stream. Answer the viewer's comment helpfully and "
    "briefly. Use the tools to look up facts; never invent prices or stock.\n"
    "Think step by step. Use this format:\nThought: ...\nAction: <tool name>\n"
    "Action Input: <JSON arguments>\nObservation: ...\n... (repeat)\nFinal Answer: <reply>"
)


class StaleBaseVersion(Exception):
    """The edit was based on an older version than the harness's latest one."""

    def __init__(self, *, base: int | None, latest: int) -> None:
        self.base = base
        self.latest = latest
        super().__init__(
            f"your edit is based on version {base if base is not None else 'none'}, but version "
            f"{latest} is newer; reload version {latest}, re-apply your change and save again"
        )


class VersionStateError(Exception):
    """A publish or rollback that the version's state does not allow."""


class PublishBlocked(VersionStateError):
    """The version's content cannot run in its room yet (a webhook names a secret the room
    does not have); ``errors`` name the fields."""

    def __init__(self, errors: list[FieldError]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{e.path}: {e.message}" for e in errors))


class WebhookSecretError(Exception):
    """A webhook secret write that was refused; ``field`` names the input at fault."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


# --- rooms and catalog -------------------------------------------------------------------


@transaction.atomic
def room_create(*, owner: Any, name: str, locale: str = "en-US", currency: str = "USD") -> Room:
    """A room with its (empty) harness and a default ReAct baseline."""
    room = Room(owner=owner, name=name, locale=locale, currency=currency)
    room.full_clean()
    room.save()
    Harness.objects.create(room=room, name=f"{name} host")
    ReactBaseline.objects.create(room=room, system_prompt=DEFAULT_REACT_PROMPT)
    return room


@transaction.atomic
def room_update(*, room: Room, **fields: Any) -> Room:
    for key, value in fields.items():
        setattr(room, key, value)
    room.full_clean()
    room.save()
    return room


@transaction.atomic
def product_upsert(*, room: Room, sku: str, **fields: Any) -> Product:
    product = Product.objects.filter(room=room, sku=sku).first() or Product(room=room, sku=sku)
    for key, value in fields.items():
        setattr(product, key, value)
    product.full_clean()
    product.save()
    return product


@transaction.atomic
def product_delete(*, product: Product) -> None:
    product.delete()


@dataclass(frozen=True)
class CatalogImportResult:
    created: int
    updated: int


@transaction.atomic
def products_import(*, room: Room, data: bytes, fmt: ImportFormat) -> CatalogImportResult:
    """Upsert every row by sku, or nothing at all (raises CatalogImportError)."""
    rows = parse_catalog(data, fmt)
    existing = {p.sku: p for p in Product.objects.select_for_update().filter(room=room)}
    to_create: list[Product] = []
    to_update: list[Product] = []
    fields = PRODUCT_VALUE_FIELDS
    now = timezone.now()
    for row in rows:
        product = existing.get(row.sku)
        if product is None:
            product = Product(room=room, sku=row.sku)
            to_create.append(product)
        else:
            to_update.append(product)
        for name in fields:
            setattr(product, name, getattr(row, name))
        product.updated_at = now
    Product.objects.bulk_create(to_create)
    Product.objects.bulk_update(to_update, [*fields, "updated_at"])
    return CatalogImportResult(created=len(to_create), updated=len(to_update))


# --- API keys ----------------------------------------------------------------------------


@transaction.atomic
def api_key_create(
    *, room: Room, name: str, scopes: list[str], created_by: Any
) -> tuple[RoomApiKey, str]:
    """A new key; the raw key is returned once and never stored."""
    allowed = set(RoomApiKey.Scope.values)
    unknown = sorted(set(scopes) - allowed)
    if not scopes or unknown:
        raise ValueError(f"scopes must be a non-empty subset of {sorted(allowed)}; got {scopes}")
    prefix = secrets.token_hex(API_KEY_PREFIX_LEN // 2)
    raw = f"hat_{prefix}_{secrets.token_urlsafe(32).replace('_', '')}"
    key = RoomApiKey.objects.create(
        room=room,
        name=name,
        prefix=prefix,
        key_hash=api_key_hash(raw),
        scopes=sorted(set(scopes)),
        created_by=created_by,
    )
    return key, raw


@transaction.atomic
def api_key_revoke(*, key: RoomApiKey) -> RoomApiKey:
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at", "updated_at"])
    return key


def api_key_touch(*, key: RoomApiKey) -> None:
    """Record use at most once a minute, so authentication stays a single cheap query."""
    now = timezone.now()
    if key.last_used_at is None or (now - key.last_used_at).total_seconds() > 60:
        RoomApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
        key.last_used_at = now  # the instance may be a cached one: don't touch again soon


# --- webhook secrets ---------------------------------------------------------------------

WEBHOOK_SECRET_MIN_CHARS = 16
WEBHOOK_SECRET_MAX_CHARS = 4096


def _check_secret_value(value: str) -> None:
    if not WEBHOOK_SECRET_MIN_CHARS <= len(value) <= WEBHOOK_SECRET_MAX_CHARS:
        raise WebhookSecretError(
            "value",
            f"must be {WEBHOOK_SECRET_MIN_CHARS} to {WEBHOOK_SECRET_MAX_CHARS} characters "
            f"(got {len(value)}); use a long random string",
        )


@transaction.atomic
def webhook_secret_create(*, room: Room, name: str, value: str, created_by: Any) -> WebhookSecret:
    """Store a new secret of ``room``, encrypted; the value is never readable again."""
    _check_secret_value(value)
    secret = WebhookSecret(
        room=room, name=name, value_encrypted=webhook_secrets.encrypt(value), created_by=created_by
    )
    try:
        secret.full_clean(
            exclude=["room", "created_by"], validate_unique=False, validate_constraints=False
        )
    except DjangoValidationError as exc:
        field, messages = next(iter(exc.message_dict.items()))
        raise WebhookSecretError(field, messages[0]) from None
    try:
        with transaction.atomic():
            secret.save()
    except IntegrityError:
        raise WebhookSecretError(
            "name", f"this room already has a webhook secret named {name!r}; rotate it instead"
        ) from None
    return secret


@transaction.atomic
def webhook_secret_rotate(*, secret: WebhookSecret, value: str) -> WebhookSecret:
    """Replace the value; webhooks sign with the new one from their next call."""
    _check_secret_value(value)
    secret.value_encrypted = webhook_secrets.encrypt(value)
    secret.rotated_at = timezone.now()
    secret.save(update_fields=["value_encrypted", "rotated_at", "updated_at"])
    return secret


@transaction.atomic
def webhook_secret_delete(*, secret: WebhookSecret) -> None:
    """Delete at once (how a leaked secret is revoked); webhooks naming it then fail with an
    error observation until a secret of that name exists again."""
    secret.delete()


# --- harness registry --------------------------------------------------------------------


def harness_content_errors(*, content: HarnessContent) -> list[FieldError]:
    """Every problem ``harness_version_create`` would refuse ``content`` for (no write).

    The editor calls it for a save whose forms already have field errors, so that one save
    reports all of its problems instead of revealing the rule errors only after the
    field errors are fixed.
    """
    problem = json_value_problem(harness_to_dict(content))
    if problem is not None:
        return [FieldError(problem.path, problem.message)]
    return validate_harness(content, address_policy=webhook_secrets.address_policy())


@transaction.atomic
def harness_version_create(
    *,
    harness: Harness,
    content: HarnessContent,
    base_version: int | None,
    author: Any,
    message: str = "",
) -> HarnessVersion:
    """Store ``content`` as a new draft on top of ``base_version``.

    Raises HarnessValidationError (nothing saved) or StaleBaseVersion when another writer
    saved a newer version since the caller loaded ``base_version``.
    """
    document = harness_to_dict(content)
    # Whatever it was written in (JSON, YAML, a zip, the editor): no U+0000 (PostgreSQL
    # cannot store it) and no nesting past the API's JSON limit (checked first: the schema
    # validator recurses).
    problem = json_value_problem(document)
    if problem is not None:
        raise HarnessValidationError([FieldError(problem.path, problem.message)])
    ensure_valid(content, address_policy=webhook_secrets.address_policy())
    locked = Harness.objects.select_for_update().get(pk=harness.pk)
    latest = (
        HarnessVersion.objects.filter(harness=locked)
        .order_by("-number")
        .only("id", "number")
        .first()
    )
    latest_number = latest.number if latest else None
    if base_version != latest_number:
        raise StaleBaseVersion(base=base_version, latest=latest_number or 0)
    hashes = component_hashes(content)
    try:
        with transaction.atomic():
            return HarnessVersion.objects.create(
                harness=locked,
                number=(latest_number or 0) + 1,
                parent=latest,
                author=author,
                message=message[:500],
                status=HarnessVersion.Status.DRAFT,
                content=document,
                skills_hash=hashes["skills"],
                tools_hash=hashes["tools"],
                prompt_hash=hashes["prompt"],
                hooks_hash=hashes["hooks"],
            )
    except IntegrityError:
        # A concurrent writer took the number first (databases without row locks).
        newest = HarnessVersion.objects.filter(harness=locked).order_by("-number").first()
        raise StaleBaseVersion(base=base_version, latest=newest.number if newest else 0) from None


@transaction.atomic
def harness_version_import_zip(
    *, harness: Harness, data: bytes, base_version: int | None, author: Any, message: str = ""
) -> HarnessVersion:
    content = import_harness_zip(data)
    return harness_version_create(
        harness=harness, content=content, base_version=base_version, author=author, message=message
    )


@transaction.atomic
def harness_version_publish(
    *, version: HarnessVersion, override_reason: str = "", by: Any = None
) -> HarnessVersion:
    """Make ``version`` the one published version of its harness, atomically, if the room's
    publish gate lets it (``training_app.services.publish_gate``; ``override_reason``: an
    operator publishing a version its safety check blocked)."""
    return _publish(version=version, gated=True, override_reason=override_reason, by=by)


def _publish(
    *, version: HarnessVersion, gated: bool, override_reason: str = "", by: Any = None
) -> HarnessVersion:
    harness = Harness.objects.select_for_update().get(pk=version.harness_id)
    version = HarnessVersion.objects.select_for_update().get(pk=version.pk)
    if version.status == HarnessVersion.Status.PUBLISHED:
        raise VersionStateError(f"version {version.number} is already published")
    missing = missing_webhook_secrets(
        room_id=harness.room_id, content=harness_from_dict(version.content)
    )
    if missing:
        raise PublishBlocked(missing)
    if gated:
        from training_app.services.publish_gate import publish_gate_enforce

        version.harness = harness
        publish_gate_enforce(version=version, override_reason=override_reason, by=by)
    HarnessVersion.objects.filter(harness=harness, status=HarnessVersion.Status.PUBLISHED).update(
        status=HarnessVersion.Status.ARCHIVED, updated_at=timezone.now()
    )
    version.status = HarnessVersion.Status.PUBLISHED
    version.published_at = timezone.now()
    version.save(update_fields=["status", "published_at", "updated_at"])
    harness.published_version = version
    harness.save(update_fields=["published_version", "updated_at"])
    return version


@transaction.atomic
def harness_rollback(*, harness: Harness, to_number: int) -> HarnessVersion:
    """Publish an older version that was published before."""
    target = HarnessVersion.objects.filter(harness=harness, number=to_number).first()
    if target is None:
        raise VersionStateError(f"harness has no version {to_number}")
    if target.published_at is None:
        raise VersionStateError(
            f"version {to_number} was never published; publish it instead of rolling back to it"
        )
    # A version that was live before goes back without a new safety check.
    return _publish(version=target, gated=False)
