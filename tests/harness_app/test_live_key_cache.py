"""The live-room key lookup cache: reused within its TTL, dropped at once by a save in this
process, and expired after the TTL for changes made elsewhere."""

from __future__ import annotations

import pytest
from django.utils import timezone

from harness_app import live_key_cache, selectors, services
from harness_app.models import RoomApiKey

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def empty_cache():  # type: ignore[no-untyped-def]
    live_key_cache.clear()
    yield
    live_key_cache.clear()


def test_lookup_is_reused_then_expires(room, monkeypatch, django_assert_num_queries):
    key, raw = services.api_key_create(room=room, name="k", scopes=["reply"], created_by=None)
    assert selectors.api_key_lookup(raw).pk == key.pk
    with django_assert_num_queries(0):
        assert selectors.api_key_lookup(raw).pk == key.pk
    # revoked by another process (no signal here): still served until the TTL runs out
    RoomApiKey.objects.filter(pk=key.pk).update(revoked_at=timezone.now())
    assert selectors.api_key_lookup(raw) is not None
    now = live_key_cache.time.monotonic()
    monkeypatch.setattr(live_key_cache.time, "monotonic", lambda: now + 2.5)
    assert selectors.api_key_lookup(raw) is None


def test_a_save_in_this_process_clears_it_at_once(room):
    key, raw = services.api_key_create(room=room, name="k", scopes=["reply"], created_by=None)
    assert selectors.api_key_lookup(raw) is not None
    services.api_key_revoke(key=key)
    assert selectors.api_key_lookup(raw) is None


def test_ttl_zero_turns_it_off(room, settings, django_assert_num_queries):
    settings.HAT_LIVE_CONFIG_TTL_S = 0
    _, raw = services.api_key_create(room=room, name="k", scopes=["reply"], created_by=None)
    selectors.api_key_lookup(raw)
    with django_assert_num_queries(1):
        selectors.api_key_lookup(raw)
