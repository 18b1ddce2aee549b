"""HSA-RL: the rollout function on a scripted policy (exact token layout, masks, logprobs,
rewards of the gold behaviour), group semantics, params, and a real 2-step GRPO run on the
tiny model with per-component reward metrics reaching the reporter."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.training_app.pipeline.rl_tasks import demo_harnesses, demo_tasks
from training_app.pipeline.contract import NullReporter, StageInputs, StageSpec
from training_app.pipeline.hsa_policy import HeldOutPolicyError
from training_app.pipeline.policy_client import PolicyChatModel
from training_app.pipeline.rewards import COMPONENTS, accuracy, skill_selection, tool_rationality
from training_app.pipeline.rl import (
    HarnessRollout,
    RlParams,
    build_simulator,
    group_seed,
    prompt_key,
    run_rl_stage,
)
from training_app.pipeline.stage_params import StageParamsError


class ScriptedModel:
    """Stands in for the HF model in ``generate``: emits the next scripted turn's tokens
    (then EOS) with a peaked score on each, whatever the context."""

    def __init__(self, tokenizer: Any, turns: list[str]) -> None:
        import torch

        self.device = torch.device("cpu")
        self.tokenizer = tokenizer
        self.turns = list(turns)
        self.contexts: list[list[int]] = []

    def generate(self, input_ids: Any, *, max_new_tokens: int, **_: Any) -> Any:
        import torch

        self.contexts.append(input_ids[0].tolist())
        text = self.turns.pop(0)
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        ids = [*ids, self.tokenizer.eos_token_id][:max_new_tokens]
        scores = []
        for token in ids:
            score = torch.zeros(1, len(self.tokenizer))
            score[0, token] = 30.0
            scores.append(score)
        sequences = torch.cat([input_ids, torch.tensor([ids])], dim=1)
        return SimpleNamespace(sequences=sequences, scores=scores)


def _action(payload: dict[str, Any], reasoning: str = "") -> str:
    block = "```json\n" + json.dumps(payload, ensure_ascii=False) + "\n```"
    return f"{reasoning}\n{block}" if reasoning else block


def _gold_script(gold: dict[str, Any]) -> list[str]:
    turns = [
        _action(
            {"action": "call_tool", "tool": "load_skill", "arguments": {"name": gold["skill"]}},
            "I should load the skill first.",
        )
    ]
    for call in gold["tool_calls"]:
        turns.append(
            _action({"action": "call_tool", "tool": call["name"], "arguments": call["arguments"]})
        )
    turns.append(_action({"action": "reply", "text": gold["final_answer"]}))
    return turns


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_dir)


def test_scripted_rollout_layout_masks_and_rewards(tiny_model_dir: Path, tokenizer: Any) -> None:
    params = RlParams(max_turn_tokens=200, max_completion_tokens=4000)
    inputs = StageInputs(
        tiny_model_dir,
        tiny_model_dir,
        harnesses=demo_harnesses(),
        tasks=demo_tasks(4),
        hsa_policy="hsa-train",
    )
    simulator = build_simulator(params, inputs)
    rollout = HarnessRollout(simulator, tokenizer, params, seed=5)
    task_index = 0
    episode = simulator.episode(task_index, group_seed(5, 0, task_index))
    gold = episode.gold_dict
    assert gold["tool_calls"], "the first demo task needs a tool call"
    script = _gold_script(gold)
    model = ScriptedModel(tokenizer, script * 2)
    key = prompt_key(simulator.tasks[task_index].id, simulator.tasks[task_index].comment)
    out = rollout.rollouts([key, key], model, n=2, step=0)

    assert set(out) >= {
        "prompt_ids",
        "completion_ids",
        "logprobs",
        "env_mask",
        "trace",
        "gold",
        "reasoning_tokens",
    }
    assert all(len(out[k]) == 2 for k in out)
    # One variant per group: both rollouts saw the same harness and gold.
    assert out["variant"][0] == out["variant"][1] and out["gold"][0] == out["gold"][1] == gold
    assert out["prompt_ids"][0] == out["prompt_ids"][1]

    prompt, completion = out["prompt_ids"][0], out["completion_ids"][0]
    mask, logprobs = out["env_mask"][0], out["logprobs"][0]
    assert len(completion) == len(mask) == len(logprobs)
    # The model saw exactly the recorded prefix at every turn (no re-tokenisation).
    full = prompt + completion
    for context in model.contexts[: len(script)]:
        assert full[: len(context)] == context
    # Model tokens: exactly the scripted turns, each closed by EOS.
    generated = [t for t, m in zip(completion, mask, strict=True) if m == 1]
    expected: list[int] = []
    for turn in script:
        expected += tokenizer(turn, add_special_tokens=False)["input_ids"] + [
            tokenizer.eos_token_id
        ]
    assert generated == expected
    # Environment tokens: the observations and template markup, never model text.
    environment = tokenizer.decode([t for t, m in zip(completion, mask, strict=True) if m == 0])
    assert "Observation from load_skill" in environment
    assert f"Observation from {gold['tool_calls'][0]['name']}" in environment
    assert '"action"' not in environment
    # The flattened sequence is the chat template's rendering of the whole conversation.
    trace = out["trace"][0]
    assert not trace["fallback_used"] and trace["reply"] == gold["final_answer"]
    # Logprobs: the scripted scores are peaked (~0) on model tokens, exactly 0 elsewhere.
    assert all(lp == 0.0 for lp, m in zip(logprobs, mask, strict=True) if m == 0)
    assert all(-1e-3 < lp <= 0.0 for lp, m in zip(logprobs, mask, strict=True) if m == 1)
    # The gold behaviour earns the full task rewards.
    assert accuracy(trace, gold) == 1.0
    assert tool_rationality(trace, gold) == 1.0
    assert skill_selection(trace, gold) == 1.0
    assert out["reasoning_tokens"][0][0] == len(
        tokenizer("I should load the skill first.", add_special_tokens=False)["input_ids"]
    )
    assert out["reasoning_tokens"][0][1:] == [0] * (len(script) - 1)


def test_rendered_conversation_matches_flattened_tokens(
    tiny_model_dir: Path, tokenizer: Any
) -> None:
    """An independent reference: render the final conversation with the chat template and
    compare it, as text, to the decoded prompt + completion."""
    turns = [
        _action({"action": "call_tool", "tool": "get_product", "arguments": {"sku": "SW-1001"}}),
        "plain words",
    ]
    model = ScriptedModel(tokenizer, turns)
    client = PolicyChatModel(model, tokenizer, max_completion_tokens=500)
    messages = [
        {"role": "system", "content": "You are a host."},
        {"role": "user", "content": "price?"},
    ]
    first = client.complete(messages, tools=None, max_tokens=100, temperature=1.0, timeout_s=5)
    messages += [
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": 'Observation from get_product: {"price": "89.00"}'},
    ]
    second = client.complete(messages, tools=None, max_tokens=100, temperature=1.0, timeout_s=5)
    messages.append({"role": "assistant", "content": second.content})
    rendered = tokenizer.apply_chat_template(messages, tokenize=False)
    decoded = tokenizer.decode(client.prompt_ids + client.completion_ids)
    assert rendered.endswith("\n") and decoded == rendered[:-1]
    # A call that does not extend the previous conversation is refused.
    from inference.agents.model_port import ModelCallFailed

    with pytest.raises(ModelCallFailed, match="extend the conversation"):
        client.complete(messages[:2], tools=None, max_tokens=10, temperature=1.0, timeout_s=5)


def test_token_budget_ends_the_rollout(tiny_model_dir: Path, tokenizer: Any) -> None:
    """The first call fits; its observation does not: it is cut at the budget, the rollout
    ends in the agent's fallback, and the completion is exactly the budget long."""
    params = RlParams(max_turn_tokens=40, max_completion_tokens=60)
    inputs = StageInputs(
        tiny_model_dir, tiny_model_dir, harnesses=demo_harnesses(), tasks=demo_tasks(2)
    )
    rollout = HarnessRollout(build_simulator(params, inputs), tokenizer, params, seed=0)
    key = prompt_key(rollout.simulator.tasks[0].id, rollout.simulator.tasks[0].comment)
    call = _action({"action": "call_tool", "tool": "get_product", "arguments": {"sku": "SW-1001"}})
    generated = len(tokenizer(call, add_special_tokens=False)["input_ids"]) + 1
    assert generated < 40
    out = rollout.rollouts([key, key], ScriptedModel(tokenizer, [call, call]), n=2, step=0)
    assert [len(c) for c in out["completion_ids"]] == [60, 60]
    for trace, mask in zip(out["trace"], out["env_mask"], strict=True):
        assert trace["fallback_used"] and trace["fallback_reason"] == "model_protocol"
        assert mask == [1] * generated + [0] * (60 - generated)


