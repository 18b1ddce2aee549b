"""The HSA-RL simulator: the in-memory room catalog answers the demo golds' tool calls
exactly as the golds record them (through the real ToolRunner), training policies only, and
one verified HSA variant per episode."""

from __future__ import annotations

import pytest

from harness_app.harness.serialization import harness_from_dict, harness_to_dict
from harness_app.hsa.trajectory import trajectory_to_dict
from inference.agents.session import AgentConfig
from inference.tools.runner import ToolRunner
from tests.training_app.pipeline.rl_tasks import HARNESS_ID, demo_harnesses, demo_tasks
from training_app.pipeline.catalog_snapshot import DEMO_PRODUCTS_CSV
from training_app.pipeline.hsa_policy import HeldOutPolicyError, UnknownPolicyError, training_policy
from training_app.pipeline.simulator import (
    LiveStreamSimulator,
    ProductCatalog,
    SimulatorError,
    coupons_from_tasks,
)

TEXT = AgentConfig(tool_mode="text")


def _catalog() -> ProductCatalog:
    return ProductCatalog.from_csv(DEMO_PRODUCTS_CSV, coupons_from_tasks(demo_tasks()))


def test_catalog_reproduces_every_gold_tool_result() -> None:
    harness = harness_from_dict(demo_harnesses()[HARNESS_ID])
    runner = ToolRunner(harness.tools, _catalog(), resolve_secret=lambda _ref: None)
    checked = 0
    for task in demo_tasks():
        for call in task["gold"]["tool_calls"]:
            outcome = runner.run(call["name"], call["arguments"])
            assert outcome.ok, (task["id"], call, outcome)
            assert outcome.result == call["result"], (task["id"], call["name"])
            checked += 1
    assert checked > 80


def test_catalog_errors_are_observations() -> None:
    catalog = _catalog()
    assert "error" in catalog.get_product("NOPE-1")
    assert "error" in catalog.check_stock("SW-1001", "XXXL")
    assert "error" in catalog.get_shipping("SW-1001", " ")
    assert catalog.search_products("merino")["results"][0]["sku"] == "SW-1001"


def test_training_policy_refuses_heldout_and_unknown() -> None:
    assert training_policy("") is None
    policy = training_policy("hsa-train")
    assert policy is not None and policy.split == "train"
    for name in ("harness-variant-t1", "harness-variant-t2", "hsa-heldout"):
        with pytest.raises(HeldOutPolicyError, match="held-out"):
            training_policy(name)
    with pytest.raises(UnknownPolicyError, match="unknown HSA policy"):
        training_policy("hsa-everything")


def test_episodes_are_verified_variants_with_remapped_gold() -> None:
    tasks = demo_tasks(6)
    simulator = LiveStreamSimulator(
        harnesses=demo_harnesses(),
        tasks=tasks,
        catalog=_catalog(),
        policy=training_policy("hsa-train"),
        agent_config=TEXT,
    )
    original = harness_to_dict(simulator.harnesses[HARNESS_ID])
    changed = 0
    for index in range(len(tasks)):
        first = simulator.episode(index, seed=11)
        again = simulator.episode(index, seed=11)
        assert harness_to_dict(first.harness) == harness_to_dict(again.harness)
        assert first.variant["policy"] == "hsa-train" and first.variant.get("verified")
        changed += harness_to_dict(first.harness) != original
        # The gold follows the variant: its skill and tools exist in the variant harness.
        gold = first.gold_dict
        if gold["skill"]:
            assert first.harness.skill(gold["skill"]) is not None
        names = {t.name for t in first.harness.tools}
        assert {c["name"] for c in gold["tool_calls"]} <= names
    assert changed >= 1
    fixed = LiveStreamSimulator(
        harnesses=demo_harnesses(), tasks=tasks, catalog=_catalog(), policy=None, agent_config=TEXT
    )
    episode = fixed.episode(0, seed=11)
    assert episode.gold_dict == trajectory_to_dict(fixed.tasks[0].gold)


