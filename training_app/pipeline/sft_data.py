"""SFT rows in exactly the form the runtime sends at serving time.

Every (harness, gold trajectory) pair is played through the real
``inference.agents.harness_agent.HarnessAgent`` with the real ``ToolRunner``: the agent builds
the system prompt, the text-action instructions (tool mode ``text``, SmolLM2) or the tool
specs (``native``), the observations and the hook feedback, just as it does on air. The model
behind it is a ``RecordingModel`` that remembers what it was sent on each call; each call
becomes one prompt/completion row (prompt = the conversation so far, system prompt included;
completion = that assistant turn, in the form the agent appends it to the conversation).

Two sources of assistant turns, one builder:
- ``ReplayModel`` answers with the gold actions (``load_skill``, each tool call, the final
  answer) in the agent's tool mode;
- a teacher ``ChatModel`` (``inference.agents.openai_model.OpenAIChatModel`` over any
  OpenAI-compatible endpoint) generates its own trajectory, filtered against the gold.

Tool results come from a ``RecordedCatalog``: the gold's results (which ``task_set`` got by
running the catalog tools) served per catalog operation in call order, so the replay needs no
database and works on harnesses whose parameters HSA renamed.

HSA: with a training policy each pair is also augmented (``harness_app.hsa.augment``) with
``variants_per_example`` seeds and replayed on the augmented harness; ``""`` keeps the
original harnesses only (Fixed-Harness SFT). Filters, in order, each a counted drop reason:
- Accuracy: no fallback (hooks allowed the reply), the gold skill loaded, exactly the gold
  tool calls (names and arguments, in order), the gold answer (exact for replay; for a
  teacher every number of the gold answer appears in its reply).
- Effectiveness: non-empty reply, no quoted price missing from the tool results, no tool
  error, no action-block markup in the reply, at most ``max_reply_words`` words.
Traces where a hook (or an unreadable answer) forced a retry never train on the rejected
turn; most keep only the final correct behaviour (the rejected turn and its feedback are cut
from later prompts), ``recovery_fraction`` of them keep the retry in the prompt (recovery).
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from harness_app.harness.model import Harness
from harness_app.harness.prompt import PromptLayout
from harness_app.harness.serialization import harness_from_dict
from harness_app.hsa.augment import AugmentationError, augment, example_seed
from harness_app.hsa.trajectory import GoldTrajectory, trajectory_from_dict
from inference.agents.harness_agent import LOAD_SKILL, HarnessAgent
from inference.agents.model_answer import AnswerToolCall, ModelAnswer
from inference.agents.model_port import ChatModel, ModelResult
from inference.agents.session import (
    AgentConfig,
    LiveContext,
    ToolMode,
    catalog_prices,
    quoted_prices,
)
from inference.clients.text_actions import (
    CallToolAction,
    ReplyAction,
    TextActionError,
    parse_text_action,
    render_text_action,
)
from inference.tools.runner import ToolRunner
from inference.trace import ReplyTrace
from training_app.pipeline.hsa_policy import training_policy

TurnKind = Literal["load_skill", "tool_call", "reply", "unreadable"]
AnswerMatch = Literal["exact", "facts"]
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


# --- the models --------------------------------------------------------------------------


class ReplayModel:
    """A ``ChatModel`` that answers with the gold actions, in ``tool_mode``: load the gold
    skill, make each gold tool call, give the gold answer (again, if asked again)."""

    name = "gold-replay"

    def __init__(self, gold: GoldTrajectory, tool_mode: ToolMode) -> None:
        actions: list[tuple[str, dict[str, Any]] | str] = []
        if gold.skill:
            actions.append((LOAD_SKILL, {"name": gold.skill}))
        actions.extend((call.name, dict(call.arguments)) for call in gold.tool_calls)
        actions.append(gold.final_answer)
        self.actions = actions
        self.tool_mode = tool_mode
        self.calls = 0

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None,
        max_tokens: int,
        temperature: float,
        timeout_s: float,
    ) -> ModelResult:
        action = self.actions[min(self.calls, len(self.actions) - 1)]
        self.calls += 1
        if isinstance(action, str):
            if self.tool_mode == "text":
                return ModelAnswer(render_text_action(ReplyAction(action)))
            return ModelAnswer(action)
        name, arguments = action
        if self.tool_mode == "text":
            return ModelAnswer(render_text_action(CallToolAction(name, arguments)))
        call = AnswerToolCall(f"call_{self.calls}", name, json.dumps(arguments, ensure_ascii=False))
        return ModelAnswer("", (call,), "tool_calls")


@dataclass(frozen=True)
class RecordedCall:
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    result: ModelResult


class RecordingModel:
    """Wraps a ``ChatModel`` and records what each call was sent and answered."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls: list[RecordedCall] = []

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None,
        max_tokens: int,
        temperature: float,
        timeout_s: float,
    ) -> ModelResult:
        snapshot = copy.deepcopy(messages)
        result = self.inner.complete(
            messages,
            tools=tools,
            max_tokens=max_tokens,
            temperature=temperature,
            timeout_s=timeout_s,
        )
        self.calls.append(RecordedCall(snapshot, copy.deepcopy(tools), result))
        return result


