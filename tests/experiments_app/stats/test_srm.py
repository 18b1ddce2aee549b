"""SRM chi-square against scipy.stats.chisquare (statistic and p to 1e-12 relative)."""

from __future__ import annotations

import pytest
from scipy import stats as sps

from experiments_app.stats.srm import srm_test


def test_published_split_is_consistent_with_80_20() -> None:
    # The report's 1.58M control vs 395K treatment is exactly 80/20.
    result = srm_test(
        {"control": 1_580_000, "treatment": 395_000}, {"control": 0.8, "treatment": 0.2}
    )
    assert result.statistic == pytest.approx(0.0, abs=1e-9)
    assert not result.flagged
    assert "No sample ratio mismatch" in result.message


def test_matches_scipy_chisquare_and_flags_below_one_in_a_thousand() -> None:
    observed = {"control": 1_580_000, "treatment": 391_000}
    weights = {"control": 4.0, "treatment": 1.0}  # weights need not sum to 1
    result = srm_test(observed, weights)
    total = sum(observed.values())
    ref = sps.chisquare([1_580_000, 391_000], f_exp=[total * 0.8, total * 0.2])
    assert result.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert result.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert result.df == 1
    assert result.p_value < 0.001 and result.flagged
    assert "Sample ratio mismatch" in result.message and "treatment 19.84%" in result.message


def test_three_arms_and_threshold_edge() -> None:
    observed = {"a": 1040, "b": 980, "c": 980}
    result = srm_test(observed, {"a": 1, "b": 1, "c": 1})
    ref = sps.chisquare([1040, 980, 980])
    assert result.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert result.df == 2
    assert not result.flagged  # p ~ 0.3
    assert srm_test(observed, {"a": 1, "b": 1, "c": 1}, threshold=0.5).flagged


def test_bad_configuration_is_rejected_specifically() -> None:
    with pytest.raises(ValueError, match="arms differ"):
        srm_test({"control": 1}, {"control": 0.5, "treatment": 0.5})
    with pytest.raises(ValueError, match="positive"):
        srm_test({"a": 1, "b": 1}, {"a": 0.0, "b": 1.0})
    with pytest.raises(ValueError, match="at least two"):
        srm_test({"a": 1}, {"a": 1.0})
