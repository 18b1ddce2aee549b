"""Statistics of offline evaluation runs (pure numpy/scipy): bootstrap intervals for scores,
paired comparisons of two runs on the same items, the T1/T2 gap, and detected errors under
held-out harness edits with the relative reduction between two models.

Everything resamples *items* (the unit a set is drawn in) with a seeded
``numpy.random.default_rng(seed)``, so the same inputs always give the same interval. An item
with several values (a Harness-Variant item's variants, T1 and T2 of one base item) is one
cluster: the cluster is resampled whole (``clusters=``), which is the right variance when
variants of one item are correlated.

- ``bootstrap_mean``: mean with a percentile bootstrap interval (cluster-aware: the estimate
  is total / count over the resampled clusters, the pooled mean).
- ``paired_bootstrap``: mean of ``b - a`` over the items both runs scored, percentile
  interval from resampling items, and a two-sided p-value from the null-centred bootstrap
  (Efron & Tibshirani 1993, 16.4): the differences are shifted to mean 0 and
  ``p = (1 + #{|mean*| >= |observed|}) / (B + 1)``.
- ``mcnemar_exact``: exact McNemar test on paired pass/fail (two-sided binomial on the
  discordant pairs), as ``statsmodels.stats.contingency_tables.mcnemar(exact=True)``.
- ``variant_gap``: T1 score minus T2 score, paired by base item when both sets hold the same
  base items, with its interval and p-value.
- ``detected_errors`` / ``error_reduction``: docs/EVALUATION_QA.md defines them.

Degenerate inputs (no items) give NaN fields rather than exceptions, so a page on an empty
run renders; mismatched pairings raise ``PairingError`` naming the items.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal, TypeVar

import numpy as np
from numpy.typing import NDArray
from scipy import stats as scipy_stats

DEFAULT_B: Final = 2000
DEFAULT_CONFIDENCE: Final = 0.95
# Resample in blocks of at most this many drawn indices (bounded memory for big sets).
_BLOCK_INDICES: Final = 2_000_000
ErrorDefinition = Literal["edit_induced", "variant_failures"]
ERROR_DEFINITIONS: Final = ("edit_induced", "variant_failures")


class PairingError(ValueError):
    """Two runs do not cover the same items; the message names some of the differences."""


_Scalable = TypeVar("_Scalable", "BootstrapEstimate", "PairedDifference", "ErrorReduction")


def _scaled(value: _Scalable, factor: float, *extra: str) -> _Scalable:
    """``value`` with its estimate, interval ends and the ``extra`` fields times ``factor``."""
    fields = ("estimate", "ci_low", "ci_high", *extra)
    return replace(value, **{name: getattr(value, name) * factor for name in fields})


@dataclass(frozen=True)
class BootstrapEstimate:
    """A statistic with its percentile bootstrap interval. ``n`` counts resampling units
    (items, or clusters when clustered)."""

    estimate: float
    ci_low: float
    ci_high: float
    n: int
    confidence: float
    b: int
    seed: int

    def scaled(self, factor: float) -> BootstrapEstimate:
        """The same estimate in other units (``scaled(100)``: percentage points)."""
        return _scaled(self, factor)


@dataclass(frozen=True)
class PairedDifference:
    """``mean_b - mean_a`` over ``n`` paired units, its interval and two-sided p-value."""

    estimate: float
    ci_low: float
    ci_high: float
    p_value: float
    mean_a: float
    mean_b: float
    n: int
    confidence: float
    b: int
    seed: int
    paired: bool = True

    def scaled(self, factor: float) -> PairedDifference:
        return _scaled(self, factor, "mean_a", "mean_b")


@dataclass(frozen=True)
class McNemarResult:
    """Exact McNemar test of paired pass/fail. ``only_a``: items A passed and B failed;
    ``only_b``: the reverse. ``statistic`` is ``min(only_a, only_b)`` (statsmodels' exact
    statistic)."""

    only_a: int
    only_b: int
    both_pass: int
    both_fail: int
    statistic: int
    p_value: float

    @property
    def n(self) -> int:
        return self.only_a + self.only_b + self.both_pass + self.both_fail


@dataclass(frozen=True)
class ErrorCounts:
    """Detected errors of one model under held-out edits, per base item."""

    definition: ErrorDefinition
    per_item: Mapping[str, int]
    variants: Mapping[str, int]

    @property
    def total(self) -> int:
        return sum(self.per_item.values())

    @property
    def variant_total(self) -> int:
        return sum(self.variants.values())


@dataclass(frozen=True)
class ErrorReduction:
    """``(errors_reference - errors_candidate) / errors_reference`` with its interval.
    ``b_undefined`` resamples had no reference error and were left out of the interval."""

    estimate: float
    ci_low: float
    ci_high: float
    errors_reference: int
    errors_candidate: int
    n: int
    confidence: float
    b: int
    b_undefined: int
    seed: int
    definition: ErrorDefinition

    def scaled(self, factor: float) -> ErrorReduction:
        return _scaled(self, factor)


# --- resampling ------------------------------------------------------------------------------


def _check(b: int, confidence: float) -> None:
    if b < 1:
        raise ValueError(f"b must be at least 1, got {b}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def _index_blocks(rng: np.random.Generator, n: int, b: int) -> list[NDArray[np.intp]]:
    """``b`` resamples of ``n`` indices drawn with replacement, in row blocks."""
    rows = max(1, _BLOCK_INDICES // max(n, 1))
    return [rng.integers(0, n, size=(min(rows, b - start), n)) for start in range(0, b, rows)]


def _resampled_sums(
    columns: Sequence[NDArray[np.float64]], b: int, seed: int
) -> list[NDArray[np.float64]]:
    """Per column, the ``b`` sums of that column over the same resampled units."""
    n = len(columns[0])
    rng = np.random.default_rng(seed)
    out: list[list[NDArray[np.float64]]] = [[] for _ in columns]
    for block in _index_blocks(rng, n, b):
        for target, column in zip(out, columns, strict=True):
            target.append(column[block].sum(axis=1))
    return [np.concatenate(parts) for parts in out]


def _interval(draws: NDArray[np.float64], confidence: float) -> tuple[float, float]:
    alpha = 1 - confidence
    low, high = np.quantile(draws, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def _clustered(
    values: Sequence[float] | NDArray[np.float64], clusters: Sequence[str] | None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(sum, count) per resampling unit."""
    array: NDArray[np.float64] = np.asarray(values, dtype=np.float64)
    if clusters is None:
        return array, np.ones(len(array), dtype=np.float64)
    if len(clusters) != len(array):
        raise ValueError(f"{len(clusters)} cluster labels for {len(array)} values")
    labels = {label: i for i, label in enumerate(dict.fromkeys(clusters))}
    index = np.fromiter((labels[c] for c in clusters), dtype=np.intp, count=len(clusters))
    sums = np.bincount(index, weights=array, minlength=len(labels)).astype(np.float64)
    counts = np.bincount(index, minlength=len(labels)).astype(np.float64)
    return sums, counts


