"""Writes for offline evaluation: eval sets (built from a room, uploaded, or the shipped
IFEval prompts) and eval runs, including the body the ``eval`` Celery task runs.

A set is stored only when every gold passes its own harness, hooks and catalog
(``gold_replay_failures``); otherwise it would count against every model. A run claims its
row with one conditional UPDATE, writes each item's result as it finishes (so the page and
the progress bar move), checks its cancel flag between items, and on a redelivered message
continues after the items it already stored instead of starting again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from django.core.files.base import ContentFile
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from harness_app.hsa.bfcl_data import CATEGORIES as BFCL_CATEGORIES
from harness_app.hsa.bfcl_data import load_category
from harness_app.models import HarnessVersion
from harness_app.selectors import room_catalog_snapshot
from inference.agents.model_port import ChatModel, ModelCallFailed
from inference.agents.openai_model import OpenAIChatModel
from inference.clients.openai_compatible import (
    ClientConfig,
    ModelCallError,
    OpenAICompatibleClient,
)
from training_app.evals import ifeval
from training_app.evals.batched_local_model import BatchedLocalChatModel
from training_app.evals.bfcl import score_result
from training_app.evals.bfcl.prompting import prompting_messages
from training_app.evals.eval_stats import bootstrap_mean
from training_app.evals.local_generation import GenerationSettings, chat_messages
from training_app.evals.publish_gate import retarget_qa_set
from training_app.evals.qa_runner import (
    QAItemResult,
    QARunConfig,
    QARunError,
    gold_replay_failures,
    run_qa_set,
)
from training_app.evals.qa_set_document import QASetFormatError, dumps_qa_set, loads_qa_set
from training_app.evals.qa_sets import (
    QASet,
    QASetError,
    build_harness_variant_qa_set,
    build_live_stream_qa_set,
)
from training_app.evals.qa_summary import summarize_qa_results
from training_app.models import EvalItemResult, EvalRun, EvalSet, ModelEndpoint

log = logging.getLogger(__name__)

QA_MAX_TOKENS = 256
IFEVAL_MAX_TOKENS = 512
IFEVAL_MIN_TOKENS = 256  # length instructions must not fail by truncation
BFCL_MAX_TOKENS = 512
MAX_REPORTED_PROBLEMS = 20
IFEVAL_LOCAL_CHUNK = 32  # prompts per in-process generate call: progress and cancel points
LOCAL_DEADLINE_S = 3600.0  # a QA item's deadline on a local checkpoint (batched, no network)
CANCEL_POLL_S = 0.25  # how often a run reads its cancel flag

# The source files whose digest is a run's scorer version: a changed rule changes it.
_EVALS_DIR = Path(__file__).resolve().parent.parent / "evals"
SCORER_SOURCES = {
    "qa": ("qa_scoring.py", "qa_runner.py", "qa_sets.py", "../pipeline/rewards.py"),
    "ifeval": ("ifeval/evaluation.py", "ifeval/instructions.py", "ifeval/text.py"),
    "bfcl": ("bfcl/checker.py", "bfcl/decode.py", "bfcl/scoring.py", "bfcl/prompting.py"),
}


class EvalSetError(ValueError):
    """A set that cannot be stored; ``problems`` says where and what."""

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)


class EvalRunError(ValueError):
    """A run that cannot be created; ``field`` names the input at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


# --- eval sets ---------------------------------------------------------------------------------


@transaction.atomic
def eval_set_build_qa(
    *,
    harness_version: HarnessVersion,
    name: str,
    variant_set: str = "",
    per_type: int | None = None,
    seed: int = 0,
    created_by: Any = None,
) -> EvalSet:
    """A Live-Stream QA set from the room's catalog and ``harness_version`` (or, with
    ``variant_set`` t1/t2, the Harness-Variant set of it under held-out HSA edits). Returns the
    stored set with the same content when there is one."""
    if variant_set not in ("", "t1", "t2"):
        raise EvalSetError(f"variant_set must be '', t1 or t2, got {variant_set!r}")
    room = harness_version.harness.room
    catalog = room_catalog_snapshot(room)
    if not catalog.get("products"):
        raise EvalSetError(f"room {room.name!r} has no products on sale to ask about")
    try:
        qa_set = build_live_stream_qa_set(
            catalog,
            harness_version.content,
            name=name,
            harness_id=str(harness_version.pk),
            seed=seed,
            per_type=per_type,
        )
        if variant_set:
            qa_set = build_harness_variant_qa_set(qa_set, variant_set, seed=seed, name=name)  # type: ignore[arg-type]
    except QASetError as exc:
        raise EvalSetError(str(exc)) from None
    if not qa_set.items:
        raise EvalSetError("the catalog and harness give no items for this set")
    return _store_qa_set(qa_set, harness_version=harness_version, created_by=created_by)