def test_groups_must_repeat_one_prompt(tiny_model_dir: Path, tokenizer: Any) -> None:
    params = RlParams()
    inputs = StageInputs(
        tiny_model_dir, tiny_model_dir, harnesses=demo_harnesses(), tasks=demo_tasks(2)
    )
    rollout = HarnessRollout(build_simulator(params, inputs), tokenizer, params, seed=0)
    a, b = (prompt_key(t.id, t.comment) for t in rollout.simulator.tasks)
    with pytest.raises(ValueError, match="mixes prompts"):
        rollout.rollouts([a, b], ScriptedModel(tokenizer, []), n=2, step=0)
    with pytest.raises(ValueError, match="groups of 2"):
        rollout.rollouts([a, a, b], ScriptedModel(tokenizer, []), n=2, step=0)


def test_params() -> None:
    params = RlParams.from_mapping(
        {"aggregation": "gdpo", "reward_weights": {"accuracy": 2}, "length_penalty": False}
    )
    assert params.components == COMPONENTS[:-1]
    assert params.weights == [2.0, 1.0, 1.0, 1.0]
    for values, key in (
        ({"aggregation": "mean"}, "aggregation"),
        ({"reward_weights": {"speed": 1.0}}, "reward_weights"),
        ({"num_generations": 1}, "num_generations"),
        ({"length_band_low": 300}, "length_band_low"),
        ({"lr": 1e-5}, "lr"),
    ):
        with pytest.raises(StageParamsError, match=key):
            RlParams.from_mapping(values)


