"""Adjusted p-values when one readout tests several metrics (or several days).

Why: GMV per UV and item-page views are two tests; reading "any p < 0.05" inflates false
positives. Holm (1979) controls the family-wise error rate without assumptions and is never
worse than Bonferroni; Benjamini-Hochberg (1995) controls the false discovery rate under
independence or positive dependence, which fits metrics that move together. Both are returned
as adjusted p-values (compare them to alpha directly), matching statsmodels' ``multipletests``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

Correction = Literal["holm", "bh"]


def _as_p_values(p_values: Sequence[float] | npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p-values must be one-dimensional, got shape {p.shape}")
    if np.any((p < 0) | (p > 1)) or np.any(np.isnan(p)):
        raise ValueError("p-values must lie in [0, 1] (drop undefined metrics first)")
    return p


def holm(p_values: Sequence[float] | npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Holm step-down: p_(i) * (m - i + 1), made monotone, capped at 1."""
    p = _as_p_values(p_values)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate(p[order] * (m - np.arange(m)))
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted


def benjamini_hochberg(
    p_values: Sequence[float] | npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    """BH step-up: min over j >= i of p_(j) * m / j, capped at 1."""
    p = _as_p_values(p_values)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    stepped = np.minimum.accumulate(scaled[::-1])[::-1]
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted


def adjust_p_values(
    p_values: Sequence[float] | npt.NDArray[np.float64], method: Correction = "holm"
) -> npt.NDArray[np.float64]:
    if method == "holm":
        return holm(p_values)
    if method == "bh":
        return benjamini_hochberg(p_values)
    raise ValueError(f"method must be 'holm' or 'bh', got {method!r}")
