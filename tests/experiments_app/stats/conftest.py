"""Shared data for the statistics tests: skewed per-unit samples like GMV per UV."""

from __future__ import annotations

import numpy as np
import pytest


def zero_inflated_lognormal(
    rng: np.random.Generator, n: int, *, buy_rate: float = 0.2, scale: float = 1.0
) -> np.ndarray:
    """Mostly zeros, lognormal purchasers: the shape of GMV per UV at test-friendly n."""
    return np.where(rng.random(n) < buy_rate, scale * rng.lognormal(3.0, 0.8, n), 0.0)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240501)
