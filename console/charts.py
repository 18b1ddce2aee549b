"""Figures for console pages, built from selector output.

- ``latency_histogram`` / ``latency_by_concurrency``: plotly figures of a latency report,
  returned as plain dicts (``fig.to_json()`` parsed) for ``json_script``; a small script
  draws them with the plotly.js bundled in the ``plotly`` package (no CDN).
- ``training_compare_figure``: one metric of several training runs on one chart.
- ``trace_timeline``: a reply's steps as rows of a CSS timeline. Each bar's left offset and
  width are percentages of the reply's total time, so the page needs no chart library.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go

from experiments_app.latency import DEADLINE_MS
from experiments_app.readouts import Comparison, Readout
from experiments_app.stats.daily import DailyAnalysis
from experiments_app.stats.mean_effects import Effect

# One colour per concurrency level (colour-blind-safe Okabe-Ito order).
LEVEL_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000")
FONT = "system-ui, -apple-system, Segoe UI, Roboto, Helvetica Neue, Arial, sans-serif"


# --- latency reports -----------------------------------------------------------------------


def _layout(**extra: Any) -> dict[str, Any]:
    layout: dict[str, Any] = {
        "template": "plotly_white",
        "font": {"family": FONT, "size": 12, "color": "#1f2933"},
        "margin": {"l": 56, "r": 16, "t": 16, "b": 48},
        "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        "height": 340,
    }
    layout.update(extra)
    return layout


def _as_dict(fig: go.Figure) -> dict[str, Any]:
    return dict(json.loads(fig.to_json()))


def latency_histogram(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Overlaid histograms of the per-request latencies (seconds), one per concurrency
    level on shared bins (so levels compare bar for bar), with the 15 s deadline marked."""
    deadline_s = DEADLINE_MS / 1000
    per_level = [[ms / 1000 for ms in level.get("latencies_ms", [])] for level in results]
    longest = max((max(values) for values in per_level if values), default=deadline_s)
    size = histogram_bin_size(max(longest, deadline_s))
    fig = go.Figure()
    for index, (level, seconds) in enumerate(zip(results, per_level, strict=True)):
        fig.add_trace(
            go.Histogram(
                x=seconds,
                name=f"concurrency {level['concurrency']}",
                opacity=0.65,
                marker_color=LEVEL_COLORS[index % len(LEVEL_COLORS)],
                xbins={"start": 0, "end": longest + size, "size": size},
                hovertemplate="%{x} s: %{y} request(s)<extra>%{fullData.name}</extra>",
            )
        )
    fig.add_vline(
        x=deadline_s,
        line_dash="dash",
        line_color="#c0362c",
        annotation_text=f"{deadline_s:g} s deadline",
        annotation_position="top left",
        annotation_font_color="#c0362c",
    )
    fig.update_layout(
        **_layout(
            barmode="overlay",
            xaxis_title="latency (s)",
            yaxis_title="requests",
            bargap=0.05,
        )
    )
    fig.update_xaxes(range=[0, max(longest, deadline_s) + size])
    return _as_dict(fig)


def histogram_bin_size(span_s: float) -> float:
    """A round bin width giving about 30 bins over ``span_s`` seconds (0.1, 0.25, 0.5, 1, ...)."""
    target = span_s / 30
    for step in (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0):
        if step >= target:
            return step
    return 60.0


def latency_by_concurrency(results: list[dict[str, Any]]) -> dict[str, Any]:
    """P50, P95 and max latency (seconds) against concurrency."""
    levels = [level["concurrency"] for level in results]
    fig = go.Figure()
    for key, label, dash in (
        ("p50_ms", "P50", "solid"),
        ("p95_ms", "P95", "dash"),
        ("max_ms", "max", "dot"),
    ):
        fig.add_trace(
            go.Scatter(
                x=levels,
                y=[None if r.get(key) is None else r[key] / 1000 for r in results],
                name=label,
                mode="lines+markers",
                line={"dash": dash},
                hovertemplate="concurrency %{x}: %{y:.3f} s<extra>" + label + "</extra>",
            )
        )
    fig.update_layout(**_layout(xaxis_title="concurrency", yaxis_title="latency (s)", height=300))
    fig.update_xaxes(type="category")
    fig.update_yaxes(rangemode="tozero")
    return _as_dict(fig)


# --- trace timeline ------------------------------------------------------------------------

