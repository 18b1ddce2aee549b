"""Holm and Benjamini-Hochberg against statsmodels multipletests (1e-12 absolute)."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from experiments_app.stats.multiple_testing import adjust_p_values, benjamini_hochberg, holm

CASES = [
    [0.01, 0.04],
    [0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216],
    [0.03, 0.03, 0.5, 0.01, 0.01, 1.0, 0.0],  # ties, zero and one
]


@pytest.mark.parametrize("p", CASES)
def test_holm_matches_statsmodels(p: list[float]) -> None:
    assert holm(p) == pytest.approx(multipletests(p, method="holm")[1], abs=1e-12)


@pytest.mark.parametrize("p", CASES)
def test_bh_matches_statsmodels(p: list[float]) -> None:
    assert benjamini_hochberg(p) == pytest.approx(multipletests(p, method="fdr_bh")[1], abs=1e-12)


def test_random_p_values_match_statsmodels(rng: np.random.Generator) -> None:
    p = rng.beta(0.5, 2.0, 200)
    assert adjust_p_values(p, "holm") == pytest.approx(multipletests(p, method="holm")[1])
    assert adjust_p_values(p, "bh") == pytest.approx(multipletests(p, method="fdr_bh")[1])


def test_invalid_input_is_rejected() -> None:
    assert holm([]).size == 0
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm([0.1, 1.5])
    with pytest.raises(ValueError, match="holm"):
        adjust_p_values([0.1], "bonferroni")  # type: ignore[arg-type]