def bootstrap_mean(
    values: Sequence[float] | NDArray[np.float64],
    *,
    clusters: Sequence[str] | None = None,
    b: int = DEFAULT_B,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> BootstrapEstimate:
    """The mean of ``values`` with a percentile bootstrap interval (items resampled, or
    whole clusters when ``clusters`` labels each value)."""
    _check(b, confidence)
    sums, counts = _clustered(values, clusters)
    if len(sums) == 0:
        return BootstrapEstimate(math.nan, math.nan, math.nan, 0, confidence, b, seed)
    estimate = float(sums.sum() / counts.sum())
    total, count = _resampled_sums([sums, counts], b, seed)
    low, high = _interval(total / count, confidence)
    return BootstrapEstimate(estimate, low, high, len(sums), confidence, b, seed)


def _pair(
    a: Mapping[str, float], b: Mapping[str, float], allow_unmatched: bool
) -> tuple[list[str], NDArray[np.float64], NDArray[np.float64]]:
    only_a = sorted(set(a) - set(b))
    only_b = sorted(set(b) - set(a))
    if (only_a or only_b) and not allow_unmatched:
        parts = []
        if only_a:
            parts.append(f"{len(only_a)} only in the first ({', '.join(only_a[:5])})")
        if only_b:
            parts.append(f"{len(only_b)} only in the second ({', '.join(only_b[:5])})")
        raise PairingError(
            "paired comparisons need the same items in both runs: " + "; ".join(parts)
        )
    keys = [k for k in a if k in b]
    return (
        keys,
        np.array([float(a[k]) for k in keys], dtype=float),
        np.array([float(b[k]) for k in keys], dtype=float),
    )


def paired_bootstrap(
    a: Mapping[str, float],
    b: Mapping[str, float],
    *,
    resamples: int = DEFAULT_B,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    allow_unmatched: bool = False,
) -> PairedDifference:
    """``mean(b) - mean(a)`` over items scored in both runs (keys: item ids), with a
    percentile interval and a two-sided null-centred bootstrap p-value. Raises
    ``PairingError`` when the runs cover different items, unless ``allow_unmatched`` (then
    the common items are compared)."""
    _check(resamples, confidence)
    _keys, va, vb = _pair(a, b, allow_unmatched)
    return _paired(va, vb, resamples, seed, confidence)


def _paired(
    va: NDArray[np.float64], vb: NDArray[np.float64], b: int, seed: int, confidence: float
) -> PairedDifference:
    n = len(va)
    if n == 0:
        nan = math.nan
        return PairedDifference(nan, nan, nan, nan, nan, nan, 0, confidence, b, seed)
    diff = vb - va
    observed = float(diff.mean())
    centred = diff - observed
    total, null_total = _resampled_sums([diff, centred], b, seed)
    low, high = _interval(total / n, confidence)
    # A tolerance for float noise: a resample that ties the observed difference counts.
    extreme = np.abs(null_total / n) >= abs(observed) - 1e-12
    p_value = float((1 + np.count_nonzero(extreme)) / (b + 1))
    return PairedDifference(
        observed,
        low,
        high,
        min(1.0, p_value),
        float(va.mean()),
        float(vb.mean()),
        n,
        confidence,
        b,
        seed,
    )


def mcnemar_exact(
    a: Mapping[str, bool], b: Mapping[str, bool], *, allow_unmatched: bool = False
) -> McNemarResult:
    """Exact McNemar test of two runs' pass/fail on the same items:
    ``p = min(1, 2 * BinomCDF(min(only_a, only_b); only_a + only_b, 1/2))``, and 1 when no
    pair is discordant."""
    _keys, va, vb = _pair(
        {k: float(bool(v)) for k, v in a.items()},
        {k: float(bool(v)) for k, v in b.items()},
        allow_unmatched,
    )
    pa, pb = va.astype(bool), vb.astype(bool)
    only_a = int(np.count_nonzero(pa & ~pb))
    only_b = int(np.count_nonzero(~pa & pb))
    statistic = min(only_a, only_b)
    discordant = only_a + only_b
    p_value = (
        1.0
        if discordant == 0
        else min(1.0, 2.0 * float(scipy_stats.binom.cdf(statistic, discordant, 0.5)))
    )
    return McNemarResult(
        only_a=only_a,
        only_b=only_b,
        both_pass=int(np.count_nonzero(pa & pb)),
        both_fail=int(np.count_nonzero(~pa & ~pb)),
        statistic=statistic,
        p_value=p_value,
    )


def by_base_item(
    values: Mapping[str, float], base_ids: Mapping[str, str] | None = None
) -> dict[str, float]:
    """Per base item, the mean of its items' values (``base_ids``: item id -> base id; an
    item missing from it is its own base)."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for item_id, value in values.items():
        key = (base_ids or {}).get(item_id, item_id)
        sums[key] = sums.get(key, 0.0) + float(value)
        counts[key] = counts.get(key, 0) + 1
    return {key: sums[key] / counts[key] for key in sums}


def variant_gap(
    t1: Mapping[str, float],
    t2: Mapping[str, float],
    *,
    t1_base_ids: Mapping[str, str] | None = None,
    t2_base_ids: Mapping[str, str] | None = None,
    resamples: int = DEFAULT_B,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> PairedDifference:
    """Score on T1 minus score on T2 (the report's T1/T2 gap is its absolute value).

    Both sets are first reduced to one value per base item. When they hold the same base
    items the gap is paired (resampling base items; ``paired=True``); otherwise the two sets
    are resampled independently (``paired=False``) and the p-value is that of the
    null-centred two-sample bootstrap.
    """
    _check(resamples, confidence)
    one = by_base_item(t1, t1_base_ids)
    two = by_base_item(t2, t2_base_ids)
    if set(one) == set(two):
        keys = list(one)
        result = _paired(
            np.array([two[k] for k in keys]),
            np.array([one[k] for k in keys]),
            resamples,
            seed,
            confidence,
        )
        return result
    return _unpaired_difference(
        np.array(list(two.values()), dtype=float),
        np.array(list(one.values()), dtype=float),
        resamples,
        seed,
        confidence,
    )


def _unpaired_difference(
    va: NDArray[np.float64], vb: NDArray[np.float64], b: int, seed: int, confidence: float
) -> PairedDifference:
    """``mean(vb) - mean(va)`` for independent samples."""
    if len(va) == 0 or len(vb) == 0:
        nan = math.nan
        return PairedDifference(nan, nan, nan, nan, nan, nan, 0, confidence, b, seed, False)
    observed = float(vb.mean() - va.mean())
    (sum_a, null_a) = _resampled_sums([va, va - va.mean()], b, seed)
    (sum_b, null_b) = _resampled_sums([vb, vb - vb.mean()], b, seed + 1)
    draws = sum_b / len(vb) - sum_a / len(va)
    low, high = _interval(draws, confidence)
    null = null_b / len(vb) - null_a / len(va)
    extreme = np.abs(null) >= abs(observed) - 1e-12
    p_value = float((1 + np.count_nonzero(extreme)) / (b + 1))
    return PairedDifference(
        observed,
        low,
        high,
        min(1.0, p_value),
        float(va.mean()),
        float(vb.mean()),
        min(len(va), len(vb)),
        confidence,
        b,
        seed,
        False,
    )


# --- detected errors under held-out edits ------------------------------------------------------


def detected_errors(
    original: Mapping[str, bool],
    variants: Mapping[str, bool],
    *,
    variant_base_ids: Mapping[str, str] | None = None,
    definition: ErrorDefinition = "edit_induced",
) -> ErrorCounts:
    """Errors one model makes under held-out harness edits, per base item.

    ``original``: base item id -> passed on the original harness (the Live-Stream run).
    ``variants``: variant item id -> passed under its held-out variant (T1 and/or T2 runs),
    with ``variant_base_ids`` mapping variant item ids to base ids.

    ``edit_induced`` (default): a variant item is an error when it fails while its base item
    passes on the original harness: a failure the edit caused. ``variant_failures``: every
    failed variant item is an error. Every variant's base item must be in ``original``
    (``PairingError`` otherwise); base items with no variant count 0 errors of 0 variants.
    """
    if definition not in ERROR_DEFINITIONS:
        raise ValueError(f"definition must be one of {', '.join(ERROR_DEFINITIONS)}")
    mapping = variant_base_ids or {}
    unknown = sorted({mapping.get(k, k) for k in variants} - set(original))
    if unknown:
        raise PairingError(
            f"{len(unknown)} variant base items have no original result ({', '.join(unknown[:5])})"
        )
    per_item = {key: 0 for key in original}
    counted = {key: 0 for key in original}
    for item_id, passed in variants.items():
        key = mapping.get(item_id, item_id)
        counted[key] += 1
        if not passed and (definition == "variant_failures" or original[key]):
            per_item[key] += 1
    return ErrorCounts(definition, per_item, counted)


def error_reduction(
    reference: ErrorCounts,
    candidate: ErrorCounts,
    *,
    resamples: int = DEFAULT_B,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> ErrorReduction:
    """Relative reduction of detected errors from ``reference`` (e.g. Base) to ``candidate``
    (e.g. HAT): ``(E_ref - E_cand) / E_ref``, with a percentile interval from resampling base
    items (both models on the same resample). Resamples with ``E_ref = 0`` are undefined and
    left out (counted in ``b_undefined``); when more than half are, the interval is NaN.
    Both counts must cover the same base items and use the same definition."""
    _check(resamples, confidence)
    if reference.definition != candidate.definition:
        raise ValueError(
            f"both counts must use one definition ({reference.definition} vs "
            f"{candidate.definition})"
        )
    keys, ref, cand = _pair(
        {k: float(v) for k, v in reference.per_item.items()},
        {k: float(v) for k, v in candidate.per_item.items()},
        False,
    )
    e_ref, e_cand = int(ref.sum()), int(cand.sum())
    estimate = (e_ref - e_cand) / e_ref if e_ref else math.nan
    if not keys:
        return ErrorReduction(
            math.nan,
            math.nan,
            math.nan,
            0,
            0,
            0,
            confidence,
            resamples,
            resamples,
            seed,
            reference.definition,
        )
    ref_draws, cand_draws = _resampled_sums([ref, cand], resamples, seed)
    defined = ref_draws > 0
    undefined = int(resamples - np.count_nonzero(defined))
    if np.count_nonzero(defined) * 2 <= resamples:
        low = high = math.nan
    else:
        ratios = (ref_draws[defined] - cand_draws[defined]) / ref_draws[defined]
        low, high = _interval(ratios, confidence)
    return ErrorReduction(
        estimate,
        low,
        high,
        e_ref,
        e_cand,
        len(keys),
        confidence,
        resamples,
        undefined,
        seed,
        reference.definition,
    )
