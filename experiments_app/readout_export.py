"""The readout as plain data: a JSON-ready dict (API) and CSV rows (console export).

Undefined numbers (an arm with < 2 units, an unbounded Fieller set) are ``None`` in JSON and
empty cells in CSV, never NaN (not valid JSON).
"""

from __future__ import annotations

import math
from typing import Any

from experiments_app.readouts import Comparison, Readout
from experiments_app.services import percent
from experiments_app.stats.mean_effects import Effect


def _num(value: float | int | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def effect_dict(effect: Effect | None) -> dict[str, Any] | None:
    if effect is None:
        return None
    return {
        "method": effect.method,
        "estimate": _num(effect.estimate),
        "ci_low": _num(effect.ci_low),
        "ci_high": _num(effect.ci_high),
        "p_value": _num(effect.p_value),
        "std_error": _num(effect.std_error),
        "significant": effect.significant,
        "bounded": effect.bounded,
    }


def _comparison(readout: Readout, comparison: Comparison) -> dict[str, Any]:
    result = comparison.readout
    daily = result.daily
    cumulative = []
    days = readout.days
    if daily is not None:
        for point in daily.cumulative:
            cumulative.append(
                {
                    "day": days[point.day].isoformat(),
                    "absolute": effect_dict(point.absolute),
                    "relative": effect_dict(point.relative),
                    "sequential_relative": effect_dict(
                        point.sequential.relative if point.sequential else None
                    ),
                }
            )
    return {
        "arm": comparison.arm.name,
        "control_mean": _num(result.absolute.control_mean),
        "treatment_mean": _num(result.absolute.treatment_mean),
        "control_n": result.absolute.control_n,
        "treatment_n": result.absolute.treatment_n,
        "absolute": effect_dict(result.absolute),
        "relative": effect_dict(result.relative),
        "relative_fieller": effect_dict(result.relative_fieller),
        "cuped": None
        if result.cuped is None
        else {
            "absolute": effect_dict(result.cuped.absolute),
            "relative": effect_dict(result.cuped.relative),
            "theta": _num(result.cuped.theta),
            "variance_reduction": _num(result.cuped.variance_reduction),
        },
        "headline_relative": effect_dict(result.headline_relative),
        "sequential_relative": effect_dict(
            result.sequential.relative if result.sequential else None
        ),
        "p_holm": _num(comparison.p_holm),
        "mde_relative": _num(result.mde.mde_relative if result.mde else None),
        "heterogeneity": None
        if daily is None
        else {
            "q": _num(daily.heterogeneity.q),
            "df": daily.heterogeneity.df,
            "p_value": _num(daily.heterogeneity.p_value),
            "i_squared": _num(daily.heterogeneity.i_squared),
        },
        "daily": []
        if daily is None
        else [
            {
                "day": days[d.day].isoformat(),
                "absolute": effect_dict(d.absolute),
                "relative": effect_dict(d.relative),
                "p_holm": _num(d.p_holm),
            }
            for d in daily.days
        ],
        "cumulative": cumulative,
    }


def readout_dict(readout: Readout) -> dict[str, Any]:
    experiment = readout.experiment
    srm = readout.srm
    names = {str(arm.pk): arm.name for arm in readout.arms}
    return {
        "experiment": experiment.pk,
        "name": experiment.name,
        "status": experiment.status,
        "unit": experiment.unit,
        "estimator": readout.kind,
        "alpha": experiment.alpha,
        "cuped": experiment.cuped,
        "sequential": experiment.sequential,
        "refreshed_at": readout.refreshed_at.isoformat() if readout.refreshed_at else None,
        "phases_analysed": list(readout.group.numbers) if readout.group else [],
        "phase_groups": [
            {
                "phases": list(group.numbers),
                "weights": {
                    names.get(str(k), str(k)): percent(v) for k, v in group.weights.items()
                },
            }
            for group in readout.groups
        ],
        "phases": [
            {
                "number": phase.number,
                "started_at": phase.started_at.isoformat(),
                "ended_at": phase.ended_at.isoformat() if phase.ended_at else None,
                "coverage": percent(phase.coverage),
                "note": phase.note,
            }
            for phase in readout.phases
        ],
        "days": [day.isoformat() for day in readout.days],
        "arms": [
            {
                "name": count.arm.name,
                "kind": count.arm.kind,
                "control": count.arm.is_control,
                "weight": percent(count.weight),
                "units": count.units,
                "uvs": _num(count.uvs),
            }
            for count in readout.counts
        ],
        "srm": None
        if srm is None
        else {
            "flagged": srm.flagged,
            "p_value": _num(srm.p_value),
            "statistic": _num(srm.statistic),
            "message": srm.message,
            "observed": dict(zip(srm.arms, srm.observed, strict=True)),
            "expected": {a: _num(e) for a, e in zip(srm.arms, srm.expected, strict=True)},
        },
        "metrics": [
            {
                "metric": metric.metric,
                "label": metric.label,
                "primary": metric.primary,
                "comparisons": [_comparison(readout, c) for c in metric.comparisons],
            }
            for metric in readout.metrics
        ],
        "guardrails": [
            {
                "metric": guard.metric,
                "label": guard.label,
                "tolerance": guard.tolerance,
                "breached": guard.breached,
                "breaches": list(guard.breaches),
                "values": [
                    {"arm": v.arm.name, "replies": v.replies, "value": _num(v.value)}
                    for v in guard.values
                ],
            }
            for guard in readout.guardrails
        ],
        "notes": list(readout.notes),
    }


CSV_HEADER = (
    "section",
    "metric",
    "arm",
    "day",
    "method",
    "control_n",
    "arm_n",
    "control_mean",
    "arm_mean",
    "estimate",
    "ci_low",
    "ci_high",
    "p_value",
    "p_holm",
)


def _cell(value: float | int | None) -> str:
    number = _num(value)
    return "" if number is None else repr(number)


def readout_csv_rows(readout: Readout) -> list[list[str]]:
    """One row per effect: the headline table, then the per-day and cumulative series."""
    rows: list[list[str]] = [list(CSV_HEADER)]

    def add(section: str, metric: str, c: Comparison, day: str, e: Effect, p_holm: float) -> None:
        rows.append(
            [
                section,
                metric,
                c.arm.name,
                day,
                e.method,
                str(e.control_n),
                str(e.treatment_n),
                _cell(e.control_mean),
                _cell(e.treatment_mean),
                _cell(e.estimate),
                _cell(e.ci_low),
                _cell(e.ci_high),
                _cell(e.p_value),
                _cell(p_holm),
            ]
        )

    for metric in readout.metrics:
        for comparison in metric.comparisons:
            result = comparison.readout
            effects = [result.absolute, result.relative, result.relative_fieller]
            if result.cuped is not None:
                effects += [result.cuped.absolute, result.cuped.relative]
            for effect in effects:
                # Holm (across metrics and arms) applies to the headline relative effect.
                holm = comparison.p_holm if effect is result.headline_relative else math.nan
                add("summary", metric.metric, comparison, "", effect, holm)
            if result.daily is None:
                continue
            for d in result.daily.days:
                day = readout.days[d.day].isoformat()
                add("daily", metric.metric, comparison, day, d.relative, d.p_holm)
            for point in result.daily.cumulative:
                day = readout.days[point.day].isoformat()
                add("cumulative", metric.metric, comparison, day, point.relative, math.nan)
    return rows
