"""Latency percentiles against numpy.percentile and hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from experiments_app.latency import percentile, share_under, summarize_level

# Tolerance: the function and numpy do the same float arithmetic in a different order.
REL = 1e-12


def test_hand_computed_percentiles() -> None:
    # h = (n - 1) q / 100; [1, 2, 3, 4]: P50 -> h=1.5 -> 2 + 0.5*(3-2) = 2.5
    assert percentile([4, 1, 3, 2], 50) == 2.5
    # P95 -> h = 2.85 -> 3 + 0.85*(4-3) = 3.85
    assert percentile([1, 2, 3, 4], 95) == pytest.approx(3.85, rel=REL)
    assert percentile([1, 2, 3, 4], 0) == 1 and percentile([1, 2, 3, 4], 100) == 4
    # the report's serving numbers are P50/P95 of 100 requests: P95 sits between the 95th
    # and 96th smallest (h = 94.05)
    values = list(range(1, 101))
    assert percentile(values, 95) == pytest.approx(95.05, rel=REL)
    assert percentile([7.0], 95) == 7.0


def test_empty_and_invalid_input() -> None:
    assert percentile([], 50) is None
    assert share_under([], 15_000) is None
    with pytest.raises(ValueError, match="q must be in"):
        percentile([1, 2], 101)
    with pytest.raises(ValueError, match="NaN"):
        percentile([1.0, float("nan")], 50)


@given(
    st.lists(st.floats(min_value=0, max_value=1e6, allow_nan=False), min_size=1, max_size=200),
    st.floats(min_value=0, max_value=100),
)
def test_matches_numpy_linear_percentile(values: list[float], q: float) -> None:
    expected = float(np.percentile(np.asarray(values), q, method="linear"))
    assert percentile(values, q) == pytest.approx(expected, rel=REL, abs=1e-9)


def test_share_under_is_strict() -> None:
    assert share_under([14_999.9, 15_000.0, 15_000.1, 1.0], 15_000) == 0.5


def test_summarize_level_against_numpy() -> None:
    rng = np.random.default_rng(7)
    latencies = rng.lognormal(mean=8.0, sigma=0.6, size=100)  # ms, a long right tail
    ttfts = latencies[:90] / 10
    summary = summarize_level(
        concurrency=4,
        latencies_ms=latencies.tolist(),
        ttfts_ms=ttfts.tolist(),
        fallbacks=3,
        wall_s=12.3456,
    )
    stored = np.asarray(summary.latencies_ms)
    assert summary.requests == 100 and summary.fallbacks == 3 and summary.wall_s == 12.346
    assert summary.p50_ms == pytest.approx(np.percentile(stored, 50), abs=1e-3)
    assert summary.p95_ms == pytest.approx(np.percentile(stored, 95), abs=1e-3)
    assert summary.max_ms == stored.max()
    assert summary.share_under_15s == np.mean(stored < 15_000)
    assert summary.ttft_p50_ms == pytest.approx(np.percentile(summary.ttfts_ms, 50), abs=1e-3)
    assert summary.ttft_p95_ms == pytest.approx(np.percentile(summary.ttfts_ms, 95), abs=1e-3)
    assert set(summary.as_json()) >= {
        "concurrency",
        "p50_ms",
        "p95_ms",
        "max_ms",
        "share_under_15s",
        "ttft_p50_ms",
        "ttft_p95_ms",
        "fallbacks",
        "latencies_ms",
    }


def test_summary_without_model_calls_has_no_ttft() -> None:
    summary = summarize_level(
        concurrency=1, latencies_ms=[5.0, 6.0], ttfts_ms=[], fallbacks=2, wall_s=0.1
    )
    assert summary.ttft_p50_ms is None and summary.ttft_p95_ms is None
    assert summary.share_under_15s == 1.0
