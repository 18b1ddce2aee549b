"""The HAT study's comparisons on hand-made item scores, each estimate checked against the
number worked out by hand (the intervals are eval_stats's, tested in test_eval_stats)."""

from __future__ import annotations

import pytest

from training_app.evals.study_analysis import (
    ModelScores,
    drop_comparison,
    errors_reduction,
    score_row,
    study_comparisons,
    t1_t2_gap,
    versus,
)


def _model(label: str, live: list[int], t1: list[int], t2: list[int]) -> ModelScores:
    """Base items b0..bN; one T1 and one T2 variant of each."""
    scores = ModelScores(label)
    for i, (a, b, c) in enumerate(zip(live, t1, t2, strict=True)):
        scores.live[f"b{i}"] = float(a)
        scores.t1[f"v1-{i}"], scores.t1_base[f"v1-{i}"] = float(b), f"b{i}"
        scores.t2[f"v2-{i}"], scores.t2_base[f"v2-{i}"] = float(c), f"b{i}"
    scores.ifeval = {f"p{i}": float(i % 2) for i in range(10)}
    scores.bfcl = {f"c{i}": 1.0 for i in range(4)}
    scores.bfcl_augmented = {f"c{i}": float(i < 2) for i in range(4)}
    return scores


BASE = _model("base", [1, 1, 0, 0, 1, 0, 1, 0], [0, 1, 0, 0, 0, 0, 1, 0], [1, 0, 0, 0, 0, 0, 0, 0])
FIXED = _model(
    "fixed", [1, 1, 1, 1, 1, 1, 1, 0], [0, 1, 0, 1, 0, 1, 0, 0], [0, 0, 1, 1, 0, 0, 1, 0]
)
HAT = _model("hat", [1, 1, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 0, 1], [1, 1, 1, 1, 1, 0, 1, 1])


def test_the_score_row_pools_t1_and_t2_as_harness_variant_qa() -> None:
    row = score_row(FIXED)
    assert row.live.estimate == pytest.approx(7 / 8)
    assert row.t1.estimate == pytest.approx(3 / 8) and row.t2.estimate == pytest.approx(3 / 8)
    assert row.harness_variant.estimate == pytest.approx(6 / 16)
    assert row.harness_variant.n == 8  # resampled by base item
    assert row.bfcl_augmented.estimate == pytest.approx(0.5)


def test_the_drop_comparison_is_the_difference_of_per_item_drops() -> None:
    # fixed: live 7/8, variants 6/16 -> drop 0.5; hat: live 1, variants 14/16 -> drop 0.125
    result = drop_comparison(FIXED, HAT).result
    assert result.mean_a == pytest.approx(7 / 8 - 6 / 16)
    assert result.mean_b == pytest.approx(1 - 14 / 16)
    assert result.estimate == pytest.approx((1 - 14 / 16) - (7 / 8 - 6 / 16))
    assert result.ci_low <= result.estimate <= result.ci_high


def test_the_t1_t2_gap_is_paired_by_base_item() -> None:
    result = t1_t2_gap(BASE).result
    assert result.paired and result.n == 8
    assert result.estimate == pytest.approx(2 / 8 - 1 / 8)  # T1 minus T2


def test_errors_under_held_out_edits_count_variants_failing_where_the_original_passes() -> None:
    # base: items passing live b0 b1 b4 b6; their failing variants: b0 t1, b1 t2, b4 t1+t2,
    # b6 t2 -> 5 errors. hat: b6 t1, b5 t2 -> 2 errors. Reduction (5 - 2) / 5.
    comparison = errors_reduction(BASE, HAT)
    assert comparison.result.errors_reference == 5
    assert comparison.result.errors_candidate == 2
    assert comparison.result.estimate == pytest.approx(3 / 5)


def test_versus_base_is_other_minus_base_and_an_effect_needs_an_interval_off_zero() -> None:
    same = versus(BASE, FIXED, "ifeval")
    assert same.result.estimate == 0 and not same.excludes_zero
    strong = versus(_model("x", [0] * 8, [0] * 8, [0] * 8), HAT, "live")
    assert strong.result.estimate == 1.0 and strong.excludes_zero
    assert strong.half_width == pytest.approx((strong.result.ci_high - strong.result.ci_low) / 2)
    record = strong.to_dict()
    assert record["model_a"] == "x" and record["model_b"] == "hat" and record["b"] > 0


def test_the_study_makes_every_comparison_the_issue_asks_for() -> None:
    models = {"base": BASE, "fixed_sft": FIXED, "hat": HAT}
    names = [c.name for c in study_comparisons(models, base="base", fixed="fixed_sft", hat="hat")]
    assert names[0] == "live_to_variant_drop"
    assert names.count("t1_minus_t2") == 3
    assert names.count("ifeval") == 2 and names.count("error_reduction") == 2


def test_the_markdown_report_shows_every_model_and_marks_effects() -> None:
    from dataclasses import asdict

    from training_app.evals.study_report import results_markdown

    none = _model("none", [0] * 8, [0] * 8, [0] * 8)
    models = {"base": none, "fixed_sft": FIXED, "hat": HAT}
    comparisons = study_comparisons(models, base="base", fixed="fixed_sft", hat="hat")
    results = {
        "scale": {"name": "test"},
        "labels": {"base": "Base", "fixed_sft": "Fixed-Harness SFT", "hat": "HAT"},
        "scores": {k: asdict(score_row(m)) for k, m in models.items()},
        "comparisons": [c.to_dict() for c in comparisons],
        "wall_s": {"eval:base": 12.0},
        "console": {
            "score_table_url": "/evaluation/score-table/?runs=1&runs=2",
            "max_estimate_difference_points": 0.0,
            "mismatches": [],
        },
    }
    text = results_markdown(results)
    assert "`/evaluation/score-table/?runs=1&runs=2`; its estimates agree" in text
    assert "| HAT | 100.0 [100.0, 100.0] |" in text  # Live-Stream QA of HAT, all 8 pass
    assert "| Fixed-Harness SFT | 87.5 [" in text
    live = [line for line in text.splitlines() if line.startswith("| Live-Stream QA, B minus A")]
    assert len(live) == 2 and all(line.endswith("| **yes** |") for line in live)
    assert "(no latency replay in these results)" in text
