"""Plotly figures of an experiment readout, as plain dicts for ``json_script``.

The page draws them with the plotly.js bundled in the ``plotly`` Python package (served by
the console, never a CDN). Every figure shows relative lift in percent with its interval, so
the eye lands on the uncertainty, not on the point estimate:

* ``ci_bars``: the headline relative lift of each metric and arm with its CI (and the
  always-valid interval when the experiment is sequential);
* ``cumulative_lift``: the estimate at each day's cut-off with its CI band (and CS band);
* ``daily_effects``: each day's effect with its CI and the inverse-variance pooled effect.
"""

from __future__ import annotations

import json
import math
from typing import Any

import plotly.graph_objects as go

from experiments_app.readouts import Readout
from experiments_app.stats.mean_effects import Effect

ARM_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
FONT = "system-ui, -apple-system, Segoe UI, Roboto, Helvetica Neue, Arial, sans-serif"


def _layout(**extra: Any) -> dict[str, Any]:
    layout: dict[str, Any] = {
        "template": "plotly_white",
        "font": {"family": FONT, "size": 12, "color": "#1f2933"},
        "margin": {"l": 56, "r": 16, "t": 16, "b": 48},
        "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        "height": 320,
    }
    layout.update(extra)
    return layout


def _as_dict(fig: go.Figure) -> dict[str, Any]:
    return dict(json.loads(fig.to_json()))


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
            plus.append(None if high is None or estimate is None else high - estimate)
            minus.append(None if low is None or estimate is None else estimate - low)
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


def cumulative_lift(readout: Readout, metric: str) -> dict[str, Any]:
    fig = go.Figure()
    days = [d.isoformat() for d in readout.days]
    result = next(m for m in readout.metrics if m.metric == metric)
    for index, comparison in enumerate(result.comparisons):
        color = ARM_COLORS[index % len(ARM_COLORS)]
        daily = comparison.readout.daily
        if daily is None:
            continue
        points = daily.cumulative
        x = [days[p.day] for p in points]
        estimate = [_pct(p.relative.estimate) for p in points]
        if any(p.sequential is not None for p in points):
            low = [_pct(p.sequential.relative.ci_low) if p.sequential else None for p in points]
            high = [_pct(p.sequential.relative.ci_high) if p.sequential else None for p in points]
            _band(fig, x, low, high, color, "always-valid CS", 0.08)
        _band(
            fig,
            x,
            [_pct(p.relative.ci_low) for p in points],
            [_pct(p.relative.ci_high) for p in points],
            color,
            f"{100 * (1 - readout.experiment.alpha):.0f}% CI",
            0.18,
        )
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
    return _as_dict(fig)


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
    days = [d.isoformat() for d in readout.days]
    result = next(m for m in readout.metrics if m.metric == metric)
    for index, comparison in enumerate(result.comparisons):
        color = ARM_COLORS[index % len(ARM_COLORS)]
        daily = comparison.readout.daily
        if daily is None:
            continue
        x, y, plus, minus = [], [], [], []
        for day in daily.days:
            estimate, low, high = _bounds(day.relative)
            x.append(days[day.day])
            y.append(estimate)
            plus.append(None if high is None or estimate is None else high - estimate)
            minus.append(None if low is None or estimate is None else estimate - low)
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
        pooled = _pct(daily.heterogeneity.pooled_estimate)
        if pooled is not None:
            fig.add_hline(
                y=pooled,
                line_color=color,
                line_width=1,
                annotation_text=f"pooled {pooled:+.2f}%",
                annotation_position="top left",
                annotation_font_color=color,
            )
    fig.add_hline(y=0, line_color="#7b8794", line_dash="dash")
    fig.update_layout(**_layout(yaxis_title="relative effect that day (%)", xaxis_title="day"))
    return _as_dict(fig)
