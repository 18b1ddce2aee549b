"""Sample-ratio mismatch: are the arms the sizes the configured weights promise?

Why: a mismatch (say 80.4/19.6 on an 80/20 split over two million UVs) means assignment or
logging is broken - bots filtered in one arm, a redirect losing treatment users - and every
effect estimate is then suspect. Pearson's chi-square goodness-of-fit test of the observed
unit counts against N * w_a / sum(w), flagged at p < 0.001 (the industry convention: with
daily checks a looser threshold would cry wolf). Count *randomization units*: rooms or
room-days under cluster randomization, not the UVs inside them, whose counts are not
multinomial.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import special

SRM_THRESHOLD = 0.001


@dataclass(frozen=True, slots=True)
class SrmResult:
    arms: tuple[str, ...]
    observed: tuple[int, ...]
    expected: tuple[float, ...]
    statistic: float
    df: int
    p_value: float
    threshold: float

    @property
    def flagged(self) -> bool:
        return self.p_value < self.threshold

    @property
    def message(self) -> str:
        """The banner text: which arm is off by how much."""
        total = sum(self.observed)
        parts = ", ".join(
            f"{arm} {obs / total:.2%} (expected {exp / total:.2%})"
            for arm, obs, exp in zip(self.arms, self.observed, self.expected, strict=True)
        )
        if self.flagged:
            return (
                f"Sample ratio mismatch (chi-square p = {self.p_value:.2g} < {self.threshold}): "
                f"{parts}. Check assignment and event logging before trusting any effect."
            )
        return (
            f"No sample ratio mismatch: chi-square p = {self.p_value:.2g}, flagged only below "
            f"p < {self.threshold} (a strict threshold, since the check runs at every look): "
            f"{parts}."
        )


def srm_test(
    observed: Mapping[str, int],
    weights: Mapping[str, float],
    *,
    threshold: float = SRM_THRESHOLD,
) -> SrmResult:
    """Chi-square goodness of fit of unit counts per arm against the configured weights."""
    if set(observed) != set(weights):
        raise ValueError(
            f"arms differ: counts for {sorted(observed)}, weights for {sorted(weights)}"
        )
    if len(weights) < 2:
        raise ValueError("an SRM check needs at least two arms")
    arms = tuple(weights)
    w = np.array([float(weights[a]) for a in arms])
    if np.any(w <= 0) or not np.all(np.isfinite(w)):
        raise ValueError(f"weights must be positive and finite, got {dict(weights)}")
    counts = np.array([int(observed[a]) for a in arms], dtype=np.float64)
    if np.any(counts < 0):
        raise ValueError(f"counts must be non-negative, got {dict(observed)}")
    total = counts.sum()
    expected = total * w / w.sum()
    if total == 0:
        return SrmResult(
            arms, tuple(0 for _ in arms), tuple(expected), 0.0, len(arms) - 1, 1.0, threshold
        )
    statistic = float(np.sum((counts - expected) ** 2 / expected))
    df = len(arms) - 1
    return SrmResult(
        arms=arms,
        observed=tuple(int(c) for c in counts),
        expected=tuple(float(e) for e in expected),
        statistic=statistic,
        df=df,
        p_value=float(special.chdtrc(df, statistic)),
        threshold=threshold,
    )
