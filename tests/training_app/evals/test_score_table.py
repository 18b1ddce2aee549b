"""The comparison table: cells from per-item scores, the pooled Harness-Variant cell, the
T1/T2 gap, row order, precomputed cells and the CSV export."""

from __future__ import annotations

import csv
import io
import math

import pytest

from training_app.evals.eval_stats import bootstrap_mean, variant_gap
from training_app.evals.score_table import (
    COLUMNS,
    RunSummary,
    ScoreCell,
    ScoreTableError,
    build_score_table,
)

N = 200


def scores(passed: int, prefix: str = "i", n: int = N) -> dict[str, float]:
    """``passed`` of ``n`` items passed (the first ones)."""
    return {f"{prefix}{k}": float(k < passed) for k in range(n)}


def variant_run(model: str, which: str, passed: int) -> RunSummary:
    items = {f"i{k}~{which}": v for k, v in enumerate(scores(passed).values())}
    return RunSummary(
        model,
        "harness_variant_t1" if which == "t1" else "harness_variant_t2",
        item_scores=items,
        base_ids={item: item.split("~")[0] for item in items},
        run_id=f"{model}-{which}",
    )


def runs() -> list[RunSummary]:
    return [
        RunSummary("GLM-5.2", "live_stream_qa", scores(186)),
        RunSummary("HAT", "live_stream_qa", scores(190)),
        variant_run("HAT", "t1", 189),
        variant_run("HAT", "t2", 190),
        RunSummary("HAT", "ifeval_prompt", scores(451, "p", 541)),
        RunSummary("HAT", "bfcl", cell=ScoreCell(71.25, 69.0, 73.5, 4000)),
        RunSummary("Base", "live_stream_qa", scores(161)),
        variant_run("Base", "t1", 156),
        variant_run("Base", "t2", 146),
    ]


def test_rows_follow_the_report_and_cells_are_percentages_with_intervals() -> None:
    table = build_score_table(runs(), b=1000, seed=1)
    assert [row.model for row in table.rows] == ["Base", "HAT", "GLM-5.2"]
    hat = table.row("HAT").cells
    live = hat["live_stream_qa"]
    assert live is not None and live.estimate == pytest.approx(95.0) and live.n == N
    reference = bootstrap_mean(list(scores(190).values()), b=1000, seed=1).scaled(100)
    assert (live.ci_low, live.ci_high) == pytest.approx((reference.ci_low, reference.ci_high))
    ifeval = hat["ifeval_prompt"]
    assert ifeval is not None and ifeval.estimate == pytest.approx(100 * 451 / 541)
    # a precomputed cell is shown as given
    assert hat["bfcl"] == ScoreCell(71.25, 69.0, 73.5, 4000)
    # a model without a run for a column has an empty cell
    glm = table.row("GLM-5.2").cells
    assert glm["harness_variant_qa"] is None and glm["t1_t2_gap"] is None and glm["bfcl"] is None


def test_harness_variant_cell_pools_t1_and_t2_and_gap_is_paired() -> None:
    table = build_score_table(runs(), b=1000, seed=1)
    base = table.row("Base").cells
    pooled = base["harness_variant_qa"]
    # (156 + 146) / 400 items, resampled as 200 base items
    assert pooled is not None and pooled.estimate == pytest.approx(75.5) and pooled.n == N
    assert pooled.ci_low < 75.5 < pooled.ci_high
    gap = base["t1_t2_gap"]
    assert gap is not None and gap.estimate == pytest.approx(5.0)
    t1, t2 = variant_run("Base", "t1", 156), variant_run("Base", "t2", 146)
    signed = variant_gap(
        t1.item_scores,
        t2.item_scores,
        t1_base_ids=t1.base_ids,
        t2_base_ids=t2.base_ids,
        resamples=1000,
        seed=1,
    ).scaled(100)
    assert (gap.ci_low, gap.ci_high, gap.p_value) == pytest.approx(
        (signed.ci_low, signed.ci_high, signed.p_value)
    )
    # the HAT gap is small and not significant
    hat_gap = table.row("HAT").cells["t1_t2_gap"]
    assert hat_gap is not None and hat_gap.estimate == pytest.approx(0.5)
    assert hat_gap.p_value is not None and hat_gap.p_value > 0.5


def test_csv_export() -> None:
    table = build_score_table(runs(), b=500, seed=0)
    rows = list(csv.reader(io.StringIO(table.to_csv())))
    heading = rows[0]
    assert heading[:5] == [
        "model",
        "live_stream_qa",
        "live_stream_qa_ci_low",
        "live_stream_qa_ci_high",
        "live_stream_qa_n",
    ]
    assert "t1_t2_gap_p_value" in heading
    assert len(heading) == 1 + 4 * len(COLUMNS) + 1
    assert [r[0] for r in rows[1:]] == ["Base", "HAT", "GLM-5.2"]
    hat = dict(zip(heading, rows[2], strict=True))
    assert hat["live_stream_qa"] == "95.00" and hat["live_stream_qa_n"] == str(N)
    assert hat["bfcl"] == "71.25" and hat["bfcl_ci_low"] == "69.00"
    assert hat["t1_t2_gap"] == "0.50" and float(hat["t1_t2_gap_p_value"]) > 0.5
    glm = dict(zip(heading, rows[3], strict=True))
    assert glm["harness_variant_t1"] == "" and glm["t1_t2_gap_p_value"] == ""
    assert table.to_dict()["rows"][1]["cells"]["live_stream_qa"]["estimate"] == pytest.approx(95.0)


def test_explicit_model_order_and_empty_rows() -> None:
    table = build_score_table(runs(), models=["HAT", "Fixed-Harness SFT", "Base"], b=200)
    assert [row.model for row in table.rows] == ["HAT", "Fixed-Harness SFT", "Base"]
    assert all(cell is None for cell in table.row("Fixed-Harness SFT").cells.values())
    assert table.row("HAT").cells["live_stream_qa"] is not None
    cell = ScoreCell(math.nan, math.nan, math.nan, 0)
    assert cell.display() == "n/a"
    assert ScoreCell(94.8, 93.1, 96.2, 500).display() == "94.8 [93.1, 96.2]"


def test_refusals() -> None:
    with pytest.raises(ScoreTableError, match="two live_stream_qa runs"):
        build_score_table(
            [
                RunSummary("HAT", "live_stream_qa", scores(1), run_id="r1"),
                RunSummary("HAT", "live_stream_qa", scores(2), run_id="r2"),
            ]
        )
    with pytest.raises(ScoreTableError, match="benchmark must be one of"):
        RunSummary("HAT", "mmlu", scores(1))  # type: ignore[arg-type]
    with pytest.raises(ScoreTableError, match="give item_scores or a cell"):
        RunSummary("HAT", "bfcl")
    with pytest.raises(ScoreTableError, match=r"must be in \[0, 1\]"):
        RunSummary("HAT", "bfcl", {"x": 94.0})
