"""Reads for offline evaluation: eval sets and runs, a run's items, the report's score table
from selected runs, detected errors under held-out edits, and paired run comparisons.

Eval sets and runs are operator-level (the console's pages check the role first)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.http import Http404

from training_app.evals.eval_stats import (
    ErrorCounts,
    ErrorReduction,
    McNemarResult,
    PairedDifference,
    PairingError,
    detected_errors,
    error_reduction,
    mcnemar_exact,
    paired_bootstrap,
)
from training_app.evals.qa_runner import QAItemResult
from training_app.evals.qa_summary import QARunComparison, compare_qa_results
from training_app.evals.score_table import (
    COLUMNS,
    RunSummary,
    ScoreTable,
    ScoreTableError,
    build_score_table,
)
from training_app.models import EvalItemResult, EvalRun, EvalSet


def eval_sets_list() -> QuerySet[EvalSet]:
    return EvalSet.objects.select_related("harness_version", "harness_version__harness").defer(
        "harness_version__content"
    )


def eval_set_get(*, eval_set_id: int) -> EvalSet:
    try:
        return eval_sets_list().get(pk=eval_set_id)
    except (EvalSet.DoesNotExist, ValueError, TypeError):
        raise Http404("No such eval set.") from None


def eval_runs_list() -> QuerySet[EvalRun]:
    return EvalRun.objects.select_related("eval_set", "endpoint", "created_by")


def eval_run_get(*, run_id: int) -> EvalRun:
    try:
        return eval_runs_list().get(pk=run_id)
    except (EvalRun.DoesNotExist, ValueError, TypeError):
        raise Http404("No such eval run.") from None


def eval_run_items(run: EvalRun, *, failed_only: bool = False) -> QuerySet[EvalItemResult]:
    items = run.item_results.order_by("position")
    return items.filter(passed=False) if failed_only else items


def eval_runs_finished() -> QuerySet[EvalRun]:
    """Runs a table or comparison can use: succeeded, or cancelled with results."""
    return eval_runs_list().filter(
        status__in=[EvalRun.Status.SUCCEEDED, EvalRun.Status.CANCELLED], progress_done__gt=0
    )


# --- the score table ---------------------------------------------------------------------------


@dataclass(frozen=True)
class HeldOutEdits:
    """One model's detected errors under held-out harness edits (its Live-Stream run and its
    T1/T2 runs) and, for every model but the reference, the relative reduction against it."""

    model: str
    errors: ErrorCounts
    reduction: ErrorReduction | None


@dataclass(frozen=True)
class ScoreReport:
    table: ScoreTable
    held_out: tuple[HeldOutEdits, ...]
    reference_model: str
    runs: tuple[EvalRun, ...]
    problems: tuple[str, ...]


def score_report(
    runs: Sequence[EvalRun], *, reference_model: str = "Base", b: int = 2000
) -> ScoreReport:
    """The report's table from ``runs``, plus detected errors under held-out edits for every
    model with a Live-Stream run and T1/T2 runs on the same base items, and each one's
    reduction against ``reference_model``.

    A cell is one model on one benchmark (``EvalRun.benchmark``: a T1/T2 run of a Live-Stream
    set fills the Harness-Variant column). Runs of one model and benchmark on different rooms'
    sets are pooled into one cell (the HAT study's three rooms), item and base ids kept apart
    by the harness version the set was built on (or the set, for IFEval and BFCL), so a
    room's T1/T2 items pair with that room's Live-Stream items. Raises ``ScoreTableError``
    naming the runs when two cover the same model, benchmark and set."""
    scores = _item_scores([run.pk for run in runs])
    groups: dict[tuple[str, str], list[EvalRun]] = defaultdict(list)
    for run in runs:
        if scores[run.pk]:
            groups[run.model_label, run.benchmark].append(run)
    pooled: dict[tuple[str, str], tuple[dict[str, float], dict[str, str]]] = {}
    summaries = []
    for (model, benchmark), group in groups.items():
        _refuse_same_set_twice(model, benchmark, group)
        item_scores: dict[str, float] = {}
        base_ids: dict[str, str] = {}
        for run in group:
            key = _pool_key(run)
            for item, value, base in scores[run.pk]:
                item_scores[f"{key}:{item}"] = value
                base_ids[f"{key}:{item}"] = f"{key}:{base or item}"
        pooled[model, benchmark] = item_scores, base_ids
        summaries.append(
            RunSummary(
                model=model,
                benchmark=benchmark,  # type: ignore[arg-type]
                item_scores=item_scores,
                base_ids=base_ids,
                run_id=" + ".join(f"#{run.pk}" for run in group),
            )
        )
    table = build_score_table(summaries, b=b)
    problems: list[str] = []
    counts: dict[str, ErrorCounts] = {}
    for model in dict.fromkeys(model for model, _benchmark in groups):
        live = pooled.get((model, "live_stream_qa"))
        variant_parts = [
            pooled[model, k]
            for k in ("harness_variant_t1", "harness_variant_t2")
            if (model, k) in pooled
        ]
        if live is None or not variant_parts:
            continue
        live_scores, live_bases = live
        original = {live_bases[item]: bool(value) for item, value in live_scores.items()}
        variants = {item: bool(value) for part, _ in variant_parts for item, value in part.items()}
        bases = {item: base for _, part in variant_parts for item, base in part.items()}
        try:
            counts[model] = detected_errors(original, variants, variant_base_ids=bases)
        except (ValueError, KeyError) as exc:
            problems.append(f"{model}: detected errors need matching base items ({exc})")
    held_out = []
    reference = counts.get(reference_model)
    for model, errors in counts.items():
        reduction = None
        if reference is not None and model != reference_model:
            try:
                reduction = error_reduction(reference, errors, resamples=b)
            except (ValueError, PairingError) as exc:
                problems.append(f"{model}: no reduction against {reference_model} ({exc})")
        held_out.append(HeldOutEdits(model, errors, reduction))
    return ScoreReport(table, tuple(held_out), reference_model, tuple(runs), tuple(problems))


def _item_scores(run_ids: Sequence[int]) -> dict[int, list[tuple[str, float, str]]]:
    out: dict[int, list[tuple[str, float, str]]] = {pk: [] for pk in run_ids}
    rows = (
        EvalItemResult.objects.filter(run_id__in=run_ids)
        .order_by("run_id", "position")
        .values_list("run_id", "item_id", "score", "base_id")
    )
    for run_id, item_id, score, base_id in rows:
        out[run_id].append((item_id, score, base_id))
    return out


COLUMN_TITLES = dict(COLUMNS)


def _pool_key(run: EvalRun) -> str:
    """What keeps pooled runs' items apart: the harness version a QA set was built on (a
    room's Live-Stream set and its Harness-Variant sets share it), else the set."""
    version = run.eval_set.harness_version_id
    return f"h{version}" if version is not None else f"s{run.eval_set_id}"


def _refuse_same_set_twice(model: str, benchmark: str, group: Sequence[EvalRun]) -> None:
    seen: dict[str, EvalRun] = {}
    for run in group:
        key = _pool_key(run)
        if key in seen:
            raise ScoreTableError(
                f"model {model!r} has two {COLUMN_TITLES.get(benchmark, benchmark)} runs on one "
                "room's items "
                f"(#{seen[key].pk} and #{run.pk}); pick one per model, benchmark and room"
            )
        seen[key] = run


# --- paired comparison -------------------------------------------------------------------------


@dataclass(frozen=True)
class RunComparison:
    """Run B against run A on the items both scored: the pass-rate difference with a paired
    bootstrap interval and p-value, exact McNemar, and for QA runs each reward component."""

    run_a: EvalRun
    run_b: EvalRun
    difference: PairedDifference
    mcnemar: McNemarResult
    qa: QARunComparison | None
    only_in_one: int


class ComparisonError(ValueError):
    pass


def eval_runs_compare(*, run_a: EvalRun, run_b: EvalRun) -> RunComparison:
    if run_a.eval_set_id != run_b.eval_set_id:
        raise ComparisonError(
            "a paired comparison needs two runs on the same eval set "
            f"(run #{run_a.pk} is on set #{run_a.eval_set_id}, run #{run_b.pk} on "
            f"#{run_b.eval_set_id})"
        )
    rows_a = {r.item_id: r for r in run_a.item_results.all()}
    rows_b = {r.item_id: r for r in run_b.item_results.all()}
    common = sorted(rows_a.keys() & rows_b.keys())
    if not common:
        raise ComparisonError("the two runs share no scored items")
    a = {k: rows_a[k].score for k in common}
    b = {k: rows_b[k].score for k in common}
    difference = paired_bootstrap(a, b)
    mcnemar = mcnemar_exact(
        {k: rows_a[k].passed for k in common}, {k: rows_b[k].passed for k in common}
    )
    qa = None
    if run_a.eval_set.is_qa:
        qa = compare_qa_results(
            [QAItemResult.from_dict(rows_a[k].result) for k in common],
            [QAItemResult.from_dict(rows_b[k].result) for k in common],
        )
    only = len(rows_a.keys() ^ rows_b.keys())
    return RunComparison(run_a, run_b, difference, mcnemar, qa, only)


def summary_cell(run: EvalRun) -> dict[str, Any] | None:
    """The run's headline score in points (pass rate, or IFEval prompt-level strict)."""
    summary = run.summary or {}
    estimate = summary.get("score") or summary.get("prompt_level_strict")
    if not estimate or estimate.get("estimate") is None:
        return None
    return {
        key: round(100 * estimate[key], 1) if estimate.get(key) is not None else None
        for key in ("estimate", "ci_low", "ci_high")
    } | {"n": estimate.get("n")}
