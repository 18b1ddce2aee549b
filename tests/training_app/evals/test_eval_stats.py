"""Evaluation statistics against independent references: the exact bootstrap distribution
(enumerated), scipy's bootstrap and paired t-test, statsmodels' exact McNemar, and
hand-computed error counts. Tolerances are stated at each assertion."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from training_app.evals.eval_stats import (
    PairingError,
    bootstrap_mean,
    by_base_item,
    detected_errors,
    error_reduction,
    mcnemar_exact,
    paired_bootstrap,
    variant_gap,
)


def test_bootstrap_mean_matches_the_enumerated_bootstrap_distribution() -> None:
    # given 4 values: all 4**4 equally likely resamples give the exact bootstrap distribution
    values = [0.0, 1.0, 1.0, 0.5]
    means = np.array([np.mean(r) for r in itertools.product(values, repeat=4)])
    exact_low, exact_high = np.quantile(means, [0.1, 0.9])
    # when
    estimate = bootstrap_mean(values, b=40_000, seed=3, confidence=0.8)
    # then the point estimate is exact and the bounds are within Monte Carlo noise (the
    # distribution is discrete with steps of 0.125, so the bounds land on its atoms)
    assert estimate.estimate == pytest.approx(0.625)
    assert estimate.ci_low == pytest.approx(exact_low, abs=0.0626)
    assert estimate.ci_high == pytest.approx(exact_high, abs=0.0626)
    assert (estimate.n, estimate.b, estimate.seed, estimate.confidence) == (4, 40_000, 3, 0.8)


def test_bootstrap_mean_agrees_with_scipy_percentile_bootstrap() -> None:
    rng = np.random.default_rng(11)
    values = (rng.random(300) < 0.8).astype(float)
    ours = bootstrap_mean(values, b=20_000, seed=1)
    ref = stats.bootstrap(
        (values,), np.mean, n_resamples=20_000, method="percentile", random_state=2
    ).confidence_interval
    # two independent Monte Carlo runs of the same percentile interval: within 0.01 (the
    # interval is ~0.09 wide; its bounds' Monte Carlo s.e. at B=20,000 is ~0.002)
    assert ours.ci_low == pytest.approx(ref.low, abs=0.01)
    assert ours.ci_high == pytest.approx(ref.high, abs=0.01)
    # and the normal-theory interval for a proportion agrees to within 0.01
    se = math.sqrt(values.mean() * (1 - values.mean()) / len(values))
    assert ours.ci_low == pytest.approx(values.mean() - 1.96 * se, abs=0.01)
    assert ours.ci_high == pytest.approx(values.mean() + 1.96 * se, abs=0.01)


def test_bootstrap_is_deterministic_and_degenerate_inputs_do_not_raise() -> None:
    values = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    assert bootstrap_mean(values, b=500, seed=7) == bootstrap_mean(values, b=500, seed=7)
    assert bootstrap_mean(values, b=500, seed=7) != bootstrap_mean(values, b=500, seed=8)
    constant = bootstrap_mean([1.0] * 5, b=100)
    assert (constant.estimate, constant.ci_low, constant.ci_high) == (1.0, 1.0, 1.0)
    empty = bootstrap_mean([], b=100)
    assert empty.n == 0 and math.isnan(empty.estimate) and math.isnan(empty.ci_low)
    with pytest.raises(ValueError, match="confidence must be in"):
        bootstrap_mean(values, confidence=1.5)


def test_clustered_bootstrap_is_the_pooled_mean_over_whole_clusters() -> None:
    # given two clusters of unequal size: pooled mean = 3 passes / 4 items
    values = [1.0, 1.0, 1.0, 0.0]
    clusters = ["a", "b", "b", "b"]
    estimate = bootstrap_mean(values, clusters=clusters, b=4000, seed=0, confidence=0.5)
    assert estimate.estimate == pytest.approx(0.75) and estimate.n == 2
    # every resample is {a,a}: 1, {b,b}: 2/3, or {a,b}: 3/4 -> all draws lie in [2/3, 1]
    assert 2 / 3 - 1e-12 <= estimate.ci_low <= estimate.ci_high <= 1.0
    assert by_base_item({"x~t1": 1.0, "x~t2": 0.0, "y~t1": 1.0}, {"x~t1": "x", "x~t2": "x"}) == {
        "x": 0.5,
        "y~t1": 1.0,
    }


def test_paired_bootstrap_agrees_with_the_paired_t_test() -> None:
    rng = np.random.default_rng(5)
    a = rng.normal(0.70, 0.2, 400)
    b = a + rng.normal(0.03, 0.15, 400)
    ids = [f"i{k}" for k in range(400)]
    result = paired_bootstrap(
        dict(zip(ids, a, strict=True)), dict(zip(ids, b, strict=True)), resamples=20_000, seed=4
    )
    ref = stats.ttest_rel(b, a)
    ref_ci = ref.confidence_interval(0.95)
    assert result.estimate == pytest.approx(float(np.mean(b - a)), abs=1e-12)
    # bootstrap and t intervals/p-values coincide for n=400 up to Monte Carlo noise:
    # bounds within 0.002 (interval width ~0.03), p within 0.01 of the t-test's
    assert result.ci_low == pytest.approx(ref_ci.low, abs=0.002)
    assert result.ci_high == pytest.approx(ref_ci.high, abs=0.002)
    assert result.p_value == pytest.approx(ref.pvalue, abs=0.01)
    assert (result.n, result.paired) == (400, True)
    assert result.mean_a == pytest.approx(float(a.mean())) and result.mean_b == pytest.approx(
        float(b.mean())
    )


def test_paired_bootstrap_p_value_is_one_when_nothing_differs_and_small_when_all_do() -> None:
    same = {f"i{k}": float(k % 2) for k in range(50)}
    assert paired_bootstrap(same, same, resamples=999).p_value == 1.0
    better = {key: 1.0 for key in same}
    worse = {key: 0.0 for key in same}
    result = paired_bootstrap(worse, better, resamples=999)
    # every null resample is 0 and the observed difference is 1: the smallest p, 1/(B+1)
    assert result.p_value == pytest.approx(1 / 1000)
    assert (result.estimate, result.ci_low, result.ci_high) == (1.0, 1.0, 1.0)


def test_pairing_errors_name_the_items() -> None:
    a = {"x": 1.0, "y": 0.0}
    b = {"x": 1.0, "z": 1.0}
    with pytest.raises(
        PairingError, match=r"1 only in the first \(y\); 1 only in the second \(z\)"
    ):
        paired_bootstrap(a, b)
    assert paired_bootstrap(a, b, allow_unmatched=True).n == 1
    with pytest.raises(PairingError):
        mcnemar_exact({"x": True}, {"y": True})


def test_mcnemar_exact_matches_statsmodels() -> None:
    rng = np.random.default_rng(0)
    checked = 0
    for n in (1, 5, 20, 60, 200):
        for _ in range(20):
            a = rng.random(n) < rng.random()
            b = rng.random(n) < rng.random()
            ids = [f"i{k}" for k in range(n)]
            ours = mcnemar_exact(dict(zip(ids, a, strict=True)), dict(zip(ids, b, strict=True)))
            table = [
                [int(np.sum(a & b)), int(np.sum(a & ~b))],
                [int(np.sum(~a & b)), int(np.sum(~a & ~b))],
            ]
            ref = mcnemar(table, exact=True)
            assert ours.statistic == ref.statistic
            # the same binomial formula: equal to float precision
            assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-12, abs=1e-15)
            assert (ours.both_pass, ours.only_a, ours.only_b, ours.both_fail) == (
                table[0][0],
                table[0][1],
                table[1][0],
                table[1][1],
            )
            checked += 1
    assert checked == 100
    # a hand-computed case: 1 vs 9 discordant pairs -> 2 * P(X <= 1), X ~ Bin(10, 1/2)
    # = 2 * (C(10,0) + C(10,1)) / 2**10
    first = {f"i{k}": k < 1 for k in range(10)}
    second = {f"i{k}": k >= 1 for k in range(10)}
    assert mcnemar_exact(first, second).p_value == pytest.approx(2 * 11 / 1024)


def test_variant_gap_is_t1_minus_t2_paired_by_base_item() -> None:
    base = [f"b{k}" for k in range(40)]
    t1 = {f"{b}~t1": 1.0 if k % 4 else 0.0 for k, b in enumerate(base)}  # 30/40
    t2 = {f"{b}~t2": 1.0 if k % 2 else 0.0 for k, b in enumerate(base)}  # 20/40
    t1_ids = {f"{b}~t1": b for b in base}
    t2_ids = {f"{b}~t2": b for b in base}
    gap = variant_gap(t1, t2, t1_base_ids=t1_ids, t2_base_ids=t2_ids, resamples=2000)
    assert gap.paired and gap.n == 40
    assert gap.estimate == pytest.approx(0.25)
    assert (gap.mean_b, gap.mean_a) == pytest.approx((0.75, 0.5))
    assert gap.ci_low < 0.25 < gap.ci_high and gap.p_value < 0.05
    # different base items: an unpaired two-sample comparison
    unpaired = variant_gap(t1, {"other": 1.0, "more": 0.0}, t1_base_ids=t1_ids, resamples=500)
    assert not unpaired.paired and unpaired.estimate == pytest.approx(0.25)


def test_detected_errors_by_definition() -> None:
    original = {"a": True, "b": True, "c": False, "d": True}
    variants = {"a~t1": False, "a~t2": False, "b~t1": True, "c~t1": False, "d~t2": True}
    base_ids = {k: k.split("~")[0] for k in variants}
    induced = detected_errors(original, variants, variant_base_ids=base_ids)
    # a's two variant failures were caused by the edits; c already failed on the original
    assert dict(induced.per_item) == {"a": 2, "b": 0, "c": 0, "d": 0}
    assert induced.total == 2 and induced.variant_total == 5
    every = detected_errors(
        original, variants, variant_base_ids=base_ids, definition="variant_failures"
    )
    assert every.total == 3
    with pytest.raises(PairingError, match="no original result"):
        detected_errors({"a": True}, {"z~t1": False}, variant_base_ids={"z~t1": "z"})


def test_error_reduction_estimate_and_interval() -> None:
    # given 120 base items: the reference makes 60 edit-induced errors, the candidate 29
    keys = [f"i{k}" for k in range(120)]
    ref_items = {k: int(n < 60) for n, k in enumerate(keys)}
    cand_items = {k: int(n < 29) for n, k in enumerate(keys)}
    reference = _counts(ref_items)
    candidate = _counts(cand_items)
    result = error_reduction(reference, candidate, resamples=4000, seed=2)
    # then (60 - 29) / 60 = 51.7%, the report's HAT figure, with an interval around it
    assert result.estimate == pytest.approx(31 / 60)
    assert round(result.scaled(100).estimate, 1) == 51.7
    assert result.ci_low < 31 / 60 < result.ci_high
    assert (result.errors_reference, result.errors_candidate, result.n) == (60, 29, 120)
    assert result.b_undefined == 0
    # reference with no errors: undefined, not an exception
    none = error_reduction(_counts({k: 0 for k in keys}), candidate, resamples=100)
    assert math.isnan(none.estimate) and math.isnan(none.ci_low) and none.b_undefined == 100


def test_error_reduction_refuses_mixed_definitions() -> None:
    a = detected_errors({"x": True}, {"x": False})
    b = detected_errors({"x": True}, {"x": False}, definition="variant_failures")
    with pytest.raises(ValueError, match="one definition"):
        error_reduction(a, b)


def _counts(per_item: dict[str, int]):  # type: ignore[no-untyped-def]
    original = {k: True for k in per_item}
    variants = {f"{k}~t1": not bool(v) for k, v in per_item.items()}
    return detected_errors(original, variants, variant_base_ids={f"{k}~t1": k for k in per_item})


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=0, max_size=60))
def test_mcnemar_properties(pairs: list[tuple[bool, bool]]) -> None:
    a = {f"i{k}": x for k, (x, _y) in enumerate(pairs)}
    b = {f"i{k}": y for k, (_x, y) in enumerate(pairs)}
    forward, backward = mcnemar_exact(a, b), mcnemar_exact(b, a)
    assert 0.0 < forward.p_value <= 1.0
    assert forward.p_value == backward.p_value  # the test does not depend on the order
    assert (forward.only_a, forward.only_b) == (backward.only_b, backward.only_a)
    assert forward.n == len(pairs)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 1, allow_nan=False), st.floats(0, 1, allow_nan=False)),
        min_size=1,
        max_size=40,
    ),
    st.integers(0, 2**31),
)
def test_bootstrap_properties(pairs: list[tuple[float, float]], seed: int) -> None:
    a = {f"i{k}": x for k, (x, _y) in enumerate(pairs)}
    b = {f"i{k}": y for k, (_x, y) in enumerate(pairs)}
    # the interval of a mean lies within the data's range, around its estimate's range
    mean = bootstrap_mean(list(a.values()), b=200, seed=seed)
    low, high = min(a.values()), max(a.values())
    assert low - 1e-12 <= mean.ci_low <= mean.ci_high <= high + 1e-12
    assert low - 1e-12 <= mean.estimate <= high + 1e-12
    # swapping the runs negates the difference and its interval, and keeps the p-value
    forward = paired_bootstrap(a, b, resamples=200, seed=seed)
    backward = paired_bootstrap(b, a, resamples=200, seed=seed)
    assert forward.estimate == pytest.approx(-backward.estimate, abs=1e-12)
    assert forward.ci_low == pytest.approx(-backward.ci_high, abs=1e-9)
    assert forward.ci_high == pytest.approx(-backward.ci_low, abs=1e-9)
    assert forward.p_value == backward.p_value
    assert 0 < forward.p_value <= 1


def test_scaling_to_percentage_points_moves_values_not_counts() -> None:
    a = {f"i{k}": float(k % 2) for k in range(20)}
    b = {f"i{k}": float(k % 3 != 0) for k in range(20)}
    paired = paired_bootstrap(a, b, resamples=200, seed=1)
    scaled = paired.scaled(100)
    assert scaled.estimate == pytest.approx(paired.estimate * 100)
    assert (scaled.ci_low, scaled.ci_high) == pytest.approx(
        (paired.ci_low * 100, paired.ci_high * 100)
    )
    assert (scaled.mean_a, scaled.mean_b) == pytest.approx(
        (paired.mean_a * 100, paired.mean_b * 100)
    )
    assert (scaled.p_value, scaled.n, scaled.b, scaled.seed) == (paired.p_value, 20, 200, 1)
    mean = bootstrap_mean(list(a.values()), b=200, seed=1)
    assert mean.scaled(100).estimate == pytest.approx(50.0) and mean.scaled(100).n == 20
