"""The CSS trace timeline: bar positions are shares of the total time."""

from __future__ import annotations

from console.charts import MIN_BAR_PCT, pretty_json, trace_timeline


def step(kind: str, started: float, duration: float, **detail: object) -> dict[str, object]:
    return {
        "kind": kind,
        "name": kind,
        "started_ms": started,
        "duration_ms": duration,
        "detail": detail,
    }


def test_bars_are_placed_relative_to_the_total() -> None:
    timeline = trace_timeline(
        {
            "total_ms": 200.0,
            "steps": [
                step("model_call", 0, 150, ok=True),
                step("tool_call", 150, 50, ok=False, error="boom"),
            ],
        }
    )
    first, second = timeline.steps
    assert (first.left_pct, first.width_pct) == (0.0, 75.0)
    assert (second.left_pct, second.width_pct) == (75.0, 25.0)
    assert second.ok is False and ("Error", "boom") in second.facts
    assert timeline.ticks == [
        (0.0, 0.0),
        (25.0, 50.0),
        (50.0, 100.0),
        (75.0, 150.0),
        (100.0, 200.0),
    ]
    assert timeline.legend == [("model_call", "model call", 1), ("tool_call", "tool call", 1)]


def test_zero_length_steps_get_a_sliver_that_stays_inside_the_track() -> None:
    timeline = trace_timeline({"total_ms": 100.0, "steps": [step("fallback", 100, 0)]})
    only = timeline.steps[0]
    assert only.width_pct == MIN_BAR_PCT and only.left_pct + only.width_pct <= 100.0


def test_total_falls_back_to_the_last_step_end_and_bad_rows_are_skipped() -> None:
    timeline = trace_timeline(
        {"steps": [step("hook", 10, 30), "garbage", {"kind": "retry", "started_ms": "x"}]}
    )
    assert timeline.total_ms == 40.0
    assert [s.kind for s in timeline.steps] == ["hook", "retry"]
    assert trace_timeline({}).steps == []


def test_pretty_json_parses_json_strings() -> None:
    assert pretty_json('{"sku": "SW-1"}') == '{\n  "sku": "SW-1"\n}'
    assert pretty_json("not json") == "not json"


def test_histogram_bins_are_round_and_shared_by_every_level() -> None:
    from console.charts import histogram_bin_size, latency_histogram

    assert [histogram_bin_size(s) for s in (3.0, 15.6, 100.0)] == [0.1, 1.0, 5.0]
    figure = latency_histogram(
        [
            {"concurrency": 1, "latencies_ms": [1000.0, 2000.0]},
            {"concurrency": 8, "latencies_ms": [9000.0, 21000.0]},
        ]
    )
    bins = [trace["xbins"] for trace in figure["data"]]
    assert bins[0] == bins[1] == {"start": 0, "end": 22.0, "size": 1.0}
    assert figure["layout"]["xaxis"]["range"] == [0, 22.0]
