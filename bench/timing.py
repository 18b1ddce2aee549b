"""Wall-clock timing of a callable: repeat, keep per-call times, report percentiles."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    label: str
    calls: int
    p50_us: float
    p99_us: float
    per_second: float

    def line(self) -> str:
        return (
            f"{self.label:<48} p50 {self.p50_us:>9.1f} µs   p99 {self.p99_us:>9.1f} µs   "
            f"{self.per_second:>10.0f}/s"
        )


def measure(label: str, fn: Callable[[], object], *, calls: int = 300, warmup: int = 20) -> Timing:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    samples.sort()
    p99 = samples[min(len(samples) - 1, int(0.99 * len(samples)))]
    return Timing(label, calls, statistics.median(samples) * 1e6, p99 * 1e6, calls / sum(samples))