class RecordedCatalog:
    """``CatalogGateway`` answering each catalog operation with the gold's results for that
    operation, in call order (an error once they run out)."""

    def __init__(self, harness: Harness, gold: GoldTrajectory) -> None:
        self.queues: dict[str, list[dict[str, Any]]] = {}
        for call in gold.tool_calls:
            tool = harness.tool(call.name)
            if tool is not None and tool.executor.kind == "catalog" and call.result is not None:
                self.queues.setdefault(tool.executor.operation, []).append(dict(call.result))

    def _next(self, operation: str) -> dict[str, Any]:
        queue = self.queues.get(operation)
        if not queue:
            return {"error": f"no recorded {operation} result for this example"}
        return queue.pop(0)

    def get_product(self, sku: str) -> dict[str, Any]:
        return self._next("get_product")

    def check_stock(self, sku: str, size: str | None = None) -> dict[str, Any]:
        return self._next("check_stock")

    def list_coupons(self, sku: str | None = None) -> dict[str, Any]:
        return self._next("list_coupons")

    def get_shipping(self, sku: str, region: str) -> dict[str, Any]:
        return self._next("get_shipping")

    def search_products(self, query: str) -> dict[str, Any]:
        return self._next("search_products")


def _no_secrets(name: str) -> str | None:
    return None


# --- rows and the report -------------------------------------------------------------------


@dataclass(frozen=True)
class SftRow:
    task_id: str
    variant: str  # "original" or "hsa-<n>"
    turn: TurnKind
    prompt: list[dict[str, Any]]
    completion: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None  # native mode: the tool specs sent

    def to_record(self) -> dict[str, Any]:
        """A TRL conversational prompt-completion example."""
        record: dict[str, Any] = {"prompt": self.prompt, "completion": self.completion}
        if self.tools is not None:
            record["tools"] = json.dumps(self.tools, ensure_ascii=False)
        return record


@dataclass
class DataReport:
    """What the builder kept and dropped, and why (StageOutcome.summary["data"])."""

    policy: str = ""
    source: str = "gold_replay"
    examples: int = 0  # (task, harness variant) pairs attempted
    augment_failed: int = 0
    kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    retried: int = 0  # kept traces with at least one rejected turn
    recovery_kept: int = 0  # ... of which the retry stays in the prompt
    rows: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy or "fixed-harness",
            "source": self.source,
            "examples": self.examples,
            "augment_failed": self.augment_failed,
            "kept": self.kept,
            "dropped": dict(sorted(self.dropped.items())),
            "retried": self.retried,
            "recovery_kept": self.recovery_kept,
            "rows": dict(sorted(self.rows.items())),
            "rows_total": sum(self.rows.values()),
        }


class SftDataError(ValueError):
    """A task record cannot be used; the message names the task and field."""


# --- the builder -----------------------------------------------------------------------------

