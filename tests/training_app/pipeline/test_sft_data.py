"""SFT rows from replaying gold through the real HarnessAgent: the form the runtime sends,
HSA variants, filters, retry handling, and a teacher behind an OpenAI-compatible server."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from harness_app.harness.serialization import harness_from_yaml, harness_to_dict
from harness_app.hsa.augment import augment, example_seed
from harness_app.hsa.policy import HSA_TRAIN
from harness_app.hsa.trajectory import GoldTrajectory, trajectory_from_dict
from inference.agents.model_answer import ModelAnswer
from inference.agents.openai_model import OpenAIChatModel
from inference.clients.openai_compatible import ClientConfig, OpenAICompatibleClient
from inference.clients.text_actions import (
    CallToolAction,
    ReplyAction,
    parse_text_action,
    render_text_action,
)
from tests.inference.scripted_server import JsonReply, ScriptedServer, completion
from training_app.pipeline.catalog_snapshot import demo_catalog
from training_app.pipeline.hsa_policy import HeldOutPolicyError, UnknownPolicyError
from training_app.pipeline.sft_data import (
    BuildOptions,
    build_sft_rows,
)
from training_app.pipeline.task_set import generate_tasks

ROOT = Path(__file__).resolve().parents[3]
HARNESS = harness_from_yaml(
    (ROOT / "harness_app/demo_data/live_stream_harness.yaml").read_text(encoding="utf-8")
)
HARNESSES = {"demo": harness_to_dict(HARNESS)}
TASKS = generate_tasks(demo_catalog(), HARNESSES["demo"], "demo", split="train")
BY_ID = {t["id"]: t for t in TASKS}


class ScriptedChat:
    """An in-process teacher answering with fixed texts, in order."""

    name = "scripted-teacher"

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)

    def complete(self, messages: Any, **kwargs: Any) -> ModelAnswer:
        return ModelAnswer(self.answers.pop(0) if self.answers else "")


def _text(action: CallToolAction | ReplyAction) -> str:
    return render_text_action(action)


def _gold_script(gold: GoldTrajectory) -> list[str]:
    script = []
    if gold.skill:
        script.append(_text(CallToolAction("load_skill", {"name": gold.skill})))
    script += [_text(CallToolAction(c.name, dict(c.arguments))) for c in gold.tool_calls]
    return script


def test_text_mode_rows_are_the_agent_conversation_turn_by_turn() -> None:
    task = BY_ID["train-size-SW-1001"]
    gold = trajectory_from_dict(task["gold"])
    rows, report = build_sft_rows([task], HARNESSES, BuildOptions(tool_mode="text"))
    assert report.kept == 1 and report.dropped == {}
    # one row per assistant turn: load_skill, get_product, check_stock, reply
    assert [r.turn for r in rows] == ["load_skill", "tool_call", "tool_call", "reply"]
    first = rows[0]
    assert [m["role"] for m in first.prompt] == ["system", "user"]
    assert first.prompt[1]["content"] == task["comment"]
    assert "## How to answer" in first.prompt[0]["content"]  # text-action instructions
    assert "On screen now: Merino Wool Crew Sweater (SKU SW-1001" in first.prompt[0]["content"]
    # completions are the gold actions in the text-action format
    actions = [parse_text_action(r.completion[0]["content"]) for r in rows]
    assert actions[0] == CallToolAction("load_skill", {"name": "size-advice"})
    assert [(a.tool, a.arguments) for a in actions[1:3]] == [  # type: ignore[union-attr]
        (c.name, c.arguments) for c in gold.tool_calls
    ]
    assert actions[3] == ReplyAction(gold.final_answer)
    # each prompt is the previous prompt + its completion + the tool's observation
    for before, after in itertools.pairwise(rows):
        assert after.prompt[: len(before.prompt) + 1] == before.prompt + before.completion
        (observation,) = after.prompt[len(before.prompt) + 1 :]
        assert observation["role"] == "user"
    stock_observation = rows[3].prompt[-1]["content"]
    assert stock_observation.startswith("Observation from check_stock: ")
    assert json.loads(stock_observation.split(": ", 1)[1]) == gold.tool_calls[1].result
    assert all(r.tools is None for r in rows)


def test_native_mode_rows_carry_tool_calls_and_the_tool_specs() -> None:
    task = BY_ID["train-shipping-SW-1001"]
    gold = trajectory_from_dict(task["gold"])
    rows, _report = build_sft_rows([task], HARNESSES, BuildOptions(tool_mode="native"))
    assert [r.turn for r in rows] == ["load_skill", "tool_call", "reply"]
    call = rows[1].completion[0]["tool_calls"][0]["function"]
    assert call["name"] == "get_shipping"
    assert json.loads(call["arguments"]) == gold.tool_calls[0].arguments
    assert rows[2].prompt[-1]["role"] == "tool"
    assert rows[2].completion == [{"role": "assistant", "content": gold.final_answer}]
    names = [spec["function"]["name"] for spec in rows[0].tools or []]
    assert names == ["load_skill", "get_product", "check_stock", "list_coupons", "get_shipping"]
    record = rows[0].to_record()
    assert json.loads(record["tools"])[0]["function"]["name"] == "load_skill"


def test_hsa_variants_replay_on_the_augmented_harness() -> None:
    task = BY_ID["train-price-SW-1001"]
    options = BuildOptions(hsa_policy="hsa-train", variants_per_example=2, seed=5)
    rows, report = build_sft_rows([task], HARNESSES, options)
    assert report.examples == 3 and report.kept == 3
    assert {r.variant for r in rows} == {"original", "hsa-0", "hsa-1"}
    # the reference: the same augmentation computed directly
    gold = trajectory_from_dict(task["gold"])
    for variant in (0, 1):
        example = augment(HARNESS, gold, HSA_TRAIN, example_seed(5, 0, variant))
        variant_rows = [r for r in rows if r.variant == f"hsa-{variant}"]
        tool_rows = [r for r in variant_rows if r.turn == "tool_call"]
        made = [parse_text_action(r.completion[0]["content"]) for r in tool_rows]
        assert [(a.tool, a.arguments) for a in made] == [  # type: ignore[union-attr]
            (c.name, c.arguments) for c in example.trajectory.tool_calls
        ]
        if example.trajectory.skill:
            skill_row = variant_rows[0]
            assert parse_text_action(skill_row.completion[0]["content"]) == CallToolAction(
                "load_skill", {"name": example.trajectory.skill}
            )
    originals = {r.prompt[0]["content"] for r in rows if r.variant == "original"}
    augmented = {r.prompt[0]["content"] for r in rows if r.variant != "original"}
    assert originals.isdisjoint(augmented)


def test_an_hsa_prompt_layout_reaches_the_system_prompt_of_the_rows() -> None:
    # given the variants of one task, some of them with HSA's xml or json prompt layout
    task = BY_ID["train-price-SW-1001"]
    gold = trajectory_from_dict(task["gold"])
    variants = 12
    layouts = [
        augment(HARNESS, gold, HSA_TRAIN, example_seed(9, 0, v)).prompt_layout
        for v in range(variants)
    ]
    assert set(layouts) - {"markdown"}, "the seed draws no layout edit: pick another"
    # when rows are built
    options = BuildOptions(hsa_policy="hsa-train", variants_per_example=variants, seed=9)
    rows, _ = build_sft_rows([task], HARNESSES, options)
    # then each variant's system prompt is laid out as its augmentation says
    for variant, layout in enumerate(layouts):
        system = next(r for r in rows if r.variant == f"hsa-{variant}").prompt[0]["content"]
        starts = {"markdown": "## ", "xml": "<section", "json": '{"sections"'}
        assert system.startswith(starts[layout]), (layout, system[:40])


@pytest.mark.parametrize("policy", ["harness-variant-t1", "hsa-heldout"])
def test_held_out_policies_are_refused(policy: str) -> None:
    with pytest.raises(HeldOutPolicyError, match="no training stage uses a held-out policy"):
        build_sft_rows(TASKS[:1], HARNESSES, BuildOptions(hsa_policy=policy))


def test_unknown_policy_is_refused() -> None:
    with pytest.raises(UnknownPolicyError, match="unknown HSA policy 'nope'"):
        build_sft_rows(TASKS[:1], HARNESSES, BuildOptions(hsa_policy="nope"))


def test_teacher_traces_are_filtered_by_accuracy_and_effectiveness() -> None:
    price = BY_ID["train-price-SW-1001"]
    gold = trajectory_from_dict(price["gold"])
    good = [*_gold_script(gold), _text(ReplyAction("Sure: it is $89.00, 100% merino wool."))]
    wrong_tool = [
        _text(CallToolAction("load_skill", {"name": "product-qa"})),
        _text(CallToolAction("get_product", {"sku": "SW-1002"})),
        _text(ReplyAction("It is $89.00.")),
    ]
    wrong_skill = [_text(CallToolAction("load_skill", {"name": "promo-push"})), *good[1:]]
    missing_fact = [*_gold_script(gold), _text(ReplyAction("It's lovely merino wool."))]
    too_long = [
        *_gold_script(gold),
        _text(ReplyAction("It is $89.00, 100% merino. " + "wool " * 70)),
    ]
    scripts = [good, wrong_tool, wrong_skill, missing_fact, too_long]

    def teacher(harness: Any, g: GoldTrajectory) -> ScriptedChat:
        return ScriptedChat(scripts.pop(0))

    rows, report = build_sft_rows([price] * 5, HARNESSES, BuildOptions(), teacher=teacher)
    assert report.source == "teacher"
    assert report.kept == 1
    assert dict(report.dropped) == {
        "wrong_tool_calls": 1,
        "wrong_skill": 1,
        "wrong_answer": 1,
        "reply_too_long": 1,
    }
    assert len(rows) == 3


def test_a_price_the_catalog_never_returned_ends_in_the_hook_fallback_and_is_dropped() -> None:
    price = BY_ID["train-price-SW-1001"]
    gold = trajectory_from_dict(price["gold"])
    wrong = _text(ReplyAction("It is $79.00, 89 with tax."))
    script = [*_gold_script(gold), wrong, wrong, wrong]
    _rows, report = build_sft_rows(
        [price], HARNESSES, BuildOptions(), teacher=lambda h, g: ScriptedChat(list(script))
    )
    assert dict(report.dropped) == {"fallback:hook": 1}


@pytest.mark.parametrize(("fraction", "whole"), [(0.0, False), (1.0, True)])
def test_hook_retry_keeps_final_behaviour_or_the_whole_recovery(
    fraction: float, whole: bool
) -> None:
    price = BY_ID["train-price-SW-1001"]
    gold = trajectory_from_dict(price["gold"])
    bad = _text(ReplyAction("The best sweater here: $89.00, 100% merino wool."))
    fixed = _text(ReplyAction("It is $89.00 and 100% merino wool."))
    script = [*_gold_script(gold), bad, fixed]
    rows, report = build_sft_rows(
        [price],
        HARNESSES,
        BuildOptions(recovery_fraction=fraction),
        teacher=lambda h, g: ScriptedChat(list(script)),
    )
    assert report.kept == 1 and report.retried == 1 and report.recovery_kept == int(whole)
    # the rejected reply is never a completion
    completions = [r.completion[0]["content"] for r in rows]
    assert bad not in completions and "best" not in " ".join(completions)
    assert [r.turn for r in rows] == ["load_skill", "tool_call", "reply"]
    final = rows[-1]
    assert final.completion[0]["content"] == fixed
    retry_in_prompt = any("[no-absolute-claims]" in str(m["content"]) for m in final.prompt)
    assert retry_in_prompt is whole
    assert final.prompt[: len(rows[1].prompt) + 2] == rows[1].prompt + rows[1].completion + [
        final.prompt[len(rows[1].prompt) + 1]
    ]


def test_teacher_behind_an_openai_compatible_endpoint() -> None:
    shipping = BY_ID["train-shipping-SW-1002"]
    gold = trajectory_from_dict(shipping["gold"])
    answers = [*_gold_script(gold), _text(ReplyAction(gold.final_answer))]
    with ScriptedServer(*[JsonReply(completion(a)) for a in answers]) as server:
        client = OpenAICompatibleClient(ClientConfig(base_url=server.base_url, max_retries=0))

        def teacher(harness: Any, g: GoldTrajectory) -> OpenAIChatModel:
            return OpenAIChatModel(client, "teacher", stream=False)

        rows, report = build_sft_rows([shipping], HARNESSES, BuildOptions(), teacher=teacher)
        sent = [r.body["messages"] for r in server.requests]
        client.close()
    assert report.kept == 1
    assert [r.turn for r in rows] == ["load_skill", "tool_call", "reply"]
    # the teacher was sent exactly the prompts the rows train on
    assert [r.prompt for r in rows] == sent
