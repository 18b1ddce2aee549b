"""Running QA items: the production ``HarnessAgent`` (the same action format, hooks and tool
validation as serving) answers each item's comment on the item's harness, its tools running
over the set's catalog snapshot; the trace is scored by ``qa_scoring``.

- ``run_item(model, harness, item, catalog, config=, judge=)`` -> ``QAItemResult``
- ``run_items(model, items, harness_for=, catalog=, ...)`` / ``run_qa_set(model, qa_set, ...)``
  -> ``QARunOutcome``: many items on a thread pool of ``max_concurrency`` workers (the
  endpoint sees at most that many requests at once), ``progress(done, total, result)``
  called in the caller's thread after each item, ``should_cancel()`` polled before each item
  starts (a cancelled run keeps the results of the items that finished).

Tools run through ``harness_episode.OfflineToolRunner``: on a Harness-Variant item whose
catalog tools had parameters renamed the model must use the variant's names and the catalog
still receives the arguments it reads; webhook tools (HSA's distractor tools, a merchant's
endpoints) are never called, a call gets an error observation. An item whose gold needs a
webhook tool is refused (``QARunError``): it cannot be answered offline.

A model or deadline failure does not raise: the agent falls back and the item fails its
``answered`` check; ``infrastructure_error`` says so (``model_timeout``, ``model_unavailable``,
``model_protocol``, ``model_rejected``, ``deadline``, or ``runtime_error: ...`` for an
exception inside the runtime), so a run can tell a wrong model from a broken endpoint.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol

from harness_app.harness.model import Harness
from harness_app.harness.serialization import harness_from_dict
from harness_app.hsa.trajectory import trajectory_from_dict
from inference.agents.model_port import ChatModel
from inference.agents.session import AgentConfig, ToolMode
from inference.tools.catalog import CatalogGateway
from training_app.evals.qa_scoring import (
    ItemScores,
    RuleCheck,
    all_required_passed,
    item_scores,
    rule_checks,
)
from training_app.evals.qa_sets import QAItem, QASet
from training_app.pipeline.catalog_snapshot import CatalogSnapshot
from training_app.pipeline.harness_episode import live_context, run_harness_agent, webhook_tools
from training_app.pipeline.sft_data import ReplayModel

INFRASTRUCTURE_FALLBACKS = frozenset(
    {"model_timeout", "model_unavailable", "model_protocol", "model_rejected", "deadline"}
)


class QARunError(ValueError):
    """The run cannot start (a webhook tool, no catalog, a bad setting); the message says why."""


@dataclass(frozen=True)
class QARunConfig:
    """Generation and agent settings of a run (part of the run record: ``to_dict``).

    Greedy by default; ``max_tokens`` is per model call and should be the same for every
    model compared. ``tool_mode``: ``text`` (JSON action blocks, for models served without a
    tool-call parser such as SmolLM2) or ``native`` (OpenAI tool calls).
    """

    tool_mode: ToolMode = "text"
    max_tokens: int = 256
    temperature: float = 0.0
    max_steps: int = 4
    deadline_s: float = 120.0

    def __post_init__(self) -> None:
        if self.tool_mode not in ("text", "native"):
            raise QARunError(f"tool_mode must be text or native, got {self.tool_mode!r}")
        if self.max_tokens < 1 or self.max_steps < 1:
            raise QARunError("max_tokens and max_steps must be at least 1")
        if self.temperature < 0 or self.deadline_s <= 0:
            raise QARunError("temperature must be >= 0 and deadline_s > 0")

    def agent_config(self) -> AgentConfig:
        return AgentConfig(
            max_steps=self.max_steps,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            tool_mode=self.tool_mode,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class JudgeVerdict:
    """A judge's verdict on one answer: ``score`` in [0, 1], ``passed``, and why."""

    passed: bool
    score: float
    reason: str = ""
    judge: str = ""
    # The judge's Effectiveness in [0, 1]: when set it replaces the rule-based component.
    effectiveness: float | None = None
    # False: the ``judge`` check is informational (the judge changes a score, not pass/fail).
    required: bool = True


class QAJudge(Protocol):
    """An answer judge (e.g. the calibrated Agent-as-a-Judge). Called once per item, from a
    worker thread; it must be thread-safe. Its verdict becomes the required ``judge`` check."""

    name: str

    def judge(self, item: QAItem, reply: str, trace: Mapping[str, Any]) -> JudgeVerdict: ...