ModelFactory = Callable[[Harness, GoldTrajectory], ChatModel]


@dataclass(frozen=True)
class BuildOptions:
    hsa_policy: str = ""
    variants_per_example: int = 1
    seed: int = 0
    tool_mode: ToolMode = "text"
    recovery_fraction: float = 0.1
    max_reply_words: int = 60
    max_steps: int = 6
    deadline_s: float = 120.0


def build_sft_rows(
    tasks: Sequence[Mapping[str, Any]],
    harnesses: Mapping[str, Mapping[str, Any]],
    options: BuildOptions,
    *,
    teacher: ModelFactory | None = None,
) -> tuple[list[SftRow], DataReport]:
    """Rows and the report. ``teacher`` None replays the gold; otherwise it returns the
    model that rolls out on each (harness, gold) pair (original and augmented)."""
    policy = training_policy(options.hsa_policy)
    report = DataReport(
        policy=options.hsa_policy, source="gold_replay" if teacher is None else "teacher"
    )
    parsed: dict[str, Harness] = {}
    rows: list[SftRow] = []
    for index, task in enumerate(tasks):
        task_id = str(task.get("id", index))
        harness_id = str(task.get("harness_id", ""))
        if harness_id not in harnesses:
            raise SftDataError(f"task {task_id}: harness_id {harness_id!r} is not in the inputs")
        if harness_id not in parsed:
            parsed[harness_id] = harness_from_dict(harnesses[harness_id])
        harness = parsed[harness_id]
        gold = trajectory_from_dict(task["gold"])
        try:
            context = LiveContext(**dict(task["context"]))
        except TypeError as exc:
            raise SftDataError(f"task {task_id}: context has unknown fields ({exc})") from exc
        variants: list[tuple[str, Harness, GoldTrajectory, PromptLayout]] = [
            ("original", harness, gold, "markdown")
        ]
        if policy is not None:
            for variant in range(options.variants_per_example):
                try:
                    example = augment(
                        harness, gold, policy, example_seed(options.seed, index, variant)
                    )
                except AugmentationError:
                    report.augment_failed += 1
                    continue
                variants.append(
                    (f"hsa-{variant}", example.harness, example.trajectory, example.prompt_layout)
                )
        for ordinal, (variant_name, variant_harness, variant_gold, layout) in enumerate(variants):
            report.examples += 1
            model: ChatModel = (
                ReplayModel(variant_gold, options.tool_mode)
                if teacher is None
                else teacher(variant_harness, variant_gold)
            )
            recording = RecordingModel(model)
            agent = HarnessAgent(
                model=recording,
                harness=variant_harness,
                tools=ToolRunner(
                    variant_harness.tools,
                    RecordedCatalog(variant_harness, variant_gold),
                    _no_secrets,
                ),
                config=AgentConfig(
                    tool_mode=options.tool_mode,
                    max_steps=max(options.max_steps, len(variant_gold.tool_calls) + 2),
                ),
                prompt_layout=layout,  # HSA's prompt-structure edit reaches the rows
            )
            trace = agent.reply(task["comment"], context, deadline_s=options.deadline_s)
            reason = drop_reason(
                trace,
                variant_gold,
                answer_match="exact" if teacher is None else "facts",
                max_reply_words=options.max_reply_words,
            )
            if reason:
                report.dropped[reason] += 1
                continue
            report.kept += 1
            turns = trace_rows(recording.calls, options.tool_mode)
            retried = any(turn.rejected for turn in turns)
            whole = retried and _chosen(options.seed, index, ordinal, options.recovery_fraction)
            if retried:
                report.retried += 1
                report.recovery_kept += int(whole)
            for turn in turns:
                if turn.rejected:
                    continue
                prompt = turn.prompt if whole else turn.prompt_without_retries
                rows.append(
                    SftRow(
                        task_id,
                        variant_name,
                        turn.kind,
                        prompt,
                        [turn.completion],
                        turn.tools if options.tool_mode == "native" else None,
                    )
                )
                report.rows[turn.kind] += 1
    return rows, report