# Steps shorter than this share of the total still get a visible sliver.
MIN_BAR_PCT = 0.4
KIND_LABELS = {
    "model_call": "model call",
    "skill_load": "skill load",
    "tool_call": "tool call",
    "hook": "hook",
    "retry": "retry",
    "fallback": "fallback",
    "error": "error",
}


@dataclass(frozen=True)
class TimelineStep:
    number: int
    kind: str
    label: str
    name: str
    started_ms: float
    duration_ms: float
    left_pct: float
    width_pct: float
    ok: bool | None
    facts: list[tuple[str, str]] = field(default_factory=list)
    blocks: list[tuple[str, str]] = field(default_factory=list)
    evaluated: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ended_ms(self) -> float:
        return round(self.started_ms + self.duration_ms, 3)


@dataclass(frozen=True)
class Timeline:
    total_ms: float
    steps: list[TimelineStep]
    ticks: list[tuple[float, float]]  # (left %, ms)
    legend: list[tuple[str, str, int]]  # (kind, label, steps of that kind)


def trace_timeline(trace: dict[str, Any]) -> Timeline:
    """Rows for every step of a stored ``ReplyTrace`` (``to_dict`` form)."""
    raw_steps = [s for s in trace.get("steps") or [] if isinstance(s, dict)]
    ends = [_num(s.get("started_ms")) + _num(s.get("duration_ms")) for s in raw_steps]
    total = max([_num(trace.get("total_ms")), *ends, 0.0])
    steps = []
    counts: dict[str, int] = {}
    for number, raw in enumerate(raw_steps, start=1):
        kind = str(raw.get("kind") or "step")
        counts[kind] = counts.get(kind, 0) + 1
        started, duration = _num(raw.get("started_ms")), _num(raw.get("duration_ms"))
        left = 100.0 * started / total if total else 0.0
        width = max(MIN_BAR_PCT, 100.0 * duration / total if total else 0.0)
        left = min(left, 100.0 - MIN_BAR_PCT)
        width = min(width, 100.0 - left)
        detail_raw = raw.get("detail")
        detail: dict[str, Any] = detail_raw if isinstance(detail_raw, dict) else {}
        facts, blocks, evaluated = _describe(kind, str(raw.get("name") or ""), detail)
        ok = detail.get("ok")
        steps.append(
            TimelineStep(
                number=number,
                kind=kind,
                label=KIND_LABELS.get(kind, kind.replace("_", " ")),
                name=str(raw.get("name") or kind),
                started_ms=started,
                duration_ms=duration,
                left_pct=round(left, 3),
                width_pct=round(width, 3),
                ok=ok if isinstance(ok, bool) else None,
                facts=facts,
                blocks=blocks,
                evaluated=evaluated,
            )
        )
    ticks = [(pct, round(total * pct / 100, 1)) for pct in (0.0, 25.0, 50.0, 75.0, 100.0)]
    legend = [(kind, KIND_LABELS.get(kind, kind), n) for kind, n in counts.items()]
    return Timeline(total_ms=round(total, 3), steps=steps, ticks=ticks, legend=legend)