@transaction.atomic
def eval_set_upload(
    *,
    name: str,
    data: bytes,
    harness_version: HarnessVersion | None = None,
    created_by: Any = None,
) -> EvalSet:
    """A QA set from an uploaded hat-qa-set JSONL document (docs/EVALUATION_QA.md)."""
    try:
        qa_set = loads_qa_set(data, max_problems=MAX_REPORTED_PROBLEMS)
    except QASetFormatError as exc:
        problems = [f"line {p.line}, {p.field}: {p.message}" for p in exc.problems]
        raise EvalSetError(f"{len(problems)} problem(s) in the document", problems) from None
    if name:
        qa_set = replace(qa_set, name=name)
    return _store_qa_set(qa_set, harness_version=harness_version, created_by=created_by)


def _store_qa_set(
    qa_set: QASet, *, harness_version: HarnessVersion | None, created_by: Any
) -> EvalSet:
    if qa_set.catalog is None:
        raise EvalSetError("the set carries no catalog snapshot; its golds cannot be checked")
    try:
        failures = gold_replay_failures(qa_set)
    except QARunError as exc:
        raise EvalSetError(str(exc)) from None
    if failures:
        problems = [f"item {item}: {'; '.join(reasons)}" for item, reasons in failures.items()]
        raise EvalSetError(
            f"{len(failures)} item(s) whose gold fails its own harness or catalog",
            problems[:MAX_REPORTED_PROBLEMS],
        )
    existing = EvalSet.objects.filter(kind=qa_set.kind, content_hash=qa_set.content_hash).first()
    if existing is not None:
        return existing
    text = dumps_qa_set(qa_set)
    eval_set = EvalSet(
        name=qa_set.name[:200],
        kind=qa_set.kind,
        variant_set=qa_set.variant_set or "",
        harness_version=harness_version,
        content_hash=qa_set.content_hash,
        items=len(qa_set.items),
        source={
            **dict(qa_set.source),
            "policy": qa_set.policy,
            "seed": qa_set.seed,
            "skipped": len(qa_set.skipped),
            "harnesses": len(qa_set.harnesses),
        },
        created_by=created_by,
    )
    eval_set.file.save(f"{_slug(qa_set.name)}.jsonl", ContentFile(text.encode()), save=False)
    eval_set.save()
    return eval_set


@transaction.atomic
def eval_set_ifeval(*, created_by: Any = None) -> EvalSet:
    """The 541 IFEval prompts shipped with the scorer, stored once."""
    data = ifeval_input_data()
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    existing = EvalSet.objects.filter(kind=EvalSet.Kind.IFEVAL, content_hash=digest).first()
    if existing is not None:
        return existing
    count = sum(1 for line in data.splitlines() if line.strip())
    eval_set = EvalSet(
        name="IFEval (541 prompts)",
        kind=EvalSet.Kind.IFEVAL,
        content_hash=digest,
        items=count,
        source={"origin": "google-research instruction_following_eval, Apache-2.0"},
        created_by=created_by,
    )
    eval_set.file.save("ifeval-input-data.jsonl", ContentFile(data), save=False)
    eval_set.save()
    return eval_set


@transaction.atomic
def eval_set_bfcl(
    *,
    categories: Sequence[str],
    per_category: int | None = None,
    name: str = "",
    augmentation: str = "",
    seed: int = 0,
    created_by: Any = None,
) -> EvalSet:
    """BFCL v4 single-turn cases of ``categories`` from the shipped data (every case, or
    ``per_category`` of each at an even stride), stored once per content. ``augmentation``
    names an HSA BFCL policy (``bfcl-tool-schemas-heldout`` for evaluation): each case is
    replaced by its augmented record (renamed functions and parameters, distractors, the
    ground truth rewritten; ``harness_app.hsa.bfcl_augment``), one the augmentation refused
    is left out, and each record keeps ``source_id`` so a run on it pairs with a run on the
    original cases."""
    from harness_app.hsa.bfcl_augment import augment_bfcl
    from harness_app.hsa.policy import POLICIES

    policy = POLICIES.get(augmentation) if augmentation else None
    if augmentation and (policy is None or policy.name_format != "python"):
        choices = ", ".join(n for n, p in POLICIES.items() if p.name_format == "python")
        raise EvalSetError(f"augmentation must be one of {choices}; got {augmentation!r}")
    unknown = [c for c in categories if c not in BFCL_CATEGORIES]
    if not categories or unknown:
        raise EvalSetError(
            f"unknown BFCL categories {unknown}; choose from {', '.join(BFCL_CATEGORIES)}"
            if unknown
            else "choose at least one BFCL category"
        )
    if per_category is not None and per_category < 1:
        raise EvalSetError("per_category must be at least 1")
    lines = []
    for category in dict.fromkeys(categories):
        cases, answers = load_category(category)
        augmented: dict[str, dict[str, Any]] = {}
        if policy is not None:
            records, _report = augment_bfcl(category, seed=seed, policy=policy)
            augmented = {r["source_id"]: r for r in records if r["valid"]}
        if per_category is not None and per_category < len(cases):
            stride = len(cases) / per_category
            cases = [cases[int(i * stride)] for i in range(per_category)]
        for case in cases:
            case_id = str(case["id"])
            truth = answers[case_id]["ground_truth"] if answers else []
            record = {
                "id": case_id,
                "category": category,
                "question": case["question"],
                "function": case["function"],
                "ground_truth": truth,
            }
            if policy is not None:
                if case_id not in augmented:
                    continue  # refused by the augmentation (its report says why)
                made = augmented[case_id]
                record = {
                    "id": made["id"],
                    "source_id": case_id,
                    "category": category,
                    "question": made["question"],
                    "function": made["function"],
                    "ground_truth": made["ground_truth"],
                }
            lines.append(json.dumps(record, sort_keys=True, ensure_ascii=False))
    if not lines:
        raise EvalSetError("the augmentation refused every case of these categories")
    data = ("\n".join(lines) + "\n").encode("utf-8")
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    existing = EvalSet.objects.filter(kind=EvalSet.Kind.BFCL, content_hash=digest).first()
    if existing is not None:
        return existing
    label = ", ".join(dict.fromkeys(categories))
    if policy is not None:
        label += f" ({policy.name}, seed {seed})"
    eval_set = EvalSet(
        name=(name or f"BFCL {label}")[:200],
        kind=EvalSet.Kind.BFCL,
        content_hash=digest,
        items=len(lines),
        source={
            "origin": "BFCL v4 (bfcl-eval 2026.3.23 data, Apache-2.0)",
            "categories": list(dict.fromkeys(categories)),
            "per_category": per_category,
            **({"augmentation": policy.name, "seed": seed} if policy is not None else {}),
        },
        created_by=created_by,
    )
    eval_set.file.save(f"{_slug(eval_set.name)}.jsonl", ContentFile(data), save=False)
    eval_set.save()
    return eval_set