def test_simulator_refuses_bad_setups() -> None:
    harnesses = demo_harnesses()
    with pytest.raises(SimulatorError, match="text tool mode"):
        LiveStreamSimulator(
            harnesses=harnesses,
            tasks=demo_tasks(1),
            catalog=_catalog(),
            policy=None,
            agent_config=AgentConfig(tool_mode="native"),
        )
    with pytest.raises(SimulatorError, match="unknown harness ids"):
        LiveStreamSimulator(
            harnesses={"other": harnesses[HARNESS_ID]},
            tasks=demo_tasks(1),
            catalog=_catalog(),
            policy=None,
            agent_config=TEXT,
        )
    webhook = dict(harnesses[HARNESS_ID])
    tools = [dict(t) for t in webhook["tools"]]
    tools[0]["executor"] = {"kind": "webhook", "url": "https://example.com/hook"}
    webhook["tools"] = tools
    with pytest.raises(SimulatorError, match="webhook tools"):
        LiveStreamSimulator(
            harnesses={HARNESS_ID: webhook},
            tasks=demo_tasks(1),
            catalog=_catalog(),
            policy=None,
            agent_config=TEXT,
        )


class _CapturingModel:
    name = "capture"

    def __init__(self) -> None:
        self.systems: list[str] = []

    def complete(self, messages, *, tools, max_tokens, temperature, timeout_s):  # type: ignore[no-untyped-def]
        from inference.agents.model_answer import AnswerUsage, ModelAnswer

        self.systems.append(messages[0]["content"])
        return ModelAnswer(
            '```json\n{"action": "reply", "text": "Hi!"}\n```', usage=AnswerUsage(1, 1)
        )


def test_episode_prompt_layout_reaches_the_agent() -> None:
    simulator = LiveStreamSimulator(
        harnesses=demo_harnesses(),
        tasks=demo_tasks(1),
        catalog=_catalog(),
        policy=training_policy("hsa-train"),
        agent_config=TEXT,
    )
    layouts = {}
    for seed in range(60):
        episode = simulator.episode(0, seed)
        layouts.setdefault(episode.prompt_layout, episode)
        if {"xml", "json"} & set(layouts):
            break
    other = next(layout for layout in layouts if layout != "markdown")
    model = _CapturingModel()
    trace = simulator.run(layouts[other], model)
    assert trace.reply == "Hi!"
    marker = "<section" if other == "xml" else '"sections"'
    assert marker in model.systems[0]


def test_a_correct_call_to_a_renamed_tool_parameter_reaches_the_catalog() -> None:
    """HSA renames catalog tool parameters (``sku`` -> ``article_number``); the catalog reads
    its own names. Replaying the variant's gold through the simulator must get the gold's
    own tool results back, not "no product with SKU ''" (which penalised correct calls)."""
    from training_app.pipeline.sft_data import ReplayModel

    tasks = demo_tasks(9)
    simulator = LiveStreamSimulator(
        harnesses=demo_harnesses(),
        tasks=tasks,
        catalog=_catalog(),
        policy=training_policy("hsa-train"),
        agent_config=TEXT,
    )
    renamed_calls = 0
    for index in range(len(tasks)):
        for seed in range(6):
            episode = simulator.episode(index, seed)
            called = {c.name for c in episode.gold.tool_calls}
            if not called & {t for t, names in episode.argument_names.items() if names}:
                continue
            trace = simulator.run(episode, ReplayModel(episode.gold, "text")).to_dict()
            steps = [s for s in trace["steps"] if s["kind"] == "tool_call"]
            for step, gold_call in zip(steps, episode.gold.tool_calls, strict=True):
                assert step["detail"]["ok"], step
                if gold_call.result is not None:
                    assert step["detail"]["result"] == gold_call.result
            renamed_calls += len(steps)
    assert renamed_calls >= 3  # the case occurred: variants with renamed parameters were run