def pretty_json(value: Any) -> str:
    """JSON for humans; a string that holds JSON (tool-call arguments) is parsed first."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)


def _describe(
    kind: str, name: str, detail: dict[str, Any]
) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[dict[str, Any]]]:
    facts: list[tuple[str, str]] = []
    blocks: list[tuple[str, str]] = []
    evaluated: list[dict[str, Any]] = []
    shown: set[str] = {"ok"}

    def fact(label: str, key: str, unit: str = "") -> None:
        shown.add(key)
        value = detail.get(key)
        if isinstance(value, float):
            value = f"{value:,.1f}"
        if value not in (None, "", []):
            facts.append((label, f"{value}{unit}"))

    if kind == "model_call":
        fact("Model", "model")
        fact("TTFT", "ttft_ms", " ms")
        fact("Prompt tokens", "prompt_tokens")
        fact("Completion tokens", "completion_tokens")
        fact("Finish reason", "finish_reason")
        fact("Failure", "failure")
        fact("Error", "error")
        shown.update({"content", "tool_calls"})
        if detail.get("content"):
            blocks.append(("Model output", str(detail["content"])))
        for call in detail.get("tool_calls") or []:
            if isinstance(call, dict):
                blocks.append(
                    (f"Tool call: {call.get('name', '?')}", pretty_json(call.get("arguments", "")))
                )
    elif kind == "tool_call":
        fact("Error", "error")
        shown.update({"arguments", "result"})
        blocks.append(("Arguments", pretty_json(detail.get("arguments", {}))))
        if detail.get("result") is not None:
            blocks.append(("Result", pretty_json(detail["result"])))
    elif kind == "hook":
        facts.append(("Event", name))
        fact("Decision", "action")
        fact("Hook that decided", "hook")
        fact("Error", "error")
        shown.add("evaluated")
        evaluated = [e for e in detail.get("evaluated") or [] if isinstance(e, dict)]
    elif kind == "retry":
        facts.append(("Hook", name))
        fact("Attempt", "attempt")
        shown.add("feedback")
        if detail.get("feedback"):
            blocks.append(("Feedback to the model", str(detail["feedback"])))
    elif kind == "fallback":
        facts.append(("Reason", name))
        shown.add("reply")
        if detail.get("reply"):
            blocks.append(("Fallback reply", str(detail["reply"])))
    elif kind == "skill_load":
        facts.append(("Skill", name))
    rest = {k: v for k, v in detail.items() if k not in shown}
    if rest:
        blocks.append(("Other detail", pretty_json(rest)))
    return facts, blocks, evaluated


def _num(value: Any) -> float:
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        return 0.0


# --- experiment readouts ----------------------------------------------------------------------
# Relative lift in percent with its interval in every figure, so the eye lands on the
# uncertainty: ci_bars (headline lift per metric and arm), cumulative_lift (estimate at each
# day's cut-off with the always-valid confidence sequence - never fixed-horizon intervals,
# which a daily look would read as "significant on day 5"), daily_effects (each day's effect
# with its interval, and the headline effect as the overall line). Relative intervals of days
# and cut-offs are on the log-ratio scale (never below -100%).

ARM_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")


def _pct(value: float) -> float | None:
    return value * 100 if math.isfinite(value) else None


def _bounds(effect: Effect) -> tuple[float | None, float | None, float | None]:
    return _pct(effect.estimate), _pct(effect.ci_low), _pct(effect.ci_high)


def ci_bars(readout: Readout) -> dict[str, Any]:
    fig = go.Figure()
    for index, arm in enumerate(readout.arms[1:]):
        labels, centers, plus, minus, text = [], [], [], [], []
        for metric in readout.metrics:
            comparison = next(c for c in metric.comparisons if c.arm.pk == arm.pk)
            estimate, low, high = _bounds(comparison.readout.headline_relative)
            labels.append(metric.label)
            centers.append(estimate)
            up, down = _error_arms(estimate, low, high)
            plus.append(up)
            minus.append(down)
            text.append(
                f"{estimate:+.2f}% [{low:+.2f}%, {high:+.2f}%]"
                if None not in (estimate, low, high)
                else "undefined"
            )
        fig.add_trace(
            go.Scatter(
                x=centers,
                y=labels,
                mode="markers",
                name=f"{arm.name} vs {readout.control.name}",
                marker={"size": 10, "color": ARM_COLORS[index % len(ARM_COLORS)]},
                error_x={"type": "data", "array": plus, "arrayminus": minus, "thickness": 2},
                text=text,
                hovertemplate="%{y}: %{text}<extra>%{fullData.name}</extra>",
            )
        )
    fig.add_vline(x=0, line_color="#7b8794", line_dash="dash")
    fig.update_layout(
        **_layout(
            height=120 + 70 * max(1, len(readout.metrics)),
            xaxis_title=f"relative lift (%), {100 * (1 - readout.experiment.alpha):.0f}% CI",
            margin={"l": 200, "r": 16, "t": 16, "b": 48},
        )
    )
    fig.update_yaxes(autorange="reversed")
    return _as_dict(fig)


def _error_arms(
    estimate: float | None, low: float | None, high: float | None
) -> tuple[float | None, float | None]:
    """Plotly's error bar lengths above and below the estimate (None where undefined)."""
    if estimate is None:
        return None, None
    return (
        None if high is None else high - estimate,
        None if low is None else estimate - low,
    )