@dataclass(frozen=True)
class MadeToolCall:
    name: str
    arguments: Any
    ok: bool
    error: str = ""


@dataclass(frozen=True)
class QAItemResult:
    """What one item's run produced. ``latency_s`` is the wall time of the agent's reply;
    ``trace`` is the full ``ReplyTrace.to_dict()``."""

    item_id: str
    base_id: str
    reply: str
    tool_calls: tuple[MadeToolCall, ...]
    skills_loaded: tuple[str, ...]
    checks: tuple[RuleCheck, ...]
    scores: ItemScores
    passed: bool
    latency_s: float
    fallback_reason: str = ""
    infrastructure_error: str = ""
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    judge: JudgeVerdict | None = None
    trace: Mapping[str, Any] = field(default_factory=dict)

    def check(self, name: str) -> RuleCheck | None:
        return next((c for c in self.checks if c.name == name), None)

    @property
    def failed_checks(self) -> tuple[RuleCheck, ...]:
        return tuple(c for c in self.checks if c.required and not c.passed)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data for storage (``from_dict`` reads it back)."""
        return {
            "item_id": self.item_id,
            "base_id": self.base_id,
            "reply": self.reply,
            "tool_calls": [
                {"name": c.name, "arguments": c.arguments, "ok": c.ok, "error": c.error}
                for c in self.tool_calls
            ],
            "skills_loaded": list(self.skills_loaded),
            "checks": [c.to_dict() for c in self.checks],
            "scores": self.scores.to_dict(),
            "passed": self.passed,
            "latency_s": self.latency_s,
            "fallback_reason": self.fallback_reason,
            "infrastructure_error": self.infrastructure_error,
            "model_calls": self.model_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "judge": None
            if self.judge is None
            else {
                "passed": self.judge.passed,
                "score": self.judge.score,
                "reason": self.judge.reason,
                "judge": self.judge.judge,
                "effectiveness": self.judge.effectiveness,
                "required": self.judge.required,
            },
            "trace": dict(self.trace),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> QAItemResult:
        judge = data.get("judge")
        return cls(
            item_id=str(data["item_id"]),
            base_id=str(data["base_id"]),
            reply=str(data["reply"]),
            tool_calls=tuple(
                MadeToolCall(str(c["name"]), c["arguments"], bool(c["ok"]), str(c["error"]))
                for c in data["tool_calls"]
            ),
            skills_loaded=tuple(str(s) for s in data["skills_loaded"]),
            checks=tuple(RuleCheck.from_dict(c) for c in data["checks"]),
            scores=ItemScores.from_dict(data["scores"]),
            passed=bool(data["passed"]),
            latency_s=float(data["latency_s"]),
            fallback_reason=str(data.get("fallback_reason", "")),
            infrastructure_error=str(data.get("infrastructure_error", "")),
            model_calls=int(data.get("model_calls", 0)),
            prompt_tokens=int(data.get("prompt_tokens", 0)),
            completion_tokens=int(data.get("completion_tokens", 0)),
            judge=None
            if judge is None
            else JudgeVerdict(
                bool(judge["passed"]),
                float(judge["score"]),
                str(judge["reason"]),
                str(judge["judge"]),
                None if judge.get("effectiveness") is None else float(judge["effectiveness"]),
                bool(judge.get("required", True)),
            ),
            trace=dict(data.get("trace") or {}),
        )


def catalog_gateway(catalog: CatalogGateway | Mapping[str, Any]) -> CatalogGateway:
    """A catalog snapshot dict (``catalog_snapshot`` format) as a gateway; a gateway as is."""
    if isinstance(catalog, Mapping):
        return CatalogSnapshot(catalog)
    return catalog


def _refuse_webhook_gold(harness: Harness, item: QAItem) -> None:
    """An item whose gold calls a webhook tool cannot be answered offline."""
    webhooks = set(webhook_tools(harness))
    needed = sorted({str(c["name"]) for c in item.gold.get("tool_calls", ())} & webhooks)
    if needed:
        raise QARunError(
            f"item {item.id}: its gold calls webhook tools ({', '.join(needed)}), which an "
            "evaluation never calls; evaluate items answered with catalog tools"
        )


def run_item(
    model: ChatModel,
    harness: Harness | Mapping[str, Any],
    item: QAItem,
    catalog: CatalogGateway | Mapping[str, Any],
    *,
    config: QARunConfig | None = None,
    judge: QAJudge | None = None,
) -> QAItemResult:
    """Run one item and score it. Raises ``QARunError`` only for an item whose gold calls a
    webhook tool; everything that goes wrong while answering is in the result."""
    config = config or QARunConfig()
    parsed = harness if isinstance(harness, Harness) else harness_from_dict(harness)
    _refuse_webhook_gold(parsed, item)
    return _run_checked(model, parsed, item, catalog_gateway(catalog), config, judge)


def _run_checked(
    model: ChatModel,
    harness: Harness,
    item: QAItem,
    catalog: CatalogGateway,
    config: QARunConfig,
    judge: QAJudge | None,
) -> QAItemResult:
    started = time.perf_counter()
    try:
        trace = run_harness_agent(
            harness=harness,
            catalog=catalog,
            model=model,
            config=config.agent_config(),
            comment=item.comment,
            context=live_context(item.context),
            prompt_layout=item.prompt_layout,
            offline=True,
            names=item.argument_names,
            deadline_s=config.deadline_s,
        ).to_dict()
    except Exception as exc:  # one broken item must not end a long run; it is recorded
        return _crashed(item, f"runtime_error: {type(exc).__name__}: {exc}", started)
    latency = time.perf_counter() - started
    checks = list(rule_checks(trace, item.gold, item.facts))
    verdict: JudgeVerdict | None = None
    if judge is not None:
        try:
            verdict = judge.judge(item, str(trace.get("reply") or ""), trace)
        except Exception as exc:  # a judge failure fails the check, with the reason
            verdict = JudgeVerdict(False, 0.0, f"judge error: {type(exc).__name__}: {exc}")
        verdict = replace(verdict, judge=verdict.judge or judge.name)
        checks.append(RuleCheck("judge", verdict.passed, verdict.required, verdict.reason))
    scores = item_scores(trace, item.gold)
    if verdict is not None and verdict.effectiveness is not None:
        scores = replace(scores, effectiveness=verdict.effectiveness)
    fallback = str(trace.get("fallback_reason") or "")
    steps = trace.get("steps", ())
    return QAItemResult(
        item_id=item.id,
        base_id=item.base_id,
        reply=str(trace.get("reply") or ""),
        tool_calls=tuple(
            MadeToolCall(
                str(s["name"]),
                s["detail"].get("arguments"),
                bool(s["detail"].get("ok")),
                str(s["detail"].get("error") or ""),
            )
            for s in steps
            if s["kind"] == "tool_call"
        ),
        skills_loaded=tuple(
            str(s["name"]) for s in steps if s["kind"] == "skill_load" and s["detail"].get("ok")
        ),
        checks=tuple(checks),
        scores=scores,
        passed=all_required_passed(checks),
        latency_s=round(latency, 6),
        fallback_reason=fallback,
        infrastructure_error=fallback if fallback in INFRASTRUCTURE_FALLBACKS else "",
        model_calls=int(trace.get("model_calls", 0)),
        prompt_tokens=int(trace.get("prompt_tokens", 0)),
        completion_tokens=int(trace.get("completion_tokens", 0)),
        judge=verdict,
        trace=trace,
    )


def _crashed(item: QAItem, error: str, started: float) -> QAItemResult:
    return QAItemResult(
        item_id=item.id,
        base_id=item.base_id,
        reply="",
        tool_calls=(),
        skills_loaded=(),
        checks=(RuleCheck("answered", False, True, error),),
        scores=ItemScores(0.0, 0.0, 0.0, 0.0),
        passed=False,
        latency_s=round(time.perf_counter() - started, 6),
        infrastructure_error=error,
    )


# --- many items ------------------------------------------------------------------------------

Progress = Callable[[int, int, QAItemResult], None]


@dataclass(frozen=True)
class QARunOutcome:
    """``results`` in item order, only for items that ran (all of them unless cancelled)."""

    results: tuple[QAItemResult, ...]
    total: int
    cancelled: bool
    config: QARunConfig
    wall_s: float

    @property
    def item_scores(self) -> dict[str, float]:
        """Item id -> 1.0 passed / 0.0 failed: the input of ``eval_stats`` and the table."""
        return {r.item_id: float(r.passed) for r in self.results}

    @property
    def base_ids(self) -> dict[str, str]:
        return {r.item_id: r.base_id for r in self.results}


def run_items(
    model: ChatModel,
    items: Sequence[QAItem],
    *,
    harness_for: Callable[[QAItem], Harness],
    catalog: CatalogGateway | Mapping[str, Any],
    config: QARunConfig | None = None,
    max_concurrency: int = 4,
    progress: Progress | None = None,
    should_cancel: Callable[[], bool] | None = None,
    judge: QAJudge | None = None,
) -> QARunOutcome:
    """Run ``items`` with at most ``max_concurrency`` at a time (``harness_for`` gives each
    item's harness: the set's, or a candidate harness for a safety check). ``model`` and
    ``judge`` are called from worker threads. Raises ``QARunError`` before anything runs if
    an item's gold calls a webhook tool."""
    if max_concurrency < 1:
        raise QARunError(f"max_concurrency must be at least 1, got {max_concurrency}")
    config = config or QARunConfig()
    gateway = catalog_gateway(catalog)
    for item in items:
        _refuse_webhook_gold(harness_for(item), item)
    started = time.perf_counter()
    results: dict[int, QAItemResult] = {}
    cancelled = False
    pending: dict[Future[QAItemResult], int] = {}
    upcoming = iter(enumerate(items))
    with ThreadPoolExecutor(max_workers=max_concurrency, thread_name_prefix="qa-eval") as pool:

        def fill() -> None:
            nonlocal cancelled
            while len(pending) < max_concurrency and not cancelled:
                if should_cancel is not None and should_cancel():
                    cancelled = True
                    return
                nxt = next(upcoming, None)
                if nxt is None:
                    return
                index, item = nxt
                future = pool.submit(
                    _run_checked, model, harness_for(item), item, gateway, config, judge
                )
                pending[future] = index

        fill()
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: pending[f]):
                index = pending.pop(future)
                results[index] = future.result()
                if progress is not None:
                    progress(len(results), len(items), results[index])
            fill()
    return QARunOutcome(
        results=tuple(results[i] for i in sorted(results)),
        total=len(items),
        cancelled=cancelled and len(results) < len(items),
        config=config,
        wall_s=round(time.perf_counter() - started, 6),
    )


