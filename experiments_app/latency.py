"""Latency statistics of a replay: percentiles, the share under a deadline, a summary per
concurrency level. Pure functions over numbers (no Django), checked against numpy.

Percentiles use linear interpolation between closest ranks (Hyndman & Fan type 7, numpy's
default ``method="linear"``): for sorted values x_0..x_{n-1} the q-th percentile is
x_i + (h - i)(x_{i+1} - x_i) with h = (n - 1) q / 100 and i = floor(h). It is written out
here rather than delegated so the definition a report uses is explicit and tested.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

# The report's serving target: every reply within 15 s.
DEADLINE_MS = 15_000.0


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) of ``values``, or None when there are none."""
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"q must be in [0, 100], got {q}")
    ordered = np.sort(np.asarray(values, dtype=float))
    if ordered.size == 0:
        return None
    if np.isnan(ordered).any():
        raise ValueError("values contain NaN")
    h = (ordered.size - 1) * q / 100.0
    low = math.floor(h)
    high = min(low + 1, ordered.size - 1)
    return float(ordered[low] + (h - low) * (ordered[high] - ordered[low]))


def share_under(values: Sequence[float], threshold: float) -> float | None:
    """The fraction of ``values`` strictly below ``threshold`` (None when there are none)."""
    array = np.asarray(values, dtype=float)
    if array.size == 0:
        return None
    return float(np.count_nonzero(array < threshold) / array.size)


@dataclass(frozen=True)
class LevelSummary:
    """One concurrency level of a replay; ``as_json`` is what a LatencyReport stores."""

    concurrency: int
    requests: int
    p50_ms: float | None
    p95_ms: float | None
    max_ms: float | None
    share_under_15s: float | None
    ttft_p50_ms: float | None
    ttft_p95_ms: float | None
    fallbacks: int
    wall_s: float
    latencies_ms: list[float]
    ttfts_ms: list[float]

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def summarize_level(
    *,
    concurrency: int,
    latencies_ms: Sequence[float],
    ttfts_ms: Sequence[float],
    fallbacks: int,
    wall_s: float,
) -> LevelSummary:
    """Summarize one level: latency P50/P95/max and share under 15 s over every request;
    TTFT percentiles over the requests that reached a model (a fallback before any model
    call has no first token)."""
    latencies = [round(float(v), 3) for v in latencies_ms]
    ttfts = [round(float(v), 3) for v in ttfts_ms]
    return LevelSummary(
        concurrency=concurrency,
        requests=len(latencies),
        p50_ms=_rounded(percentile(latencies, 50)),
        p95_ms=_rounded(percentile(latencies, 95)),
        max_ms=max(latencies) if latencies else None,
        share_under_15s=share_under(latencies, DEADLINE_MS),
        ttft_p50_ms=_rounded(percentile(ttfts, 50)),
        ttft_p95_ms=_rounded(percentile(ttfts, 95)),
        fallbacks=fallbacks,
        wall_s=round(wall_s, 3),
        latencies_ms=latencies,
        ttfts_ms=ttfts,
    )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
