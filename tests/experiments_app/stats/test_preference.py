"""Blind-test statistics against independent computations: the report's 35/64/1 (win rate,
Wilson interval and sign test by hand), the pair majority, the position-bias check, Fleiss'
kappa and Krippendorff's alpha computed by hand from their definitions."""

from __future__ import annotations

import math
from collections import Counter
from itertools import permutations

import numpy as np
import pytest

from experiments_app.stats.preference import Label, pair_outcome, preference_result

Z95 = 1.959963984540054


def _labels(wins: int, ties: int, losses: int) -> list[Label]:
    choices = ["a"] * wins + ["tie"] * ties + ["b"] * losses
    return [Label(f"p{i}", "h1", c, a_on_left=i % 2 == 0) for i, c in enumerate(choices)]  # type: ignore[arg-type]


def _wilson(k: int, n: int) -> tuple[float, float]:
    p = k / n
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n**2)) / (1 + Z95**2 / n)
    return centre - half, centre + half


def test_the_reports_35_64_1() -> None:
    result = preference_result(_labels(35, 64, 1))
    assert (result.wins, result.ties, result.losses, result.pairs) == (35, 64, 1, 100)
    assert result.win_rate.estimate == pytest.approx(35 / 36)  # 97.2%
    low, high = _wilson(35, 36)
    assert (result.win_rate.low, result.win_rate.high) == pytest.approx((low, high))
    assert round(low, 3) == 0.858 and round(high, 3) == 0.995
    # two-sided sign test: 2 * P(X <= 1), X ~ Bin(36, 1/2)
    assert result.sign_test_p == pytest.approx(2 * (1 + 36) / 2**36)
    assert 1.0e-9 < result.sign_test_p < 1.2e-9
    assert result.tie_rate == pytest.approx(0.64)
    # score (wins + ties/2) / n = 0.67; the bootstrap interval agrees with the normal one
    values = np.array([1.0] * 35 + [0.5] * 64 + [0.0])
    se = values.std() / math.sqrt(values.size)
    assert result.score.estimate == pytest.approx(0.67)
    assert result.score.low == pytest.approx(0.67 - Z95 * se, abs=0.01)
    assert result.score.high == pytest.approx(0.67 + Z95 * se, abs=0.01)
    # one label per pair: no agreement to measure
    assert math.isnan(result.fleiss_kappa) and math.isnan(result.krippendorff_alpha)


def test_a_pair_counts_by_its_majority() -> None:
    assert pair_outcome(["a", "a", "b"]) == "win"
    assert pair_outcome(["a", "b"]) == "tie"
    assert pair_outcome(["both_bad", "b", "both_bad"]) == "tie"
    assert pair_outcome(["b"]) == "loss"


def test_position_bias() -> None:
    # every labeler picks whatever is on the left: half the picks are A, all are "left"
    always_left = [
        Label(f"p{i}", "h", "a" if i % 2 else "b", a_on_left=bool(i % 2)) for i in range(40)
    ]
    biased = preference_result(always_left)
    assert biased.left_share == 1.0 and biased.position_bias_p == pytest.approx(2 / 2**40)
    fair = preference_result([Label(f"p{i}", "h", "a", a_on_left=bool(i % 2)) for i in range(40)])
    assert fair.left_share == 0.5 and fair.position_bias_p == 1.0


def _fleiss_by_hand(rows: list[list[str]], categories: list[str]) -> float:
    n = len(rows[0])
    counts = [[row.count(c) for c in categories] for row in rows]
    p_j = [sum(r[j] for r in counts) / (len(rows) * n) for j in range(len(categories))]
    p_i = [(sum(x * x for x in r) - n) / (n * (n - 1)) for r in counts]
    p_bar, p_e = sum(p_i) / len(rows), sum(p * p for p in p_j)
    return (p_bar - p_e) / (1 - p_e)


def _krippendorff_by_hand(units: list[list[str]]) -> float:
    """Nominal alpha from the coincidence matrix (Krippendorff 2011, section C)."""
    o: Counter[tuple[str, str]] = Counter()
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for c, k in permutations(values, 2):
            o[(c, k)] += 1 / (m - 1)
    n_c: Counter[str] = Counter()
    for (c, _k), w in o.items():
        n_c[c] += w
    n = sum(n_c.values())
    d_o = sum(w for (c, k), w in o.items() if c != k)
    d_e = sum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k) / (n - 1)
    return 1 - d_o / d_e


def test_agreement_matches_the_definitions() -> None:
    rows = [
        ["a", "a", "a"],
        ["a", "a", "tie"],
        ["b", "b", "b"],
        ["tie", "tie", "a"],
        ["a", "b", "tie"],
        ["both_bad", "both_bad", "b"],
    ]
    labels = [
        Label(f"p{i}", f"h{j}", choice, a_on_left=(i + j) % 2 == 0)  # type: ignore[arg-type]
        for i, row in enumerate(rows)
        for j, choice in enumerate(row)
    ]
    # a pair with two labels only: Krippendorff uses it, Fleiss (3 raters per pair) does not
    labels += [Label("p9", "h0", "a", True), Label("p9", "h1", "a", False)]
    result = preference_result(labels)
    assert result.fleiss_kappa == pytest.approx(
        _fleiss_by_hand(rows, ["a", "b", "tie", "both_bad"])
    )
    assert result.krippendorff_alpha == pytest.approx(_krippendorff_by_hand([*rows, ["a", "a"]]))
    perfect = preference_result(
        [Label(f"p{i}", f"h{j}", "a" if i % 2 else "b", True) for i in range(6) for j in range(3)]
    )
    assert perfect.fleiss_kappa == pytest.approx(1.0)
    assert perfect.krippendorff_alpha == pytest.approx(1.0)


def test_a_bad_choice_is_refused() -> None:
    with pytest.raises(ValueError, match="choice"):
        preference_result([Label("p", "h", "left", True)])  # type: ignore[arg-type]
    empty = preference_result([])
    assert empty.pairs == 0 and math.isnan(empty.win_rate.estimate)