def _chosen(seed: int, index: int, ordinal: int, fraction: float) -> bool:
    """A deterministic ``fraction`` of traces (a hash of seed, task index and variant)."""
    return example_seed(seed + 1, index, ordinal) / 2**64 < fraction


# --- turning recorded calls into turns --------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    kind: TurnKind
    prompt: list[dict[str, Any]]
    prompt_without_retries: list[dict[str, Any]]
    completion: dict[str, Any]
    tools: list[dict[str, Any]] | None
    rejected: bool  # the agent sent feedback and asked again: never a training target


def _is_feedback(message: Mapping[str, Any]) -> bool:
    """A user message the agent adds after a rejected answer (hook retry, unreadable output),
    as opposed to a text-mode tool observation."""
    return message.get("role") == "user" and not str(message.get("content", "")).startswith(
        "Observation from "
    )


def _turn_kind(result: ModelResult, tool_mode: ToolMode) -> TurnKind:
    if tool_mode == "native":
        if result.tool_calls:
            return "load_skill" if result.tool_calls[0].name == LOAD_SKILL else "tool_call"
        return "reply"
    try:
        action = parse_text_action(result.content or "")
    except TextActionError:
        return "reply" if "```" not in (result.content or "") else "unreadable"
    if isinstance(action, CallToolAction):
        return "load_skill" if action.tool == LOAD_SKILL else "tool_call"
    return "reply"


def trace_rows(calls: Sequence[RecordedCall], tool_mode: ToolMode) -> list[Turn]:
    """One turn per model call. The completion is the assistant message exactly as the agent
    put it into the next call's conversation (the last answer, which ends the reply, as the
    agent would have appended it)."""
    turns: list[Turn] = []
    cut: set[int] = set()  # message positions of rejected answers and their feedback
    for i, call in enumerate(calls):
        start = len(call.messages)
        nxt = calls[i + 1].messages if i + 1 < len(calls) else None
        if nxt is not None and len(nxt) > start:
            completion = nxt[start]
            rejected = len(nxt) > start + 1 and _is_feedback(nxt[start + 1])
        else:
            completion = {"role": "assistant", "content": call.result.content or ""}
            rejected = False
        if rejected:
            cut.update((start, start + 1))
        turns.append(
            Turn(
                _turn_kind(call.result, tool_mode),
                call.messages,
                [m for pos, m in enumerate(call.messages) if pos not in cut],
                completion,
                call.tools,
                rejected,
            )
        )
    return turns


# --- filters --------------------------------------------------------------------------------


def drop_reason(
    trace: ReplyTrace,
    gold: GoldTrajectory,
    *,
    answer_match: AnswerMatch,
    max_reply_words: int,
) -> str:
    """ "" when the trace passes Accuracy and Effectiveness, else the first failed check."""
    if trace.fallback_used:
        return f"fallback:{trace.fallback_reason.split(':')[0]}"
    if (trace.skill or None) != (gold.skill or None):
        return "wrong_skill"
    tool_steps = [s for s in trace.steps if s.kind == "tool_call"]
    made = [(s.name, s.detail.get("arguments")) for s in tool_steps]
    if made != [(c.name, dict(c.arguments)) for c in gold.tool_calls]:
        return "wrong_tool_calls"
    reply = trace.reply.strip()
    if not reply:
        return "empty_reply"
    if answer_match == "exact":
        if reply != gold.final_answer.strip():
            return "wrong_answer"
    elif not set(_NUMBER.findall(gold.final_answer)) <= set(_NUMBER.findall(reply)):
        return "wrong_answer"
    if any(not s.detail.get("ok", False) for s in tool_steps):
        return "tool_error"
    seen = [p for s in tool_steps for p in catalog_prices(s.detail.get("result"))]
    if any(p not in seen for p in quoted_prices(reply)):
        return "price_not_in_catalog"
    if "```" in reply:
        return "action_markup_in_reply"
    if len(reply.split()) > max_reply_words:
        return "reply_too_long"
    return ""