def _daily_series(
    readout: Readout, metric: str
) -> Iterator[tuple[Comparison, DailyAnalysis, str, list[str]]]:
    """Per treatment comparison of ``metric`` that has a daily series: (comparison, its daily
    readout, the arm's colour, the readout's days as ISO strings)."""
    days = [d.isoformat() for d in readout.days]
    result = next(m for m in readout.metrics if m.metric == metric)
    for index, comparison in enumerate(result.comparisons):
        daily = comparison.readout.daily
        if daily is not None:
            yield comparison, daily, ARM_COLORS[index % len(ARM_COLORS)], days


def cumulative_lift(readout: Readout, metric: str) -> dict[str, Any]:
    fig = go.Figure()
    axis = _LiftAxis()
    for comparison, daily, color, days in _daily_series(readout, metric):
        points = daily.cumulative
        x = [days[p.day] for p in points]
        estimate = [_pct(p.relative.estimate) for p in points]
        axis.add(estimate, [], [], comparison)
        level = f"{100 * (1 - readout.experiment.alpha):.0f}%"
        if any(p.sequential is not None for p in points):
            low = [_pct(p.sequential.relative.ci_low) if p.sequential else None for p in points]
            high = [_pct(p.sequential.relative.ci_high) if p.sequential else None for p in points]
            axis.add([], low, high, comparison)
            _band(fig, x, low, high, color, f"always-valid {level} confidence sequence", 0.18)
        fig.add_trace(
            go.Scatter(
                x=x,
                y=estimate,
                mode="lines+markers",
                name=f"{comparison.arm.name}: cumulative lift",
                line={"color": color, "width": 2},
                hovertemplate="%{x}: %{y:+.2f}%<extra>%{fullData.name}</extra>",
            )
        )
    fig.add_hline(y=0, line_color="#7b8794", line_dash="dash")
    fig.update_layout(**_layout(yaxis_title="relative lift (%)", xaxis_title="through day"))
    axis.apply(fig)
    return _as_dict(fig)


class _LiftAxis:
    """The y range of a relative-lift chart: every estimate, the headline interval, and the
    interval bounds up to ``CUT`` times the largest of those (at least 100%). A day whose
    treatment GMV is near 0 has a log-ratio interval reaching +10^17%; drawn to scale it
    flattens every other point, so the axis is cut and the chart says so."""

    CUT = 2.0

    def __init__(self) -> None:
        self.core: list[float] = []
        self.bounds: list[float] = []

    def add(
        self,
        estimates: list[float | None],
        lows: list[float | None],
        highs: list[float | None],
        comparison: Comparison,
    ) -> None:
        headline = comparison.readout.headline_relative
        self.core += [
            v for v in (*estimates, _pct(headline.ci_low), _pct(headline.ci_high)) if v is not None
        ]
        self.bounds += [v for v in (*lows, *highs) if v is not None]

    def apply(self, fig: go.Figure) -> None:
        if not self.core:
            return
        reach = self.CUT * max(100.0, *(abs(v) for v in self.core))
        values = self.core + self.bounds
        low, high = max(-100.0, min(values)), min(reach, max(values))
        if high >= max(values) and low <= min(values):
            return  # everything fits: plotly's own range
        pad = 0.04 * (high - low)
        bottom = low - pad if low > -100.0 else -100.0 - min(pad, 5.0)  # no room below -100%
        fig.update_yaxes(range=[bottom, high + pad])
        fig.add_annotation(
            text=f"axis cut at {high:+,.0f}%: wider intervals run off the chart",
            xref="paper",
            yref="paper",
            x=1,
            y=1,
            xanchor="right",
            yanchor="top",
            showarrow=False,
            font={"size": 11, "color": "#7b8794"},
        )


def _band(
    fig: go.Figure,
    x: list[str],
    low: list[float | None],
    high: list[float | None],
    color: str,
    name: str,
    opacity: float,
) -> None:
    rgb = tuple(int(color[i : i + 2], 16) for i in (1, 3, 5))
    fill = f"rgba({rgb[0]}, {rgb[1]}, {rgb[2]}, {opacity})"
    fig.add_trace(
        go.Scatter(x=x, y=high, mode="lines", line={"width": 0}, showlegend=False, hoverinfo="skip")
    )
    fig.add_trace(
        go.Scatter(
            x=x,
            y=low,
            mode="lines",
            line={"width": 0},
            fill="tonexty",
            fillcolor=fill,
            name=name,
            hoverinfo="skip",
        )
    )