def ifeval_input_data() -> bytes:
    from importlib import resources

    return resources.files(ifeval).joinpath("data", "input_data.jsonl").read_bytes()


# --- eval runs ---------------------------------------------------------------------------------


@transaction.atomic
def eval_run_create(
    *,
    eval_set: EvalSet,
    model_label: str,
    endpoint: ModelEndpoint | None = None,
    local_model_dir: str = "",
    max_tokens: int | None = None,
    max_concurrency: int | None = None,
    item_limit: int | None = None,
    harness_version: HarnessVersion | None = None,
    variant_set: str = "",
    publish_check: Any = None,
    gate_arm: str = "",
    judge_version: Any = None,
    created_by: Any = None,
) -> EvalRun:
    """A queued run of ``eval_set`` by one model (an endpoint, or a local checkpoint generated
    in process), enqueued on the ``eval`` queue once the transaction commits. A Live-Stream set
    can run on another ``harness_version`` (golds moved through the edit's renames) and under
    a held-out HSA ``variant_set`` ("t1", "t2") of its harness."""
    label = model_label.strip()
    if not label:
        raise EvalRunError("model_label", "name the model (the score table's row)")
    if (endpoint is None) == (not local_model_dir):
        raise EvalRunError("endpoint", "choose either a model endpoint or a local checkpoint")
    if local_model_dir and not (Path(local_model_dir) / "config.json").is_file():
        raise EvalRunError(
            "local_model_dir", f"{local_model_dir} is not a checkpoint (no config.json)"
        )
    if endpoint is not None and not endpoint.is_active:
        raise EvalRunError("endpoint", f"endpoint {endpoint.name} is not active")
    if item_limit is not None and item_limit < 1:
        raise EvalRunError("item_limit", "item_limit must be at least 1")
    if (
        harness_version is not None or variant_set
    ) and eval_set.kind != EvalSet.Kind.LIVE_STREAM_QA:
        field = "harness_version_id" if harness_version is not None else "variant_set"
        raise EvalRunError(field, "only a Live-Stream QA set runs on another harness or variant")
    if variant_set not in ("", "t1", "t2"):
        raise EvalRunError("variant_set", "variant_set must be t1, t2 or empty")
    if judge_version is not None and eval_set.kind != EvalSet.Kind.LIVE_STREAM_QA:
        raise EvalRunError("judge_version_id", "only a Live-Stream QA run is scored by a judge")
    concurrency = max_concurrency or min(4, endpoint.max_concurrency if endpoint else 4)
    if endpoint is not None and concurrency > endpoint.max_concurrency:
        raise EvalRunError(
            "max_concurrency",
            f"endpoint {endpoint.name} takes at most {endpoint.max_concurrency} requests at once",
        )
    if not 1 <= concurrency <= 64:
        raise EvalRunError("max_concurrency", "max_concurrency must be between 1 and 64")
    if eval_set.is_qa:
        tokens = QA_MAX_TOKENS if max_tokens is None else max_tokens
        native = endpoint is not None and endpoint.tool_mode == ModelEndpoint.ToolMode.NATIVE
        try:
            generation = QARunConfig(
                tool_mode="native" if native else "text",
                max_tokens=tokens,
                # in process there is no network to wait on; a call's time is its batch's
                deadline_s=QARunConfig.deadline_s if endpoint is not None else LOCAL_DEADLINE_S,
            ).to_dict()
        except QARunError as exc:
            raise EvalRunError("max_tokens", str(exc)) from None
    elif eval_set.kind == EvalSet.Kind.BFCL:
        tokens = BFCL_MAX_TOKENS if max_tokens is None else max_tokens
        if not 1 <= tokens <= 32768:
            raise EvalRunError("max_tokens", "max_tokens must be between 1 and 32768")
        generation = {"decoding": "greedy", "max_tokens": tokens, "prompting": "bfcl-default"}
    else:
        tokens = IFEVAL_MAX_TOKENS if max_tokens is None else max_tokens
        if tokens < IFEVAL_MIN_TOKENS:
            raise EvalRunError(
                "max_tokens",
                f"IFEval needs max_tokens >= {IFEVAL_MIN_TOKENS}, so length instructions are "
                "not failed by truncation",
            )
        generation = GenerationSettings(
            max_new_tokens=min(tokens, 8192),
            # in process, max_concurrency is the batch (an endpoint keeps the default)
            batch_size=concurrency if local_model_dir else GenerationSettings.batch_size,
        ).record()
    total = min(eval_set.items, item_limit) if item_limit else eval_set.items
    run = EvalRun.objects.create(
        eval_set=eval_set,
        endpoint=endpoint,
        local_model_dir=local_model_dir,
        model_label=label[:80],
        generation=generation,
        max_concurrency=concurrency,
        item_limit=item_limit,
        harness_version=harness_version,
        variant_set=variant_set,
        publish_check=publish_check,
        gate_arm=gate_arm,
        judge_version=judge_version,
        progress_total=total,
        created_by=created_by,
    )
    from training_app.tasks import run_eval

    transaction.on_commit(lambda: run_eval.delay(run.pk))
    return run


