"""Sufficient statistics of one arm: what the rollups hand to the statistics.

The readout must come from rollups in well under a second at millions of units, so nothing in
`stats/` ever sees raw rows. Every estimator here (Welch, ratio/delta method, CUPED, sequential)
needs only first and second moments, so an arm is summarised by sums over its randomization
units:

* ``y`` - the unit's metric numerator (GMV, item-page views);
* ``x`` - the unit's denominator for ratio metrics (UVs in a room / room-day);
* ``c`` - the unit's pre-period covariate for CUPED (its GMV or views before the experiment).

Sums are additive, so :meth:`SampleStats.merge` combines stats over *disjoint* sets of units
(shards, room-days of different days). It does not turn per-day stats of the same UV into
per-UV totals: ``sum(y_day**2) != (sum y_day)**2`` for one UV; cumulative per-unit stats must
be rolled up from per-unit running totals instead (see docs/STATISTICS.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import numpy.typing as npt

ArrayLike = npt.ArrayLike

_RATIO_FIELDS = ("sum_x", "sum_x2", "sum_xy")
_COVARIATE_FIELDS = ("sum_c", "sum_c2", "sum_yc")


def _dot(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> float:
    """Sum of products without BLAS: a threaded BLAS dot can cost milliseconds of thread
    wake-up on small containers, einsum stays a tight single-threaded loop."""
    return float(np.einsum("i,i->", a, b))


def _sample_variance(n: int, total: float, total_sq: float) -> float:
    """ddof=1 variance from sums; clamped at 0 because ``sum_sq - total**2/n`` can round below."""
    if n < 2:
        return math.nan
    return max(0.0, (total_sq - total * total / n) / (n - 1))


def _sample_covariance(n: int, total_a: float, total_b: float, cross: float) -> float:
    if n < 2:
        return math.nan
    return (cross - total_a * total_b / n) / (n - 1)


@dataclass(frozen=True, slots=True)
class SampleStats:
    """Per-arm sums over randomization units (n units, metric y, optional x and c).

    Ratio fields (``sum_x``, ``sum_x2``, ``sum_xy``) come together or not at all, and so do the
    covariate fields (``sum_c``, ``sum_c2``, ``sum_yc``). ``sum_xc`` is needed only for CUPED on
    a ratio metric and requires both groups.
    """

    n: int
    sum_y: float
    sum_y2: float
    sum_x: float | None = None
    sum_x2: float | None = None
    sum_xy: float | None = None
    sum_c: float | None = None
    sum_c2: float | None = None
    sum_yc: float | None = None
    sum_xc: float | None = None

    def __post_init__(self) -> None:
        if self.n < 0:
            raise ValueError(f"n must be >= 0, got {self.n}")
        for group, name in ((_RATIO_FIELDS, "ratio"), (_COVARIATE_FIELDS, "covariate")):
            present = [getattr(self, f) is not None for f in group]
            if any(present) and not all(present):
                raise ValueError(f"{name} sums {group} must all be given or all be None")
        if self.sum_xc is not None and not (self.has_ratio and self.has_covariate):
            raise ValueError("sum_xc needs both the ratio sums and the covariate sums")

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_arrays(
        cls, y: ArrayLike, x: ArrayLike | None = None, c: ArrayLike | None = None
    ) -> SampleStats:
        """Sums over per-unit arrays (tests, benchmarks, simulations; never the web path)."""
        ya = np.asarray(y, dtype=np.float64)
        if ya.ndim != 1:
            raise ValueError(f"y must be one-dimensional, got shape {ya.shape}")
        xa = None if x is None else np.asarray(x, dtype=np.float64)
        ca = None if c is None else np.asarray(c, dtype=np.float64)
        for name, arr in (("x", xa), ("c", ca)):
            if arr is not None and arr.shape != ya.shape:
                raise ValueError(f"{name} has shape {arr.shape}, y has shape {ya.shape}")
        values: dict[str, Any] = {
            "n": int(ya.size),
            "sum_y": float(ya.sum()),
            "sum_y2": _dot(ya, ya),
        }
        if xa is not None:
            values.update(sum_x=float(xa.sum()), sum_x2=_dot(xa, xa), sum_xy=_dot(xa, ya))
        if ca is not None:
            values.update(sum_c=float(ca.sum()), sum_c2=_dot(ca, ca), sum_yc=_dot(ya, ca))
        if xa is not None and ca is not None:
            values["sum_xc"] = _dot(xa, ca)
        return cls(**values)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> SampleStats:
        """Inverse of :meth:`as_dict` (rollup rows, cached readouts)."""
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown SampleStats fields: {sorted(unknown)}")
        return cls(**{k: v for k, v in data.items() if v is not None})

    def as_dict(self) -> dict[str, float | int | None]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def merge(self, other: SampleStats) -> SampleStats:
        """Stats of the union of two disjoint sets of units (sums add field by field)."""
        values: dict[str, Any] = {}
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if (a is None) != (b is None):
                raise ValueError(f"cannot merge: {f.name} is present on only one side")
            values[f.name] = None if a is None else a + b
        return SampleStats(**values)

    def __add__(self, other: SampleStats) -> SampleStats:
        return self.merge(other)

    @staticmethod
    def combine(parts: Iterable[SampleStats]) -> SampleStats:
        """Merge many disjoint parts (e.g. room-days of several days)."""
        iterator = iter(parts)
        try:
            total = next(iterator)
        except StopIteration:
            raise ValueError("combine() needs at least one SampleStats") from None
        for part in iterator:
            total = total.merge(part)
        return total

    # -- moments ------------------------------------------------------------------------

    @property
    def has_ratio(self) -> bool:
        return self.sum_x is not None

    @property
    def has_covariate(self) -> bool:
        return self.sum_c is not None

    @property
    def mean_y(self) -> float:
        return self.sum_y / self.n if self.n else math.nan

    @property
    def var_y(self) -> float:
        return _sample_variance(self.n, self.sum_y, self.sum_y2)

    def _need(self, value: float | None, group: str) -> float:
        if value is None:
            raise ValueError(f"these SampleStats carry no {group} sums")
        return value

    @property
    def mean_x(self) -> float:
        sum_x = self._need(self.sum_x, "ratio (x)")
        return sum_x / self.n if self.n else math.nan

    @property
    def var_x(self) -> float:
        return _sample_variance(
            self.n, self._need(self.sum_x, "ratio (x)"), self._need(self.sum_x2, "ratio (x)")
        )

    @property
    def cov_xy(self) -> float:
        return _sample_covariance(
            self.n, self._need(self.sum_x, "ratio (x)"), self.sum_y, self._need(self.sum_xy, "x")
        )

    @property
    def mean_c(self) -> float:
        sum_c = self._need(self.sum_c, "covariate (c)")
        return sum_c / self.n if self.n else math.nan

    @property
    def var_c(self) -> float:
        return _sample_variance(
            self.n, self._need(self.sum_c, "covariate (c)"), self._need(self.sum_c2, "c")
        )

    @property
    def cov_yc(self) -> float:
        return _sample_covariance(
            self.n,
            self.sum_y,
            self._need(self.sum_c, "covariate (c)"),
            self._need(self.sum_yc, "c"),
        )

    @property
    def cov_xc(self) -> float:
        return _sample_covariance(
            self.n,
            self._need(self.sum_x, "ratio (x)"),
            self._need(self.sum_c, "covariate (c)"),
            self._need(self.sum_xc, "x-by-covariate (sum_xc)"),
        )