def daily_effects(readout: Readout, metric: str) -> dict[str, Any]:
    fig = go.Figure()
    axis = _LiftAxis()
    for comparison, daily, color, days in _daily_series(readout, metric):
        x, y, plus, minus = [], [], [], []
        lows, highs = [], []
        for day in daily.days:
            estimate, low, high = _bounds(day.relative)
            x.append(days[day.day])
            y.append(estimate)
            lows.append(low)
            highs.append(high)
            up, down = _error_arms(estimate, low, high)
            plus.append(up)
            minus.append(down)
        axis.add(y, lows, highs, comparison)
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                mode="markers",
                name=f"{comparison.arm.name}: day effect",
                marker={"size": 8, "color": color},
                error_y={"type": "data", "array": plus, "arrayminus": minus, "thickness": 1.5},
                hovertemplate="%{x}: %{y:+.2f}%<extra>%{fullData.name}</extra>",
            )
        )
        overall = _pct(comparison.readout.headline_relative.estimate)
        if overall is not None:
            fig.add_hline(
                y=overall,
                line_color=color,
                line_width=1,
                annotation_text=f"overall {overall:+.2f}% (headline, all units)",
                annotation_position="top left",
                annotation_font_color=color,
            )
    fig.add_hline(y=0, line_color="#7b8794", line_dash="dash")
    fig.update_layout(**_layout(yaxis_title="relative effect that day (%)", xaxis_title="day"))
    axis.apply(fig)
    return _as_dict(fig)


# --- training runs -------------------------------------------------------------------------


def training_compare_figure(series: list[dict[str, Any]], metric: str) -> dict[str, Any]:
    """One line per run for ``metric``, its stages laid end to end on the step axis."""
    figure = go.Figure()
    for index, item in enumerate(series):
        figure.add_trace(
            go.Scatter(
                x=item["step"],
                y=item["value"],
                mode="lines",
                name=f"#{item['run_id']} {item['name']}",
                line={"color": LEVEL_COLORS[index % len(LEVEL_COLORS)]},
            )
        )
    figure.update_layout(
        **_layout(
            xaxis={"title": {"text": "step (stages end to end)"}}, yaxis={"title": {"text": metric}}
        )
    )
    return _as_dict(figure)


# --- offline evaluation --------------------------------------------------------------------


def score_table_figure(table: dict[str, Any]) -> dict[str, Any]:
    """The report's score table as grouped bars (one colour per model, one group per
    benchmark column) with 95% interval whiskers; ``table`` is ``ScoreTable.to_dict()``."""
    columns = [c for c in table["columns"] if c["key"] != "t1_t2_gap"]
    fig = go.Figure()
    for index, row in enumerate(table["rows"]):
        xs, ys, plus, minus = [], [], [], []
        for column in columns:
            cell = row["cells"].get(column["key"])
            if not cell or cell.get("estimate") is None:
                continue
            xs.append(column["title"])
            ys.append(cell["estimate"])
            plus.append(max(0.0, (cell.get("ci_high") or cell["estimate"]) - cell["estimate"]))
            minus.append(max(0.0, cell["estimate"] - (cell.get("ci_low") or cell["estimate"])))
        fig.add_bar(
            name=row["model"],
            x=xs,
            y=ys,
            marker_color=LEVEL_COLORS[index % len(LEVEL_COLORS)],
            error_y={"type": "data", "array": plus, "arrayminus": minus, "visible": True},
            hovertemplate="%{x}: %{y:.1f}<extra>" + row["model"] + "</extra>",
        )
    fig.update_layout(
        _layout(barmode="group", yaxis={"title": "score (points)", "range": [0, 100]})
    )
    return _as_dict(fig)


