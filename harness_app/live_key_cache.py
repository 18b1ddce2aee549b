"""A short-lived, per-process cache of live-room key lookups.

Every live reply authenticates with its room key; the lookup loads the key, the room, its
harness, the published version (without content) and the reply endpoint in one query, and that
query's ORM cost is a third of the reply path's own budget. The live-room backend sends the same
key for every comment, so the bundle is kept for ``HAT_LIVE_CONFIG_TTL_S`` seconds (default 2).

Any save or delete of a key, room, harness, version or endpoint clears this process's cache at
once (signals, connected in ``HarnessAppConfig.ready``); other processes see the change within
the TTL. A revoked key therefore stops working at once where it was revoked and within two
seconds everywhere. Set the TTL to 0 to turn the cache off.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings

from harness_app.models import RoomApiKey

_entries: dict[str, tuple[float, RoomApiKey]] = {}
MAX_ENTRIES = 10_000


def get(key_hash: str) -> RoomApiKey | None:
    entry = _entries.get(key_hash)
    if entry is None:
        return None
    expires, key = entry
    if time.monotonic() >= expires:
        _entries.pop(key_hash, None)
        return None
    return key


def put(key_hash: str, key: RoomApiKey) -> None:
    ttl = float(settings.HAT_LIVE_CONFIG_TTL_S)
    if ttl <= 0:
        return
    if len(_entries) >= MAX_ENTRIES:
        _entries.clear()
    _entries[key_hash] = (time.monotonic() + ttl, key)


def clear(*args: Any, **kwargs: Any) -> None:
    """Signal receiver: any change to live configuration drops every cached lookup."""
    _entries.clear()


def connect_invalidation() -> None:
    from django.db.models.signals import post_delete, post_save

    from harness_app.models import Harness, HarnessVersion, ReactBaseline, Room
    from training_app.models import ModelEndpoint

    for model in (RoomApiKey, Room, Harness, HarnessVersion, ReactBaseline, ModelEndpoint):
        post_save.connect(clear, sender=model, dispatch_uid=f"live-key-cache-{model.__name__}")
        post_delete.connect(
            clear, sender=model, dispatch_uid=f"live-key-cache-del-{model.__name__}"
        )