def eval_run_cancel(*, run: EvalRun) -> EvalRun:
    """Ask a run to stop: no new item starts, the ones in flight finish and are kept."""
    EvalRun.objects.filter(pk=run.pk).exclude(
        status__in=[EvalRun.Status.SUCCEEDED, EvalRun.Status.FAILED, EvalRun.Status.CANCELLED]
    ).update(cancel_requested=True)
    EvalRun.objects.filter(pk=run.pk, status=EvalRun.Status.QUEUED).update(
        status=EvalRun.Status.CANCELLED, finished_at=timezone.now()
    )
    run.refresh_from_db()
    return run


def eval_run_execute(run_id: int) -> str:
    """The body of the ``eval`` task: run the items the run has not stored yet, then the
    summary. Returns the final status."""
    claimed = (
        EvalRun.objects.filter(pk=run_id, cancel_requested=False)
        .filter(Q(status=EvalRun.Status.QUEUED) | Q(status=EvalRun.Status.RUNNING))
        .update(status=EvalRun.Status.RUNNING, started_at=timezone.now())
    )
    run = EvalRun.objects.select_related("eval_set", "endpoint").get(pk=run_id)
    if not claimed:
        if not run.is_finished:  # cancelled before it started
            _finish(run, EvalRun.Status.CANCELLED)
            _settle_check(run)
        return run.status
    try:
        run.versions = _versions(run)
        run.save(update_fields=["versions", "updated_at"])
        cancelled = _EXECUTORS[run.eval_set.kind](run)
        run.summary = json_safe(eval_run_summary(run))
        run.save(update_fields=["summary", "updated_at"])
    except Exception as exc:  # recorded on the run for the operator; the worker lives on
        log.exception("eval run %s failed", run.pk)
        run.error = f"{type(exc).__name__}: {exc}"[:4000]
        _finish(run, EvalRun.Status.FAILED)
        _settle_check(run)
        return run.status
    _finish(run, EvalRun.Status.CANCELLED if cancelled else EvalRun.Status.SUCCEEDED)
    _settle_check(run)
    return run.status


def _settle_check(run: EvalRun) -> None:
    if run.publish_check_id is not None:
        from training_app.services.publish_gate import publish_check_settle

        publish_check_settle(check_id=run.publish_check_id)


def eval_run_summary(run: EvalRun) -> dict[str, Any]:
    """The run's scores from its stored item results (what the run page shows)."""
    rows = list(run.item_results.order_by("position").values("result", "passed", "base_id"))
    if run.eval_set.is_qa:
        results = [QAItemResult.from_dict(row["result"]) for row in rows]
        if not results:
            return {"n": 0}
        summary = summarize_qa_results(results)
        return {"kind": "qa", **asdict(summary)}
    if run.eval_set.kind == EvalSet.Kind.BFCL:
        return bfcl_summary([row["result"] for row in rows])
    return ifeval_summary([row["result"] for row in rows])


