"""The HAT study's ``results.json`` as Markdown tables (pure: the dict in, text out): the
score table in the source report's form with 95% intervals, every paired comparison with its
interval and whether it excludes 0, the training curves' start and end, wall times and the
latency replay. docs/RESULTS.md quotes this output."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

NAMES = {
    "live_to_variant_drop": "Live-Stream -> Harness-Variant drop, B minus A (paired by base item)",
    "variant_minus_live": "Harness-Variant minus Live-Stream (one model)",
    "t1_minus_t2": "T1 minus T2 (one model)",
    "ifeval": "IFEval prompt-level strict, B minus A",
    "error_reduction": "errors under held-out edits, relative reduction of B vs A",
    "live": "Live-Stream QA, B minus A",
    "bfcl_augmented_minus_original": "BFCL held-out-augmented minus original (one model)",
    "bfcl_augmented": "BFCL held-out-augmented, B minus A",
}
SCORE_COLUMNS = (
    ("live", "Live-Stream QA"),
    ("harness_variant", "Harness-Variant QA (T1+T2)"),
    ("ifeval", "IFEval prompt-level strict"),
    ("bfcl", "BFCL live_simple"),
    ("bfcl_augmented", "BFCL live_simple, held-out-augmented"),
)


def _pct(value: float | None) -> str:
    if value is None or value != value:
        return "n/a"
    return f"{100 * value:.1f}"


def _interval(record: Mapping[str, Any]) -> str:
    return f"{_pct(record['estimate'])} [{_pct(record['ci_low'])}, {_pct(record['ci_high'])}]"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def score_table(results: Mapping[str, Any]) -> list[str]:
    scores = results["scores"]
    labels = results.get("labels", {})
    first = next(iter(scores.values()), None)
    header = ["Setup"] + [
        f"{title} (n={first[key]['n'] if first else 0})" for key, title in SCORE_COLUMNS
    ]
    rows = [
        [labels.get(key, key)] + [_interval(row[column]) for column, _t in SCORE_COLUMNS]
        for key, row in scores.items()
    ]
    return _table(header, rows)


def variant_table(results: Mapping[str, Any]) -> list[str]:
    rows = [
        [results.get("labels", {}).get(key, key), _interval(row["t1"]), _interval(row["t2"])]
        for key, row in results["scores"].items()
    ]
    return _table(["Setup", "T1", "T2"], rows)


def comparison_table(results: Mapping[str, Any]) -> list[str]:
    labels = results.get("labels", {})
    rows = []
    for record in results["comparisons"]:
        a, b = (
            labels.get(record["model_a"], record["model_a"]),
            labels.get(record["model_b"], record["model_b"]),
        )
        who = a if a == b else f"A {a}, B {b}"
        if record["name"] == "error_reduction":
            counts = f"errors {record['errors_reference']} -> {record['errors_candidate']}"
            extra = f"{counts} over {record['n']} base items"
        else:
            extra = f"n={record['n']}, p={record['p_value']:.3f}"
        rows.append(
            [
                NAMES.get(record["name"], record["name"]),
                who,
                _interval(record),
                f"±{_pct(record['half_width'])}",
                extra,
                "**yes**" if record["excludes_zero"] else "no",
            ]
        )
    return _table(
        ["comparison", "models", "estimate [95% CI], points", "resolves", "detail", "effect"],
        rows,
    )


def curve_lines(results: Mapping[str, Any]) -> list[str]:
    rows = []
    for run, stages in results.get("curves", {}).items():
        for stage, data in stages.items():
            series = data.get("series", {})
            for metric in ("loss", "reward", "jsd", "divergence", "kl"):
                points = series.get(metric)
                if not points:
                    continue
                values = [v for _s, v in points]
                rows.append(
                    [
                        run,
                        stage,
                        metric,
                        str(len(points)),
                        f"{values[0]:.4g}",
                        f"{min(values):.4g}",
                        f"{values[-1]:.4g}",
                        f"{data['wall_s']:.0f}" if data.get("wall_s") else "n/a",
                    ]
                )
    return _table(
        ["run", "stage", "metric", "points", "first", "min", "last", "stage wall s"], rows
    )


def latency_lines(results: Mapping[str, Any]) -> list[str]:
    latency = results.get("latency")
    if not latency:
        return ["(no latency replay in these results)"]
    rows = []
    for key in ("base", "hat"):
        entry = latency.get(key) or {}
        for level in entry.get("levels") or []:
            rows.append(
                [
                    latency["endpoints"][key],
                    str(entry["report"]),
                    str(level.get("concurrency")),
                    str(level.get("requests")),
                    f"{level.get('p50_ms') or 0:.0f}",
                    f"{level.get('p95_ms') or 0:.0f}",
                    str(level.get("fallbacks")),
                ]
            )
    return _table(
        ["endpoint", "report", "concurrency", "requests", "P50 ms", "P95 ms", "fallbacks"], rows
    )


def console_lines(results: Mapping[str, Any]) -> list[str]:
    console = results.get("console")
    if not console:
        return []
    agreement = (
        f"its estimates agree with the tables above to "
        f"{console['max_estimate_difference_points']:.2g} points, n equal in every cell"
        if not console["mismatches"]
        else f"it differs from the tables above: {'; '.join(console['mismatches'])}"
    )
    return [
        "## The console's score table",
        "",
        f"The same runs on the console's score table: `{console['score_table_url']}`; {agreement}.",
        "",
    ]


def results_markdown(results: Mapping[str, Any]) -> str:
    scale = results["scale"]
    walls = results.get("wall_s", {})
    lines = [
        f"# HAT study, scale `{scale['name']}`",
        "",
        "Scores in percent with 95% percentile-bootstrap intervals.",
        "",
        *score_table(results),
        "",
        "## Harness-Variant sets",
        "",
        *variant_table(results),
        "",
        "## Comparisons",
        "",
        *comparison_table(results),
        "",
        "## Training curves",
        "",
        *curve_lines(results),
        "",
        "## Latency replay (live reply path)",
        "",
        *latency_lines(results),
        "",
        "## Wall time per step (s)",
        "",
        *_table(["step", "wall s"], [[k, f"{v:.0f}"] for k, v in walls.items()]),
        "",
        f"Infrastructure errors per model: {results.get('infrastructure_errors')}",
        "",
        *console_lines(results),
    ]
    return "\n".join(lines)
