"""SampleStats: sums and moments against numpy on the raw arrays (tolerance: 1e-9 relative)."""

from __future__ import annotations

import numpy as np
import pytest

from experiments_app.stats.samples import SampleStats

REL = 1e-9


def test_from_arrays_moments_match_numpy(rng: np.random.Generator) -> None:
    # given per-unit y, x, c
    x = rng.integers(1, 30, 500).astype(float)
    y = x * rng.gamma(2.0, 3.0, 500)
    c = 0.5 * y + rng.normal(0, 5, 500)
    # when
    s = SampleStats.from_arrays(y, x=x, c=c)
    # then
    assert s.n == 500
    assert s.mean_y == pytest.approx(y.mean(), rel=REL)
    assert s.var_y == pytest.approx(np.var(y, ddof=1), rel=REL)
    assert s.var_x == pytest.approx(np.var(x, ddof=1), rel=REL)
    assert s.var_c == pytest.approx(np.var(c, ddof=1), rel=REL)
    assert s.cov_xy == pytest.approx(np.cov(x, y)[0, 1], rel=REL)
    assert s.cov_yc == pytest.approx(np.cov(y, c)[0, 1], rel=REL)
    assert s.cov_xc == pytest.approx(np.cov(x, c)[0, 1], rel=REL)
    assert s.mean_x == pytest.approx(x.mean(), rel=REL)
    assert s.mean_c == pytest.approx(c.mean(), rel=REL)


def test_merge_of_disjoint_parts_equals_stats_of_the_union(rng: np.random.Generator) -> None:
    y, x, c = rng.normal(size=(3, 300))
    parts = [SampleStats.from_arrays(y[i:j], x=x[i:j], c=c[i:j]) for i, j in ((0, 100), (100, 300))]
    whole = SampleStats.from_arrays(y, x=x, c=c)
    merged = parts[0] + parts[1]
    for name, value in whole.as_dict().items():
        assert merged.as_dict()[name] == pytest.approx(value, rel=REL, abs=1e-9)
    assert SampleStats.combine(parts) == merged


def test_round_trip_through_a_mapping() -> None:
    s = SampleStats(n=3, sum_y=6.0, sum_y2=14.0, sum_c=3.0, sum_c2=5.0, sum_yc=8.0)
    assert SampleStats.from_mapping(s.as_dict()) == s


def test_partial_groups_are_rejected_with_the_field_names() -> None:
    with pytest.raises(ValueError, match="ratio sums"):
        SampleStats(n=3, sum_y=1.0, sum_y2=1.0, sum_x=3.0)
    with pytest.raises(ValueError, match="covariate sums"):
        SampleStats(n=3, sum_y=1.0, sum_y2=1.0, sum_c=3.0, sum_c2=4.0)
    with pytest.raises(ValueError, match="sum_xc"):
        SampleStats(n=3, sum_y=1.0, sum_y2=1.0, sum_xc=1.0)
    with pytest.raises(ValueError, match="only one side"):
        SampleStats(n=1, sum_y=1.0, sum_y2=1.0).merge(
            SampleStats(n=1, sum_y=1.0, sum_y2=1.0, sum_x=1.0, sum_x2=1.0, sum_xy=1.0)
        )
    with pytest.raises(ValueError, match="unknown"):
        SampleStats.from_mapping({"n": 1, "sum_y": 1.0, "sum_y2": 1.0, "sum_z": 2.0})


def test_missing_groups_raise_and_tiny_samples_give_nan() -> None:
    s = SampleStats(n=1, sum_y=2.0, sum_y2=4.0)
    assert np.isnan(s.var_y)
    with pytest.raises(ValueError, match="no ratio"):
        _ = s.mean_x
    with pytest.raises(ValueError, match="no covariate"):
        _ = s.cov_yc