def bfcl_summary(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Accuracy (BFCL's AST rule) over every case with its bootstrap interval, and per
    category (the cases pooled, not BFCL's own weighting of categories)."""
    if not records:
        return {"kind": "bfcl", "n": 0}
    by_category: dict[str, list[float]] = {}
    for record in records:
        by_category.setdefault(record["category"], []).append(float(record["valid"]))
    return {
        "kind": "bfcl",
        "n": len(records),
        "passed": sum(bool(r["valid"]) for r in records),
        "score": asdict(bootstrap_mean([float(r["valid"]) for r in records])),
        "categories": {
            c: {"n": len(v), "accuracy": sum(v) / len(v)} for c, v in by_category.items()
        },
        "infrastructure_errors": sum(bool(r.get("infrastructure_error")) for r in records),
    }


def ifeval_summary(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """IFEval's four accuracies (IFEval's definitions) with bootstrap intervals over
    prompts for the prompt-level ones."""
    if not records:
        return {"kind": "ifeval", "n": 0}
    out: dict[str, Any] = {"kind": "ifeval", "n": len(records)}
    for mode in ("strict", "loose"):
        prompt_level = [float(r[mode]["follow_all_instructions"]) for r in records]
        verdicts = [v for r in records for v in r[mode]["follow_instruction_list"]]
        out[f"prompt_level_{mode}"] = asdict(bootstrap_mean(prompt_level))
        out[f"instruction_level_{mode}"] = sum(verdicts) / len(verdicts) if verdicts else None
    out["infrastructure_errors"] = sum(bool(r.get("infrastructure_error")) for r in records)
    return out


def _local_chat_model(run: EvalRun) -> BatchedLocalChatModel:
    """The run's local checkpoint, generating the calls of its concurrent items as one batch
    (``max_concurrency`` is the batch size)."""
    from training_app.evals.batched_local_model import BatchedLocalChatModel

    return BatchedLocalChatModel(
        run.local_model_dir, name=run.model_label, max_batch=run.max_concurrency
    )


def _execute_qa(run: EvalRun) -> bool:
    qa_set = run_qa_document(run)
    items = qa_set.items
    if run.progress_total != len(items):  # a variant set may skip an item it cannot vary
        run.progress_total = len(items)
        run.save(update_fields=["progress_total", "updated_at"])
    done_ids = set(run.item_results.values_list("item_id", flat=True))
    position = {item.id: index for index, item in enumerate(items)}
    todo = [item.id for item in items if item.id not in done_ids]
    config = QARunConfig(**run.generation)
    model: ChatModel
    if run.local_model_dir:
        model = _local_chat_model(run)
    else:
        assert run.endpoint is not None
        model = OpenAIChatModel(
            eval_client(run.endpoint, deadline_s=config.deadline_s), run.endpoint.name
        )
    question_types = {item.id: item.question_type for item in items}
    writer = _ResultWriter(run)

    def store(_done: int, _total: int, result: QAItemResult) -> None:
        writer.add(
            position=position[result.item_id],
            item_id=result.item_id,
            base_id=result.base_id,
            question_type=question_types[result.item_id],
            passed=result.passed,
            infrastructure_error=result.infrastructure_error,
            result=result.to_dict(),
        )

    judge = None
    if run.judge_version_id is not None:  # the judge scores Effectiveness (docs/JUDGE.md)
        from training_app.services.judges import EvalEffectivenessJudge

        judge = EvalEffectivenessJudge(run.judge_version)  # type: ignore[arg-type]
    try:
        outcome = run_qa_set(
            model,
            qa_set,
            item_ids=todo,
            config=config,
            max_concurrency=run.max_concurrency,
            progress=store,
            should_cancel=_CancelPoll(run.pk),
            judge=judge,
        )
    finally:
        writer.flush()
        if judge is not None:
            judge.store(run.pk)
        if isinstance(model, BatchedLocalChatModel):
            model.close()
    return outcome.cancelled


def run_qa_document(run: EvalRun) -> QASet:
    """The items a QA run answers: the set's first ``item_limit``, moved onto the run's
    harness version and varied with its HSA variant set when it names them."""
    with run.eval_set.file.open("rb") as handle:
        qa_set = loads_qa_set(handle.read())
    if run.item_limit:
        qa_set = replace(qa_set, items=qa_set.items[: run.item_limit])
    if run.harness_version_id is not None:
        version = run.harness_version
        assert version is not None
        qa_set = retarget_qa_set(
            qa_set, version.content, name=f"{qa_set.name} on v{version.number}"
        )
    if run.variant_set:
        qa_set = build_harness_variant_qa_set(qa_set, run.variant_set, seed=0)  # type: ignore[arg-type]
    return qa_set


def _execute_ifeval(run: EvalRun) -> bool:
    with run.eval_set.file.open("rb") as handle:
        prompts = ifeval.parse_input_data(handle.read().decode("utf-8").splitlines())
    if run.item_limit:
        prompts = prompts[: run.item_limit]
    done_ids = set(run.item_results.values_list("item_id", flat=True))
    todo = [(i, p) for i, p in enumerate(prompts) if str(p.key) not in done_ids]
    settings = GenerationSettings(**{k: v for k, v in run.generation.items() if k != "decoding"})
    writer = _ResultWriter(run)

    def store(index: int, prompt: ifeval.InputExample, response: str, error: str) -> None:
        strict, loose = ifeval.score_response(prompt, response)
        writer.add(
            position=index,
            item_id=str(prompt.key),
            base_id=str(prompt.key),
            question_type=",".join(prompt.instruction_id_list)[:40],
            passed=strict.follow_all_instructions,
            infrastructure_error=error,
            result={
                "key": prompt.key,
                "prompt": prompt.prompt,
                "response": response,
                "instruction_id_list": list(prompt.instruction_id_list),
                "strict": _verdicts(strict),
                "loose": _verdicts(loose),
                "infrastructure_error": error,
            },
        )

    try:
        if run.local_model_dir:
            return _ifeval_local(run, todo, settings, store)
        return _ifeval_endpoint(run, todo, settings, store)
    finally:
        writer.flush()


def _execute_bfcl(run: EvalRun) -> bool:
    with run.eval_set.file.open("rb") as handle:
        cases = [json.loads(line) for line in handle.read().decode("utf-8").splitlines() if line]
    if run.item_limit:
        cases = cases[: run.item_limit]
    done_ids = set(run.item_results.values_list("item_id", flat=True))
    todo = [(i, c) for i, c in enumerate(cases) if c["id"] not in done_ids]
    max_tokens = int(run.generation["max_tokens"])
    writer = _ResultWriter(run)
    cancel = _CancelPoll(run.pk)
    local = _local_chat_model(run) if run.local_model_dir else None
    client = None
    if local is None:
        assert run.endpoint is not None
        client = eval_client(run.endpoint, deadline_s=run.endpoint.timeout_s)

    def answer(case: Mapping[str, Any]) -> tuple[str, str]:
        messages = prompting_messages(case["question"][0], case["function"])
        try:
            if local is not None:
                reply = local.complete(
                    messages, tools=None, max_tokens=max_tokens, temperature=0.0, timeout_s=0
                )
                return reply.content, ""
            assert client is not None
            result = client.chat(messages, max_tokens=max_tokens, temperature=0.0)
        except (ModelCallError, ModelCallFailed) as exc:
            return "", f"{type(exc).__name__}: {exc}"[:200]
        return result.content, ""

    try:
        with ThreadPoolExecutor(max_workers=run.max_concurrency, thread_name_prefix="bfcl") as pool:
            for start in range(0, len(todo), run.max_concurrency):
                if cancel():
                    return True
                chunk = todo[start : start + run.max_concurrency]
                answers = pool.map(lambda pair: answer(pair[1]), chunk)
                for (index, case), (response, error) in zip(chunk, answers, strict=True):
                    verdict = score_result(
                        case["category"], case["function"], case["ground_truth"], response
                    )
                    writer.add(
                        position=index,
                        item_id=case["id"],
                        # an augmented case pairs with the original it was made from
                        base_id=case.get("source_id") or case["id"],
                        question_type=case["category"],
                        passed=verdict.valid,
                        infrastructure_error=error,
                        result={
                            "id": case["id"],
                            "category": case["category"],
                            "question": case["question"][0],
                            "response": response,
                            "valid": verdict.valid,
                            "error": verdict.error,
                            "error_type": verdict.error_type,
                            "infrastructure_error": error,
                        },
                    )
    finally:
        writer.flush()
        if local is not None:
            local.close()
    return False


def _ifeval_endpoint(
    run: EvalRun,
    todo: Sequence[tuple[int, ifeval.InputExample]],
    settings: GenerationSettings,
    store: Callable[[int, ifeval.InputExample, str, str], None],
) -> bool:
    assert run.endpoint is not None
    client = eval_client(run.endpoint, deadline_s=run.endpoint.timeout_s)

    def answer(prompt: ifeval.InputExample) -> tuple[str, str]:
        try:
            result = client.chat(
                chat_messages(prompt.prompt, settings),
                max_tokens=settings.max_new_tokens,
                temperature=0.0,
            )
        except ModelCallError as exc:
            return "", f"{type(exc).__name__}: {exc}"[:200]
        return result.content.strip(), ""

    cancel = _CancelPoll(run.pk)
    with ThreadPoolExecutor(max_workers=run.max_concurrency, thread_name_prefix="ifeval") as pool:
        for start in range(0, len(todo), run.max_concurrency):
            if cancel():
                return True
            chunk = todo[start : start + run.max_concurrency]
            for (index, prompt), (response, error) in zip(
                chunk, pool.map(lambda pair: answer(pair[1]), chunk), strict=True
            ):
                store(index, prompt, response, error)
    return False


def _ifeval_local(
    run: EvalRun,
    todo: Sequence[tuple[int, ifeval.InputExample]],
    settings: GenerationSettings,
    store: Callable[[int, ifeval.InputExample, str, str], None],
) -> bool:
    from training_app.evals.local_generation import generate_responses

    cancel = _CancelPoll(run.pk, interval_s=0)
    for start in range(0, len(todo), IFEVAL_LOCAL_CHUNK):
        if cancel():
            return True
        chunk = todo[start : start + IFEVAL_LOCAL_CHUNK]
        answers = generate_responses(
            Path(run.local_model_dir), [p.prompt for _, p in chunk], settings
        )
        for (index, prompt), response in zip(chunk, answers, strict=True):
            store(index, prompt, response or "", "")
    return False


_EXECUTORS: dict[str, Callable[[EvalRun], bool]] = {
    EvalSet.Kind.LIVE_STREAM_QA: _execute_qa,
    EvalSet.Kind.HARNESS_VARIANT_QA: _execute_qa,
    EvalSet.Kind.IFEVAL: _execute_ifeval,
    EvalSet.Kind.BFCL: _execute_bfcl,
}


def eval_client(endpoint: ModelEndpoint, *, deadline_s: float) -> OpenAICompatibleClient:
    """A client for an evaluation: the endpoint's URL, model and key, a read timeout of
    the longer of the endpoint's and the item deadline (an eval has no live deadline), and
    the client's default retries."""
    return OpenAICompatibleClient(
        ClientConfig(
            base_url=endpoint.base_url,
            model=endpoint.model_name or None,
            api_key=os.environ.get(endpoint.api_key_ref) if endpoint.api_key_ref else None,
            read_timeout_s=max(endpoint.timeout_s, deadline_s),
        )
    )


def _verdicts(output: ifeval.OutputExample) -> dict[str, Any]:
    return {
        "follow_all_instructions": output.follow_all_instructions,
        "follow_instruction_list": list(output.follow_instruction_list),
    }


class _ResultWriter:
    """Buffers item results and writes them in one statement every ``FLUSH_S`` seconds or
    ``FLUSH_ITEMS`` items (and at the end), with the progress count: per-item queries in the
    runner's thread would hold back the next items (measured: bench/eval_run.py)."""

    FLUSH_S = 0.5
    FLUSH_ITEMS = 50
    UPDATED = (
        "position",
        "base_id",
        "question_type",
        "passed",
        "score",
        "infrastructure_error",
        "result",
    )

    def __init__(self, run: EvalRun) -> None:
        self.run = run
        self.pending: list[EvalItemResult] = []
        self.results: list[str] = []  # each pending row's result as JSON text
        self.added = 0
        self.flushed_at = time.monotonic()

    def add(
        self,
        *,
        position: int,
        item_id: str,
        base_id: str,
        question_type: str,
        passed: bool,
        infrastructure_error: str,
        result: Mapping[str, Any],
    ) -> None:
        self.pending.append(
            EvalItemResult(
                run=self.run,
                position=position,
                item_id=item_id,
                base_id=base_id,
                question_type=question_type,
                passed=passed,
                score=1.0 if passed else 0.0,
                infrastructure_error=infrastructure_error[:200],
            )
        )
        self.results.append(_result_json(result))
        self.added += 1
        if (
            len(self.pending) >= self.FLUSH_ITEMS
            or time.monotonic() - self.flushed_at >= self.FLUSH_S
        ):
            self.flush()

    def flush(self) -> None:
        self.flushed_at = time.monotonic()
        if not self.pending:
            return
        with transaction.atomic():
            if connection.vendor == "postgresql":
                self._copy_upsert()
            else:
                for row, text in zip(self.pending, self.results, strict=True):
                    row.result = json.loads(text)
                EvalItemResult.objects.bulk_create(
                    self.pending,
                    update_conflicts=True,
                    unique_fields=["run", "item_id"],
                    update_fields=list(self.UPDATED),
                )
            done = self.run.item_results.count()
            EvalRun.objects.filter(pk=self.run.pk).update(
                progress_done=min(done, self.run.progress_total), updated_at=timezone.now()
            )
        self.pending = []
        self.results = []

    def _copy_upsert(self) -> None:
        """PostgreSQL: COPY the rows into a session-temporary staging table, then one
        INSERT ... ON CONFLICT. bulk_create's UNNEST arrays escape every JSON result in
        Python (psycopg's text array dumper), which held the runner's threads back; COPY
        rows are formatted in C (measured: bench/eval_run.py)."""
        table = EvalItemResult._meta.db_table
        columns = ("run_id", *self.UPDATED[:-1], "item_id", "result")
        updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in self.UPDATED)
        with connection.cursor() as cursor:
            raw = cursor.cursor  # psycopg's cursor under Django's wrapper
            raw.execute(
                "CREATE TEMP TABLE IF NOT EXISTS eval_item_staging (run_id bigint, "
                "position integer, base_id text, question_type text, passed boolean, "
                "score double precision, infrastructure_error text, item_id text, "
                "result jsonb) ON COMMIT DELETE ROWS"
            )
            raw.execute("TRUNCATE eval_item_staging")
            with raw.copy(f"COPY eval_item_staging ({', '.join(columns)}) FROM STDIN") as copy:
                for row, text in zip(self.pending, self.results, strict=True):
                    copy.write_row(
                        (
                            row.run_id,
                            row.position,
                            row.base_id,
                            row.question_type,
                            row.passed,
                            row.score,
                            row.infrastructure_error,
                            row.item_id,
                            text,
                        )
                    )
            raw.execute(
                f"INSERT INTO {table} ({', '.join(columns)}, created_at) "
                f"SELECT {', '.join(columns)}, now() FROM eval_item_staging "
                f"ON CONFLICT (run_id, item_id) DO UPDATE SET {updates}"
            )


class _CancelPoll:
    """The run's cancel flag, read from the database at most every ``interval_s``."""

    def __init__(self, run_id: int, interval_s: float | None = None) -> None:
        self.run_id = run_id
        self.interval_s = CANCEL_POLL_S if interval_s is None else interval_s
        self.checked_at = -math.inf
        self.requested = False

    def __call__(self) -> bool:
        now = time.monotonic()
        if not self.requested and now - self.checked_at >= self.interval_s:
            self.checked_at = now
            self.requested = bool(
                EvalRun.objects.filter(pk=self.run_id)
                .values_list("cancel_requested", flat=True)
                .first()
            )
        return self.requested


def _versions(run: EvalRun) -> dict[str, Any]:
    eval_set = run.eval_set
    scorer = "qa" if eval_set.is_qa else eval_set.kind
    model: dict[str, Any]
    if run.endpoint is not None:
        endpoint = run.endpoint
        model = {
            "endpoint": endpoint.name,
            "base_url": endpoint.base_url,
            "model_name": endpoint.model_name,
            "tool_mode": endpoint.tool_mode,
            "endpoint_updated_at": endpoint.updated_at.isoformat(),
            "trained_by_runs": list(endpoint.trained_by.values_list("pk", flat=True)),
        }
    else:
        model = {"local_model_dir": run.local_model_dir, **_checkpoint_digest(run.local_model_dir)}
    harness: dict[str, Any] = {}
    version = run.harness_version or eval_set.harness_version
    if version is not None:
        harness = {
            "variant_set": run.variant_set,
            "harness_version": version.pk,
            "number": version.number,
            "hashes": {
                "skills": version.skills_hash,
                "tools": version.tools_hash,
                "prompt": version.prompt_hash,
                "hooks": version.hooks_hash,
            },
        }
    return {
        "model": model,
        "harness": harness,
        "eval_set": {"id": eval_set.pk, "content_hash": eval_set.content_hash},
        "scorer": {"name": scorer, "sha256": _source_digest(SCORER_SOURCES[scorer])},
        "judge": _judge_versions(run),
    }


def _judge_versions(run: EvalRun) -> dict[str, Any] | None:
    version = run.judge_version
    if version is None:
        return None
    return {
        "judge": version.judge.name,
        "judge_id": version.judge_id,
        "judge_version": version.pk,
        "number": version.number,
        "model_name": version.model_name,
        "endpoint": version.endpoint.name,
        "rubric_sha256": version.rubric_sha256,
    }


def _source_digest(paths: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for name in paths:
        digest.update((_EVALS_DIR / name).resolve().read_bytes())
    return digest.hexdigest()[:16]


def _checkpoint_digest(model_dir: str) -> dict[str, str]:
    """The weights' identity without hashing gigabytes: the config and the weight files'
    names and sizes."""
    root = Path(model_dir)
    digest = hashlib.sha256((root / "config.json").read_bytes())
    for path in sorted(root.glob("*.safetensors")):
        digest.update(f"{path.name}:{path.stat().st_size}".encode())
    return {"checkpoint_digest": digest.hexdigest()[:16]}


def _finish(run: EvalRun, status: str) -> None:
    run.status = status
    run.finished_at = timezone.now()
    run.progress_done = min(run.item_results.count(), run.progress_total)
    run.save(update_fields=["status", "finished_at", "error", "progress_done", "updated_at"])


def _result_json(result: Mapping[str, Any]) -> str:
    """``result`` as JSON text for jsonb; the walk that replaces NaN only when there is one."""
    try:
        text = json.dumps(result, ensure_ascii=False, allow_nan=False)
    except ValueError:
        text = ""
    if not text or "\\u0000" in text:
        text = json.dumps(json_safe(result), ensure_ascii=False)
    return text


def json_safe(value: Any) -> Any:
    """NaN and infinities become None and U+0000 becomes U+FFFD: PostgreSQL's jsonb refuses
    them (a model may well reply with a NUL)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def _slug(name: str) -> str:
    cleaned = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")
    return "-".join(part for part in cleaned.split("-") if part)[:60] or "eval-set"
