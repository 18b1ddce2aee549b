"""Deterministic bucketing: committed test vectors, contiguous ranges, coverage ramps that
never reshuffle arms, mutually exclusive layers (pure module, no database)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from experiments_app.assignment import (
    BUCKETS,
    Allocation,
    arm_index_for_bucket,
    bucket,
    ranges_overlap,
    unit_key,
)

VECTORS = Path(__file__).resolve().parents[2] / "experiments_app/testdata/assignment_vectors.json"


def independent_bucket(salt: str, unit: str) -> int:
    """The spec written out with hashlib alone: first 8 bytes of SHA-256, big-endian, % 10k."""
    return int(hashlib.sha256(f"{salt}|{unit}".encode()).hexdigest()[:16], 16) % 10_000


def independent_arm(value: int, weights: list[int]) -> int:
    edge = 0
    for index, weight in enumerate(weights):
        edge += weight
        if value < edge:
            return index
    raise AssertionError("weights must sum to 10,000")


def test_committed_vectors_match_the_spec_and_the_module():
    document = json.loads(VECTORS.read_text("utf-8"))
    assert document["buckets"] == BUCKETS
    assert len(document["vectors"]) >= 20
    for vector in document["vectors"]:
        salt, unit, expected = vector["salt"], vector["unit"], vector["bucket"]
        assert independent_bucket(salt, unit) == expected, vector
        assert bucket(salt, unit) == expected, vector
        for weights_key, arm in vector["arms"].items():
            weights = [int(w) for w in weights_key.split("/")]
            assert independent_arm(expected, weights) == arm, vector
            assert arm_index_for_bucket(expected, weights) == arm, vector


def test_arms_own_contiguous_bucket_ranges():
    weights = [8000, 2000]
    arms = [arm_index_for_bucket(b, weights) for b in range(BUCKETS)]
    assert arms[:8000] == [0] * 8000 and arms[8000:] == [1] * 2000
    with pytest.raises(ValueError, match="sum to 10000"):
        arm_index_for_bucket(5, [5000, 4000])


def test_split_is_close_to_the_weights():
    allocation = Allocation("arm-salt", "cov-salt", "default", 0, BUCKETS, BUCKETS, (8000, 2000))
    counts = Counter(allocation.assign(f"uv-{i}") for i in range(40_000))
    # 40,000 Bernoulli(0.2) draws: SD of the treated share is 0.2%; 4 SD band
    assert abs(counts[1] / 40_000 - 0.2) < 0.008


def test_raising_coverage_keeps_every_unit_and_never_reshuffles_arms():
    units = [f"uv-{i}" for i in range(5_000)]
    arms: dict[str, int] = {}
    previous: set[str] = set()
    for coverage in (500, 2_000, 5_000, 10_000):
        allocation = Allocation("a", "c", "default", 0, BUCKETS, coverage, (5000, 5000))
        included = {u for u in units if allocation.assign(u) is not None}
        assert previous <= included  # ramping up only adds units
        for unit in included:
            arm = allocation.assign(unit)
            assert arms.setdefault(unit, arm) == arm  # ... and never moves one between arms
        assert abs(len(included) / len(units) - coverage / BUCKETS) < 0.03
        previous = included
    assert previous == set(units)


def test_layers_make_experiments_mutually_exclusive():
    first = Allocation("a1", "c1", "homepage", 0, 5_000, BUCKETS, (5000, 5000))
    second = Allocation("a2", "c2", "homepage", 5_000, BUCKETS, BUCKETS, (5000, 5000))
    other_layer = Allocation("a3", "c3", "pricing", 0, BUCKETS, BUCKETS, (5000, 5000))
    units = [f"uv-{i}" for i in range(4_000)]
    in_first = {u for u in units if first.assign(u) is not None}
    in_second = {u for u in units if second.assign(u) is not None}
    assert not in_first & in_second
    assert in_first | in_second == set(units)  # the two ranges cover the layer
    # another layer is orthogonal: it sees both halves
    in_other = {u for u in units if other_layer.assign(u) is not None}
    assert in_other & in_first and in_other & in_second
    assert ranges_overlap((0, 5000), (4999, 6000)) and not ranges_overlap((0, 5000), (5000, 6000))


def test_unit_keys_per_design():
    from datetime import date

    day = date(2026, 11, 30)
    assert unit_key("uv", room_id=7, uv_id="u-1", day=day) == "u-1"
    assert unit_key("room", room_id=7, uv_id="u-1", day=day) == "7"
    assert unit_key("room_day", room_id=7, uv_id="u-1", day=day) == "7:2026-11-30"
    with pytest.raises(ValueError):
        unit_key("session", room_id=7, uv_id="u-1", day=day)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"weights": (5000, 4000)}, "sum to 10000"),
        ({"weights": (10_000, 0)}, "positive"),
        ({"coverage": 0}, "coverage"),
        ({"layer_start": 6000, "layer_end": 5000}, "layer range"),
    ],
)
def test_allocation_rejects_bad_configurations(kwargs, match):  # type: ignore[no-untyped-def]
    values = {
        "arm_salt": "a",
        "coverage_salt": "c",
        "layer": "default",
        "layer_start": 0,
        "layer_end": BUCKETS,
        "coverage": BUCKETS,
        "weights": (5000, 5000),
    } | kwargs
    with pytest.raises(ValueError, match=match):
        Allocation(**values)
