"""A small cache keyed by object identity, that keeps what is reused.

Harness components are immutable by convention, and an augmented harness shares most of its
objects with the original, so "have I checked this exact object?" is the cheapest exact cache
key there is. The cache holds a reference to each key object, so an id cannot be reused by a
new object while its entry exists.

Eviction is a single-bit "second chance" sweep: when the cache is full, entries looked up
since the last sweep (the original harness's objects, hit by every example) survive and the
rest (objects one example made and dropped) go. Hits stay as cheap as a dict lookup, and the
cache stays small: every entry it keeps alive is an object the garbage collector must scan.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Generic, TypeVar

V = TypeVar("V")
# For caches keyed by the objects of a whole data set: a BFCL category has ~1,000 cases of
# 4-5 tools, and a run cycles through all of them, so a smaller cache would evict every
# entry just before its next use.
DATASET_CACHE_SIZE: Final = 16384
T = TypeVar("T")


class IdentityCache(Generic[V]):
    def __init__(self, capacity: int = 512) -> None:
        self._capacity = capacity
        # id -> [key object, value, looked up since the last sweep]
        self._entries: dict[int, list[object]] = {}

    def get(self, key: object) -> V | None:
        entry = self._entries.get(id(key))
        if entry is None or entry[0] is not key:
            return None
        entry[2] = True
        return entry[1]  # type: ignore[return-value]

    def put(self, key: object, value: V) -> None:
        if len(self._entries) >= self._capacity:
            kept = {k: e for k, e in self._entries.items() if e[2]}
            if len(kept) > self._capacity // 2:
                kept = {}  # everything is hot: start over rather than sweep every put
            for entry in kept.values():
                entry[2] = False
            self._entries = kept
        self._entries[id(key)] = [key, value, False]

    def __len__(self) -> int:
        return len(self._entries)


class DerivedCache:
    """Memoised edits: ``derive(base, key, build)`` returns the object ``build()`` made when
    ``base`` (by identity) was edited with ``key`` before. The same edit of the same object
    then yields the *same* object, so everything cached about it downstream (schema checks,
    validators) hits. ``build`` must be a pure function of ``base`` and ``key``.

    An edit is stored the second time it is asked for: a data set of a thousand cases, each
    edited at random, rarely repeats an edit, and storing every one would keep thousands of
    dead objects alive for the garbage collector to scan again and again (it promoted them
    to its oldest generation and ran full collections over them). The first requests are
    remembered as hashes (plain ints, which the collector does not track); a hash collision
    only stores an edit early, never returns a wrong one (a hit checks ``base`` by
    identity and ``key`` by equality)."""

    def __init__(self, capacity: int = 2048) -> None:
        self._capacity = capacity
        self._entries: dict[tuple[int, object], tuple[object, object]] = {}
        self._asked: set[int] = set()

    def derive(self, base: object, key: object, build: Callable[[], T]) -> T:
        slot = (id(base), key)
        entry = self._entries.get(slot)
        if entry is not None and entry[0] is base:
            return entry[1]  # type: ignore[return-value]
        value = build()
        asked = hash(slot)
        if asked not in self._asked:
            if len(self._asked) >= 4 * self._capacity:
                self._asked.clear()
            self._asked.add(asked)
            return value
        if len(self._entries) >= self._capacity:
            self._entries.clear()
        self._entries[slot] = (base, value)
        return value