def blind_test_figure(
    *, label_one: str, label_two: str, wins: int, ties: int, losses: int, win_rate: Any
) -> dict[str, Any]:
    """A blind test's result: the pairs as one stacked bar (side one wins, ties, side two
    wins, in % of pairs) and side one's decisive win rate with its Wilson interval below it;
    ``win_rate`` is ``stats.preference.Interval``."""
    pairs = max(1, wins + ties + losses)
    row = "Pairs"
    fig = go.Figure()
    parts = ((f"{label_one} wins", wins, "#0072B2"), ("Ties", ties, "#BBBBBB"))
    for name, count, color in (*parts, (f"{label_two} wins", losses, "#E69F00")):
        fig.add_bar(
            name=name,
            y=[row],
            x=[100 * count / pairs],
            orientation="h",
            marker_color=color,
            text=[str(count)],
            hovertemplate=f"{name}: {count} (%{{x:.1f}}%)<extra></extra>",
        )
    if not math.isnan(win_rate.estimate):
        est = 100 * win_rate.estimate
        fig.add_scatter(
            name=f"{label_one} decisive win rate",
            y=["Decisive win rate"],
            x=[est],
            mode="markers",
            marker={"size": 11, "color": "#000000"},
            error_x={
                "type": "data",
                "array": [100 * win_rate.high - est],
                "arrayminus": [est - 100 * win_rate.low],
                "visible": True,
            },
            hovertemplate="%{x:.1f}%<extra>Wilson interval</extra>",
        )
    fig.update_layout(
        _layout(barmode="stack", height=220, xaxis={"title": "% ", "range": [0, 100]})
    )
    return _as_dict(fig)


def confusion_heatmap(report: dict[str, Any]) -> dict[str, Any]:
    """A judge calibration's confusion matrix (``JudgeCalibration.report``): rows the human
    majority, columns the judge's both-order verdict, each cell the pair count."""
    names = {"one": "side one", "tie": "tie", "two": "side two"}
    labels = [names.get(label, label) for label in report.get("labels", [])]
    matrix = report.get("confusion", [])
    fig = go.Figure(
        go.Heatmap(
            z=matrix,
            x=labels,
            y=labels,
            colorscale="Blues",
            text=matrix,
            texttemplate="%{text}",
            hovertemplate="humans: %{y}<br>judge: %{x}<br>pairs: %{z}<extra></extra>",
            showscale=False,
        )
    )
    fig.update_layout(
        _layout(
            height=300,
            xaxis={"title": "judge", "side": "bottom"},
            yaxis={"title": "humans (majority)", "autorange": "reversed"},
        )
    )
    return _as_dict(fig)


# --- latency replays: share under the deadline and TTFT per concurrency level ---------------


def latency_share_under_deadline(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Per concurrency level, the share of requests answered within the 15 s deadline (%),
    as bars labelled with the value (floored to 0.1, so 99.96% never reads as 100%)."""
    deadline_s = DEADLINE_MS / 1000
    levels = [_level_label(level) for level in results]
    shares = [
        None
        if level.get("share_under_15s") is None
        else math.floor(float(level["share_under_15s"]) * 1000) / 10
        for level in results
    ]
    fig = go.Figure(
        go.Bar(
            x=levels,
            y=shares,
            text=[None if s is None else f"{s:g}%" for s in shares],
            textposition="outside",
            marker_color=[LEVEL_COLORS[i % len(LEVEL_COLORS)] for i in range(len(results))],
            name=f"under {deadline_s:g} s",
            hovertemplate="concurrency %{x}: %{y}% under " + f"{deadline_s:g} s<extra></extra>",
        )
    )
    fig.update_layout(
        **_layout(
            xaxis_title="concurrency",
            yaxis_title=f"requests under {deadline_s:g} s (%)",
            height=300,
            showlegend=False,
        )
    )
    fig.update_xaxes(type="category")
    fig.update_yaxes(range=[0, 110], ticksuffix="%")
    return _as_dict(fig)


def latency_ttft_by_concurrency(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Time to first token (ms) of the first model call, P50 and P95, against concurrency
    (levels where no request reached the model have no point)."""
    levels = [_level_label(level) for level in results]
    fig = go.Figure()
    for key, label, dash in (
        ("ttft_p50_ms", "TTFT P50", "solid"),
        ("ttft_p95_ms", "TTFT P95", "dash"),
    ):
        fig.add_trace(
            go.Scatter(
                x=levels,
                y=[level.get(key) for level in results],
                name=label,
                mode="lines+markers",
                line={"dash": dash},
                hovertemplate="concurrency %{x}: %{y:.0f} ms<extra>" + label + "</extra>",
            )
        )
    fig.update_layout(**_layout(xaxis_title="concurrency", yaxis_title="TTFT (ms)", height=300))
    fig.update_xaxes(type="category")
    fig.update_yaxes(rangemode="tozero")
    return _as_dict(fig)


def _level_label(level: dict[str, Any]) -> str:
    """A level's x-axis label: its concurrency, marked when the level was cut short."""
    return f"{level['concurrency']}{' (partial)' if level.get('partial') else ''}"
