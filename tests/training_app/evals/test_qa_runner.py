"""Running QA items through the production HarnessAgent with scripted models (deterministic
unit tests): gold answers pass on the original and on T1/T2 variants, renamed catalog
parameters reach the catalog, distractor webhooks are never called, and the runner bounds
concurrency, reports progress in order and stops starting items on cancel."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from harness_app.harness.serialization import harness_from_yaml, harness_to_dict
from harness_app.hsa.trajectory import trajectory_from_dict
from inference.agents.harness_agent import LOAD_SKILL
from inference.agents.model_answer import AnswerToolCall, AnswerUsage, ModelAnswer
from inference.agents.model_port import ModelCallFailed
from inference.clients.text_actions import CallToolAction, ReplyAction, render_text_action
from training_app.evals.qa_runner import (
    JudgeVerdict,
    QAItemResult,
    QARunConfig,
    QARunError,
    gold_replay_failures,
    run_item,
    run_qa_set,
)
from training_app.evals.qa_sets import (
    QAItem,
    QASet,
    build_harness_variant_qa_set,
    build_live_stream_qa_set,
)
from training_app.evals.qa_summary import compare_qa_results, summarize_qa_results
from training_app.pipeline.catalog_snapshot import CatalogSnapshot, demo_catalog
from training_app.pipeline.harness_episode import OfflineToolRunner

ROOT = Path(__file__).resolve().parents[3]
DEMO_HARNESS = ROOT / "harness_app" / "demo_data" / "live_stream_harness.yaml"
Action = tuple[str, dict[str, Any]] | str


@cache
def live_set() -> QASet:
    harness = harness_to_dict(harness_from_yaml(DEMO_HARNESS.read_text("utf-8")))
    return build_live_stream_qa_set(demo_catalog(), harness, per_type=2)


@cache
def variant(which: str) -> QASet:
    return build_harness_variant_qa_set(live_set(), which)  # type: ignore[arg-type]


def gold_actions(gold: dict[str, Any]) -> list[Action]:
    actions: list[Action] = []
    if gold["skill"]:
        actions.append((LOAD_SKILL, {"name": gold["skill"]}))
    actions.extend((c["name"], dict(c["arguments"])) for c in gold["tool_calls"])
    actions.append(gold["final_answer"])
    return actions


class ScriptedModel:
    """Answers each item with a script of actions chosen by ``script(item)``. Stateless
    across calls (the step is the number of assistant turns so far), so one instance can
    serve many items on many threads. Records the most calls in flight at once."""

    def __init__(
        self,
        items: list[QAItem],
        script: Callable[[QAItem], list[Action]],
        *,
        tool_mode: str = "text",
        delay_s: float = 0.0,
    ) -> None:
        self.name = "scripted"
        self.items = items
        self.script = script
        self.tool_mode = tool_mode
        self.delay_s = delay_s
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()

    def _item(self, messages: list[dict[str, Any]]) -> QAItem:
        system, comment = messages[0]["content"], messages[1]["content"]
        return next(
            i
            for i in self.items
            if i.comment == comment and f"SKU {i.context['product_sku']}" in system
        )

    def complete(self, messages, *, tools, max_tokens, temperature, timeout_s):  # type: ignore[no-untyped-def]
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay_s:
                time.sleep(self.delay_s)
            actions = self.script(self._item(messages))
            step = sum(1 for m in messages if m["role"] == "assistant")
            action = actions[min(step, len(actions) - 1)]
            return self._answer(action, step)
        finally:
            with self.lock:
                self.in_flight -= 1

    def _answer(self, action: Action, step: int) -> ModelAnswer:
        usage = AnswerUsage(100, 10)
        if isinstance(action, str):
            text = render_text_action(ReplyAction(action)) if self.tool_mode == "text" else action
            return ModelAnswer(text, usage=usage)
        name, arguments = action
        if self.tool_mode == "text":
            return ModelAnswer(render_text_action(CallToolAction(name, arguments)), usage=usage)
        call = AnswerToolCall(f"call_{step}", name, json.dumps(arguments))
        return ModelAnswer("", (call,), "tool_calls", usage=usage)


def gold_model(qa: QASet, **kwargs: Any) -> ScriptedModel:
    return ScriptedModel(list(qa.items), lambda item: gold_actions(item.gold), **kwargs)


@pytest.mark.parametrize("which", ["live", "t1", "t2"])
@pytest.mark.parametrize("tool_mode", ["text", "native"])
def test_gold_answers_pass_every_item(which: str, tool_mode: str) -> None:
    qa = live_set() if which == "live" else variant(which)
    config = QARunConfig(tool_mode=tool_mode)  # type: ignore[arg-type]
    outcome = run_qa_set(gold_model(qa, tool_mode=tool_mode), qa, config=config, max_concurrency=3)
    assert [r.item_id for r in outcome.results] == [i.id for i in qa.items]
    failed = {r.item_id: r.failed_checks for r in outcome.results if not r.passed}
    assert failed == {}
    for result in outcome.results:
        assert result.scores.to_dict() == {
            "accuracy": 1.0,
            "effectiveness": 1.0,
            "tool_rationality": 1.0,
            "skill_selection": 1.0,
        }
        assert result.infrastructure_error == "" and result.model_calls >= 1
        assert result.prompt_tokens == 100 * result.model_calls
    assert outcome.item_scores == {i.id: 1.0 for i in qa.items}
    assert outcome.base_ids == {i.id: i.base_id for i in qa.items}
    assert gold_replay_failures(qa, tool_mode=tool_mode) == {}  # type: ignore[arg-type]


def test_renamed_catalog_parameters_reach_the_catalog() -> None:
    qa = variant("t1")
    item = next(
        i for i in qa.items if i.variant is not None and i.argument_names and i.gold["tool_calls"]
    )
    call = item.gold["tool_calls"][0]
    assert "sku" not in call["arguments"]  # the gold uses the variant's parameter name
    harness = qa.harness_for(item)
    catalog = CatalogSnapshot(demo_catalog())
    # the offline runner passes the renamed argument on under the catalog's name
    runner = OfflineToolRunner(harness.tools, catalog, names=item.argument_names)
    outcome = runner.run(call["name"], call["arguments"])
    assert outcome.ok and outcome.result == call["result"]
    # the original parameter name is refused by the variant's schema, in the variant's terms
    original = {"sku": item.context["product_sku"]}
    refused = runner.run(call["name"], original)
    assert not refused.ok and refused.error == "invalid_arguments"
    # the plain runtime runner could not have answered the correct call
    from inference.tools.runner import ToolRunner

    plain = ToolRunner(harness.tools, catalog, resolve_secret=lambda _ref: None)
    assert not plain.run(call["name"], call["arguments"]).ok


def test_a_model_that_memorised_the_original_names_fails_the_variant() -> None:
    base, qa = live_set(), variant("t1")
    # items whose gold the variant's renames changed (a skill or a tool it uses was renamed)
    renamed = [i for i in qa.items if i.gold != base.item(i.base_id).gold]
    assert len(renamed) > len(qa.items) // 3
    model = ScriptedModel(renamed, lambda item: gold_actions(base.item(item.base_id).gold))
    outcome = run_qa_set(model, qa, item_ids=[i.id for i in renamed], max_concurrency=2)
    assert outcome.results and not any(r.passed for r in outcome.results)
    reasons = {c.name for r in outcome.results for c in r.failed_checks}
    assert reasons & {"skill", "gold_tool_calls"}
    # while the same answers pass the original set
    original = run_qa_set(
        ScriptedModel(list(base.items), lambda item: gold_actions(item.gold)),
        base,
        item_ids=sorted({i.base_id for i in renamed}),
    )
    assert all(r.passed for r in original.results)


def test_distractor_webhook_tools_are_never_called() -> None:
    qa = variant("t1")
    item, distractor = next(
        (i, t)
        for i in qa.items
        for t in qa.harness_for(i).tools
        if t.executor.kind == "webhook" and i.gold["tool_calls"]
    )
    assert distractor.executor.url.startswith("https://example.invalid/")
    properties = distractor.input_schema.get("properties", {})
    arguments = {k: "x" for k in distractor.input_schema.get("required", [])}
    assert set(arguments) <= set(properties)

    def script(current: QAItem) -> list[Action]:
        actions = gold_actions(current.gold)
        return [*actions[:-1], (distractor.name, arguments), actions[-1]]

    result = run_item(ScriptedModel([item], script), qa.harness_for(item), item, demo_catalog())
    made = [c for c in result.tool_calls if c.name == distractor.name]
    assert len(made) == 1 and not made[0].ok
    step = next(s for s in result.trace["steps"] if s["name"] == distractor.name)
    assert step["detail"]["result"] == {"error": f"tool {distractor.name!r} is unavailable"}
    # the extra call is noted, the answer still passes, and tool rationality drops
    assert result.passed and not result.check("extra_tool_calls").passed  # type: ignore[union-attr]
    assert result.scores.tool_rationality < 1.0


def test_concurrency_is_bounded_and_progress_is_reported_in_the_caller_thread() -> None:
    qa = live_set()
    model = gold_model(qa, delay_s=0.01)
    seen: list[tuple[int, int, str, str]] = []

    def progress(done: int, total: int, result: QAItemResult) -> None:
        seen.append((done, total, result.item_id, threading.current_thread().name))

    outcome = run_qa_set(model, qa, max_concurrency=3, progress=progress)
    assert 1 < model.max_in_flight <= 3
    assert [s[0] for s in seen] == list(range(1, len(qa.items) + 1))
    assert {s[1] for s in seen} == {len(qa.items)}
    assert sorted(s[2] for s in seen) == sorted(i.id for i in qa.items)
    assert {s[3] for s in seen} == {threading.current_thread().name}
    assert not outcome.cancelled and outcome.total == len(qa.items)
    one = run_qa_set(gold_model(qa, delay_s=0.001), qa, max_concurrency=1)
    assert one.item_scores == outcome.item_scores
    with pytest.raises(QARunError, match="max_concurrency must be at least 1"):
        run_qa_set(model, qa, max_concurrency=0)


def test_cancel_stops_starting_items_and_keeps_finished_ones() -> None:
    qa = live_set()
    done: list[str] = []
    outcome = run_qa_set(
        gold_model(qa),
        qa,
        max_concurrency=2,
        progress=lambda n, total, result: done.append(result.item_id),
        should_cancel=lambda: len(done) >= 4,
    )
    assert outcome.cancelled and outcome.total == len(qa.items)
    # at most the two items in flight when the flag was seen finish after it
    assert 4 <= len(outcome.results) <= 5
    assert [r.item_id for r in outcome.results] == sorted(
        (r.item_id for r in outcome.results), key=[i.id for i in qa.items].index
    )
    never = run_qa_set(gold_model(qa), qa, should_cancel=lambda: True)
    assert never.cancelled and never.results == ()


class FailingModel:
    name = "down"

    def complete(self, messages, *, tools, max_tokens, temperature, timeout_s):  # type: ignore[no-untyped-def]
        raise ModelCallFailed("unavailable", "connection refused")


def test_endpoint_failures_are_infrastructure_errors_not_crashes() -> None:
    item = live_set().items[0]
    harness = live_set().harness_for(item)
    result = run_item(FailingModel(), harness, item, demo_catalog())
    assert not result.passed and result.infrastructure_error == "model_unavailable"
    assert result.check("answered").reason == "fallback: model_unavailable"  # type: ignore[union-attr]

    class Exploding(FailingModel):
        def complete(self, messages, **kwargs):  # type: ignore[no-untyped-def]
            raise RuntimeError("boom")

    result = run_item(Exploding(), harness, item, demo_catalog())
    assert not result.passed
    assert result.infrastructure_error == "runtime_error: RuntimeError: boom"


class Judge:
    name = "stub-judge"

    def __init__(self, fail_ids: set[str], explode: bool = False) -> None:
        self.fail_ids = fail_ids
        self.explode = explode

    def judge(self, item: QAItem, reply: str, trace: Any) -> JudgeVerdict:
        if self.explode:
            raise TimeoutError("judge endpoint timed out")
        bad = item.id in self.fail_ids
        return JudgeVerdict(not bad, 0.0 if bad else 1.0, "made up a discount" if bad else "ok")


def test_a_judge_verdict_is_a_required_check() -> None:
    qa = live_set()
    target = qa.items[1].id
    outcome = run_qa_set(gold_model(qa), qa, judge=Judge({target}))
    by_id = {r.item_id: r for r in outcome.results}
    assert not by_id[target].passed
    assert by_id[target].failed_checks[0].name == "judge"
    assert by_id[target].judge == JudgeVerdict(False, 0.0, "made up a discount", "stub-judge")
    assert sum(r.passed for r in outcome.results) == len(qa.items) - 1
    broken = run_item(
        gold_model(qa),
        qa.harness_for(qa.items[0]),
        qa.items[0],
        demo_catalog(),
        judge=Judge(set(), explode=True),
    )
    assert not broken.passed
    assert broken.check("judge").reason == "judge error: TimeoutError: judge endpoint timed out"  # type: ignore[union-attr]


def test_results_round_trip_through_json() -> None:
    qa = variant("t2")
    outcome = run_qa_set(gold_model(qa), qa, item_ids=[qa.items[0].id], judge=Judge(set()))
    (result,) = outcome.results
    stored = json.loads(json.dumps(result.to_dict()))
    assert QAItemResult.from_dict(stored) == result
    assert outcome.config.to_dict() == {
        "tool_mode": "text",
        "max_tokens": 256,
        "temperature": 0.0,
        "max_steps": 4,
        "deadline_s": 120.0,
    }


def test_refusals() -> None:
    qa = live_set()
    item = next(i for i in qa.items if i.gold["tool_calls"])
    harness = harness_to_dict(qa.harness_for(item))
    tools = [dict(t) for t in harness["tools"]]
    name = item.gold["tool_calls"][0]["name"]
    for tool in tools:
        if tool["name"] == name:
            tool["executor"] = {"kind": "webhook", "url": "https://merchant.example/hook"}
    with pytest.raises(QARunError, match=rf"its gold calls webhook tools \({name}\)"):
        run_item(gold_model(qa), dict(harness, tools=tools), item, demo_catalog())
    bare = QASet(kind=qa.kind, name="no catalog", items=qa.items, harnesses=qa.harnesses)
    with pytest.raises(QARunError, match="carries no catalog snapshot"):
        run_qa_set(gold_model(qa), bare)
    with pytest.raises(QARunError, match="tool_mode must be text or native"):
        QARunConfig(tool_mode="json")  # type: ignore[arg-type]
    assert trajectory_from_dict(item.gold).tool_calls


def test_run_summary_and_paired_comparison() -> None:
    qa = live_set()
    tool_items = [i.id for i in qa.items if i.gold["tool_calls"]]
    good = run_qa_set(gold_model(qa), qa)

    def lazy(item: QAItem) -> list[Action]:
        # answers with the gold text but never calls a tool
        return [item.gold["final_answer"]]

    bad = run_qa_set(ScriptedModel(list(qa.items), lazy), qa)
    summary = summarize_qa_results(bad.results, b=500)
    no_tools = len(qa.items) - len(tool_items)
    assert (summary.n, summary.passed) == (len(qa.items), no_tools)
    assert summary.score.estimate == pytest.approx(no_tools / len(qa.items))
    assert summary.failed_checks["gold_tool_calls"] == len(tool_items)
    # quoting prices no tool returned: the price hook retries, then falls back (not an
    # infrastructure error)
    hooked = [r for r in bad.results if r.fallback_reason.startswith("hook:")]
    assert hooked and summary.failed_checks["answered"] == len(hooked)
    assert summary.check_pass_rates["answered"] == pytest.approx(1 - len(hooked) / len(qa.items))
    assert summary.infrastructure_errors == 0
    assert summary.components["skill_selection"].estimate < 1.0
    assert summary.prompt_tokens == 100 * sum(r.model_calls for r in bad.results)
    assert 0 <= summary.latency_p50_s <= summary.latency_p95_s
    comparison = compare_qa_results(bad.results, good.results, resamples=999)
    assert comparison.pass_rate.estimate == pytest.approx(len(tool_items) / len(qa.items))
    assert comparison.mcnemar.only_b == len(tool_items) and comparison.mcnemar.only_a == 0
    assert comparison.mcnemar.p_value == pytest.approx(2 * 0.5 ** len(tool_items))
    assert comparison.pass_rate.p_value < 0.01
    assert comparison.components["accuracy"].estimate > 0
