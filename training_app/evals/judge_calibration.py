"""How well a judge agrees with humans on labeled pairs: pure statistics.

Inputs are parallel sequences of labels in ``LABELS`` ("one", "tie", "two"): the human
majority of each pair and the judge's both-order verdict. Pairs the judge could not answer
(unparsed) are not in them; they are counted separately (``unparsed``).

- ``agreement_rate``: share of pairs where the judge's verdict equals the human label;
- ``cohens_kappa``: statsmodels' ``stats.inter_rater.cohens_kappa`` on the confusion table
  (None when the expected agreement is 1, e.g. one label everywhere: kappa is undefined);
- ``confusion_matrix``: rows the human label, columns the judge's, in ``LABELS`` order;
- ``bootstrap_intervals``: percentile intervals of agreement and kappa over ``n_resamples``
  resamples of the pairs with replacement, from a seeded numpy generator (resamples whose
  kappa is undefined are left out of the kappa interval);
- ``position_bias_rate``: share of judged pairs whose two orders disagreed;
- ``calibration_report``: all of it as the JSON the ``JudgeCalibration.report`` stores.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from statsmodels.stats.inter_rater import cohens_kappa as _sm_cohens_kappa

LABELS: tuple[str, ...] = ("one", "tie", "two")
DEFAULT_RESAMPLES = 2000
DEFAULT_CONFIDENCE = 0.95


def _check(human: Sequence[str], judge: Sequence[str], labels: Sequence[str]) -> None:
    if len(human) != len(judge):
        raise ValueError(f"{len(human)} human labels but {len(judge)} judge labels")
    unknown = sorted({*human, *judge} - set(labels))
    if unknown:
        raise ValueError(f"labels {unknown} are not in {list(labels)}")


def confusion_matrix(
    human: Sequence[str], judge: Sequence[str], labels: Sequence[str] = LABELS
) -> list[list[int]]:
    """Counts: ``[i][j]`` pairs humans labeled ``labels[i]`` and the judge ``labels[j]``."""
    _check(human, judge, labels)
    index = {label: i for i, label in enumerate(labels)}
    table = [[0] * len(labels) for _ in labels]
    for h, j in zip(human, judge, strict=True):
        table[index[h]][index[j]] += 1
    return table


def agreement_rate(human: Sequence[str], judge: Sequence[str]) -> float | None:
    _check(human, judge, sorted({*human, *judge}))
    if not human:
        return None
    return sum(h == j for h, j in zip(human, judge, strict=True)) / len(human)


def _kappa_of_table(table: np.ndarray) -> float | None:
    total = table.sum()
    if total == 0:
        return None
    expected = float((table.sum(axis=0) * table.sum(axis=1)).sum()) / float(total) ** 2
    if math.isclose(expected, 1.0):
        return None
    return float(_sm_cohens_kappa(table, return_results=False))


def cohens_kappa(
    human: Sequence[str], judge: Sequence[str], labels: Sequence[str] = LABELS
) -> float | None:
    """Cohen's kappa (unweighted) of judge vs humans, by statsmodels."""
    return _kappa_of_table(np.asarray(confusion_matrix(human, judge, labels), dtype=float))


def _percentile_interval(values: np.ndarray, confidence: float) -> list[float] | None:
    if values.size == 0:
        return None
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(values, [tail, 100 - tail])
    return [float(low), float(high)]


def bootstrap_intervals(
    human: Sequence[str],
    judge: Sequence[str],
    *,
    labels: Sequence[str] = LABELS,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
) -> dict[str, list[float] | None]:
    """Percentile bootstrap intervals ``{"agreement": [lo, hi], "kappa": [lo, hi]}``."""
    _check(human, judge, labels)
    if not human:
        return {"agreement": None, "kappa": None}
    index = {label: i for i, label in enumerate(labels)}
    h = np.array([index[x] for x in human])
    j = np.array([index[x] for x in judge])
    k = len(labels)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(h), size=(n_resamples, len(h)))
    agreements = (h[draws] == j[draws]).mean(axis=1)
    kappas: list[float] = []
    for row in draws:
        table = np.bincount(h[row] * k + j[row], minlength=k * k).reshape(k, k).astype(float)
        kappa = _kappa_of_table(table)
        if kappa is not None:
            kappas.append(kappa)
    return {
        "agreement": _percentile_interval(agreements, confidence),
        "kappa": _percentile_interval(np.array(kappas), confidence),
    }


def position_bias_rate(order_disagreements: Sequence[bool]) -> float | None:
    """Share of judged pairs whose two orders disagreed (None with no judged pair)."""
    if not order_disagreements:
        return None
    return sum(bool(x) for x in order_disagreements) / len(order_disagreements)


def calibration_report(
    human: Sequence[str],
    judge: Sequence[str],
    *,
    order_disagreements: Sequence[bool],
    unparsed: int,
    skipped_no_majority: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
) -> dict[str, Any]:
    """The ``JudgeCalibration.report`` JSON."""
    intervals = bootstrap_intervals(
        human, judge, n_resamples=n_resamples, confidence=confidence, seed=seed
    )
    return {
        "n": len(human),
        "agreement": agreement_rate(human, judge),
        "agreement_ci": intervals["agreement"],
        "kappa": cohens_kappa(human, judge),
        "kappa_ci": intervals["kappa"],
        "labels": list(LABELS),
        "confusion": confusion_matrix(human, judge),
        "position_bias_rate": position_bias_rate(order_disagreements),
        "unparsed": unparsed,
        "human_labels": {label: sum(x == label for x in human) for label in LABELS},
        "skipped_no_majority": skipped_no_majority,
        "confidence": confidence,
        "n_resamples": n_resamples,
        "seed": seed,
    }


def human_majority(choices: Sequence[str]) -> str | None:
    """The human label of a pair from its labels (``BlindLabel.Choice`` values): the strict
    plurality of "one" / "tie" / "two", with "both_bad" counting as "tie" (neither side is
    better). None when the top count is shared (no majority) or there is no label."""
    counts = {label: 0 for label in LABELS}
    for choice in choices:
        side = "tie" if choice == "both_bad" else choice
        if side not in counts:
            raise ValueError(f"label {choice!r} is not one, tie, two or both_bad")
        counts[side] += 1
    ranked = sorted(counts.items(), key=lambda kv: kv[1], reverse=True)
    if ranked[0][1] == 0 or ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]