def run_qa_set(
    model: ChatModel,
    qa_set: QASet,
    *,
    catalog: CatalogGateway | Mapping[str, Any] | None = None,
    item_ids: Sequence[str] | None = None,
    config: QARunConfig | None = None,
    max_concurrency: int = 4,
    progress: Progress | None = None,
    should_cancel: Callable[[], bool] | None = None,
    judge: QAJudge | None = None,
) -> QARunOutcome:
    """Every item of ``qa_set`` (or those in ``item_ids``) on its own harness, over the set's
    catalog snapshot unless ``catalog`` is given."""
    chosen = catalog if catalog is not None else qa_set.catalog
    if chosen is None:
        raise QARunError(f"set {qa_set.name!r} carries no catalog snapshot; pass catalog=")
    items: Sequence[QAItem] = qa_set.items
    if item_ids is not None:
        items = [qa_set.item(i) for i in item_ids]
    return run_items(
        model,
        items,
        harness_for=qa_set.harness_for,
        catalog=chosen,
        config=config,
        max_concurrency=max_concurrency,
        progress=progress,
        should_cancel=should_cancel,
        judge=judge,
    )


def gold_replay_failures(
    qa_set: QASet,
    *,
    catalog: CatalogGateway | Mapping[str, Any] | None = None,
    tool_mode: ToolMode = "text",
) -> dict[str, list[str]]:
    """Run every item with a model that answers exactly its gold (load the gold skill, make
    the gold calls, give the gold answer: ``sft_data.ReplayModel``) and return, per item that
    does not pass, the reasons (``{}``: the set is consistent with its harnesses and catalog).

    This is the check an uploaded or built set should pass before it scores models: a gold
    that its own harness's hooks reject, a tool result the catalog no longer gives, or a
    renamed parameter the runtime cannot pass on would otherwise count against every model.
    """
    chosen = catalog if catalog is not None else qa_set.catalog
    if chosen is None:
        raise QARunError(f"set {qa_set.name!r} carries no catalog snapshot; pass catalog=")
    gateway = catalog_gateway(chosen)
    config = QARunConfig(tool_mode=tool_mode)
    failures: dict[str, list[str]] = {}
    for item in qa_set.items:
        harness = qa_set.harness_for(item)
        _refuse_webhook_gold(harness, item)
        model = ReplayModel(trajectory_from_dict(item.gold), tool_mode)
        result = _run_checked(model, harness, item, gateway, config, None)
        if not result.passed:
            failures[item.id] = [f"{c.name}: {c.reason}" for c in result.failed_checks]
    return failures
