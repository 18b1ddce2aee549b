"""Deterministic bucketing of randomization units (pure Python, no Django).

    bucket(salt, unit) = int.from_bytes(SHA-256(f"{salt}|{unit}")[:8], "big") % 10_000

An experiment hashes each unit three times with independent salts:

* the **layer** salt (shared by the experiments of one layer): each experiment of the layer
  owns a contiguous bucket range ``[layer_start, layer_end)``, disjoint from the others', so a
  unit falls into at most one of them (mutual exclusion);
* the **coverage** salt: the unit is in the experiment iff its bucket < coverage (out of
  10,000). Raising coverage keeps every unit that was in and adds new ones;
* the **arm** salt: arms own contiguous ranges of the arm bucket in arm order
  (weights 8000/2000 -> control [0, 8000), treatment [8000, 10000)).

Because coverage and arm use different salts, ramping coverage never moves a unit between
arms. Changing weights would move units whose arm bucket sits between the old and new
boundaries; the persisted first assignment (``Assignment``) keeps them where they were.
The modulo bias of 2**64 % 10_000 is < 1e-15 and irrelevant.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from itertools import accumulate

BUCKETS = 10_000


def bucket(salt: str, unit: str) -> int:
    """The unit's bucket in [0, 10_000) under ``salt``."""
    digest = hashlib.sha256(f"{salt}|{unit}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % BUCKETS


def layer_salt(layer: str) -> str:
    return f"layer:{layer}"


def arm_index_for_bucket(value: int, weights: Sequence[int]) -> int:
    """Index of the arm whose contiguous range holds ``value`` (weights out of 10,000)."""
    if sum(weights) != BUCKETS:
        raise ValueError(f"weights must sum to {BUCKETS}, got {sum(weights)}")
    if not 0 <= value < BUCKETS:
        raise ValueError(f"bucket must be in [0, {BUCKETS}), got {value}")
    return bisect_right(list(accumulate(weights)), value)


def unit_key(unit: str, *, room_id: int, uv_id: str, day: date) -> str:
    """The randomization unit of a UV in a room on a day, for each design."""
    if unit == "uv":
        return uv_id
    if unit == "room":
        return str(room_id)
    if unit == "room_day":
        return f"{room_id}:{day.isoformat()}"
    raise ValueError(f"unknown randomization unit {unit!r}")


@dataclass(frozen=True, slots=True)
class Allocation:
    """Everything that decides a unit's arm in one phase of one experiment."""

    arm_salt: str
    coverage_salt: str
    layer: str
    layer_start: int
    layer_end: int
    coverage: int
    weights: tuple[int, ...]

    def __post_init__(self) -> None:
        if sum(self.weights) != BUCKETS or any(w <= 0 for w in self.weights):
            raise ValueError(f"weights must be positive and sum to {BUCKETS}: {self.weights}")
        if not 0 <= self.layer_start < self.layer_end <= BUCKETS:
            raise ValueError(f"bad layer range [{self.layer_start}, {self.layer_end})")
        if not 1 <= self.coverage <= BUCKETS:
            raise ValueError(f"coverage must be in [1, {BUCKETS}], got {self.coverage}")

    def in_layer(self, unit: str) -> bool:
        if self.layer_start == 0 and self.layer_end == BUCKETS:
            return True  # the whole layer: skip a hash on the hot path
        return self.layer_start <= bucket(layer_salt(self.layer), unit) < self.layer_end

    def covered(self, unit: str) -> bool:
        return self.coverage == BUCKETS or bucket(self.coverage_salt, unit) < self.coverage

    def arm_index(self, unit: str) -> int:
        return arm_index_for_bucket(bucket(self.arm_salt, unit), self.weights)

    def assign(self, unit: str) -> int | None:
        """The arm index of ``unit``, or None when it is outside the layer range or coverage."""
        if not self.in_layer(unit) or not self.covered(unit):
            return None
        return self.arm_index(unit)


def ranges_overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two half-open bucket ranges intersect."""
    return a[0] < b[1] and b[0] < a[1]