def test_heldout_policy_refused_before_training(tiny_model_dir: Path, tmp_path: Path) -> None:
    inputs = StageInputs(
        tiny_model_dir,
        tiny_model_dir,
        harnesses=demo_harnesses(),
        tasks=demo_tasks(2),
        hsa_policy="harness-variant-t1",
    )
    with pytest.raises(HeldOutPolicyError):
        run_rl_stage(StageSpec("hsa_rl", {}), inputs, tmp_path, NullReporter())


class MetricsReporter(NullReporter):
    def __init__(self, stop_at: int | None = None) -> None:
        self.logged: list[dict[str, float]] = []
        self.step = 0
        self.stop_at = stop_at

    def progress(self, step: int, total: int) -> None:
        self.step = step

    def metrics(self, step: int, values: Any) -> None:
        self.logged.append(dict(values))

    def should_stop(self) -> bool:
        return self.stop_at is not None and self.step >= self.stop_at


def test_two_step_grpo_run_reports_each_reward_and_resumes(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    from transformers import AutoModelForCausalLM

    spec = StageSpec(
        "hsa_rl",
        {
            "steps": 2,
            "num_generations": 2,
            "prompts_per_step": 1,
            "max_turn_tokens": 8,
            "max_completion_tokens": 32,
            "beta": 0.04,
            "aggregation": "gdpo",
            "learning_rate": 1e-4,
        },
    )
    inputs = StageInputs(
        tiny_model_dir,
        tiny_model_dir,
        harnesses=demo_harnesses(),
        tasks=demo_tasks(4),
        hsa_policy="hsa-train",
    )
    workdir = tmp_path / "rl"
    first = MetricsReporter(stop_at=1)
    stopped = run_rl_stage(spec, inputs, workdir, first)
    assert stopped.stopped and stopped.final_dir is None and stopped.steps_done == 1
    assert (workdir / "checkpoints" / "checkpoint-1").is_dir()

    second = MetricsReporter()
    outcome = run_rl_stage(spec, inputs, workdir, second)
    assert not outcome.stopped and outcome.steps_done == 2
    assert outcome.summary["resumed_from"] == "checkpoint-1"
    assert outcome.final_dir is not None
    AutoModelForCausalLM.from_pretrained(outcome.final_dir)
    step_logs = [v for v in first.logged + second.logged if "loss" in v]
    assert len(step_logs) == 2
    for values in step_logs:
        for name in COMPONENTS:
            assert f"rewards/{name}/mean" in values
        assert "kl" in values
    assert outcome.summary["groups_rolled_out"] == 1
    assert set(outcome.summary["final_metrics"]) >= {f"rewards/{n}/mean" for n in COMPONENTS}
