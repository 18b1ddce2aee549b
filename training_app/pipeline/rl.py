"""Stage 3, HSA-RL: GRPO (or GDPO) in the live-stream simulator under HSA.

TRL's ``GRPOTrainer`` (1.16) drives training; generation is ours, through ``rollout_func``.
What TRL hands that function (checked in ``GRPOTrainer._generate``, not the docstring): the
prompts of the process's generation batch *as the ``RepeatSampler`` produced them*, i.e. each
dataset prompt repeated ``num_generations`` times in a row; it must return one rollout per
entry, in order. Each group of ``num_generations`` entries is one task under ONE harness
variant (drawn per group with a seed from the run seed, the step and the task), so the group
baseline compares rollouts that saw the same harness.

A rollout is the project's ``HarnessAgent`` in text tool mode, the policy being trained as
its model (``PolicyChatModel``), tools executed by the real ``ToolRunner`` against the room
catalog (``simulator``). Its turns are flattened into one completion: model tokens with
``env_mask`` 1, tool observations and template tokens with ``env_mask`` 0 (out of the loss),
and the sampling log-probabilities. The trace, the variant's gold and the per-turn reasoning
lengths go to the reward functions (``rewards``) as extra columns.

Aggregation: ``sum`` is TRL's default ``sum_then_normalize`` (weighted sum, then group
normalisation); ``gdpo`` is ``normalize_then_sum`` (each reward normalised within its group,
then the weighted sum, then batch normalisation), so a small-variance component is not
drowned by a large one. With ``beta`` > 0 a reference model is kept and TRL logs ``kl``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from training_app.pipeline.catalog_snapshot import DEMO_PRODUCTS_CSV
from training_app.pipeline.contract import StageInputs, StageOutcome, StageReporter, StageSpec
from training_app.pipeline.hsa_policy import training_policy
from training_app.pipeline.rewards import COMPONENTS, LengthBand, reasoning_text, reward_functions
from training_app.pipeline.simulator import (
    LiveStreamSimulator,
    ProductCatalog,
    coupons_from_tasks,
)
from training_app.pipeline.stage_params import StageParamsError, params_from_mapping, require

STAGE = "hsa_rl"
AGGREGATIONS = {"sum": "sum_then_normalize", "gdpo": "normalize_then_sum"}


@dataclass(frozen=True)
class RlParams:
    """Defaults are the CPU profile (SmolLM2-135M, a handful of steps)."""

    steps: int = 4
    learning_rate: float = 1e-6
    num_generations: int = 4
    prompts_per_step: int = 2
    gradient_accumulation_steps: int = 1
    beta: float = 0.0
    temperature: float = 1.0
    aggregation: Literal["sum", "gdpo"] = "sum"
    # Weight per reward component (missing components weigh 1.0).
    reward_weights: Mapping[str, float] = field(default_factory=dict)
    length_penalty: bool = True
    length_band_low: int = 100
    length_band_high: int = 200
    max_turn_tokens: int = 256
    max_completion_tokens: int = 1024
    max_prompt_tokens: int = 3072
    agent_max_steps: int = 4
    # Products CSV in the demo catalog's format; "" uses harness_app/demo_data/products.csv.
    catalog_csv: str = ""
    currency: str = "USD"
    save_steps: int = 2
    logging_steps: int = 1

    def __post_init__(self) -> None:
        require(self.steps >= 1, STAGE, "steps", "must be >= 1")
        require(self.learning_rate > 0, STAGE, "learning_rate", "must be > 0")
        require(
            self.num_generations >= 2,
            STAGE,
            "num_generations",
            "must be >= 2 (GRPO compares a group)",
        )
        require(self.prompts_per_step >= 1, STAGE, "prompts_per_step", "must be >= 1")
        require(
            self.gradient_accumulation_steps >= 1,
            STAGE,
            "gradient_accumulation_steps",
            "must be >= 1",
        )
        require(self.beta >= 0, STAGE, "beta", "must be >= 0")
        require(self.temperature > 0, STAGE, "temperature", "must be > 0 (rollouts are sampled)")
        unknown = sorted(set(self.reward_weights) - set(COMPONENTS))
        require(
            not unknown,
            STAGE,
            "reward_weights",
            f"has unknown components {unknown}; known: {list(COMPONENTS)}",
        )
        require(
            0 < self.length_band_low <= self.length_band_high,
            STAGE,
            "length_band_low",
            "must be > 0 and <= length_band_high",
        )
        require(self.max_turn_tokens >= 1, STAGE, "max_turn_tokens", "must be >= 1")
        require(
            self.max_completion_tokens >= self.max_turn_tokens,
            STAGE,
            "max_completion_tokens",
            "must be >= max_turn_tokens",
        )
        require(self.max_prompt_tokens >= 16, STAGE, "max_prompt_tokens", "must be >= 16")
        require(self.agent_max_steps >= 1, STAGE, "agent_max_steps", "must be >= 1")
        require(self.save_steps >= 1, STAGE, "save_steps", "must be >= 1")
        require(self.logging_steps >= 1, STAGE, "logging_steps", "must be >= 1")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any] | None) -> RlParams:
        return params_from_mapping(cls, values, stage=STAGE)

    @property
    def components(self) -> tuple[str, ...]:
        return COMPONENTS if self.length_penalty else COMPONENTS[:-1]

    @property
    def weights(self) -> list[float]:
        return [float(self.reward_weights.get(name, 1.0)) for name in self.components]


def group_seed(seed: int, step: int, task_index: int) -> int:
    digest = hashlib.sha256(f"hsa-rl:{seed}:{step}:{task_index}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def prompt_key(task_id: str, comment: str) -> str:
    """The dataset's prompt text for a task: unique per task, readable in logs."""
    return f"[{task_id}] {comment}"


class HarnessRollout:
    """GRPO's ``rollout_func``: ``(prompts, trainer) -> dict`` (see the module docstring)."""

    def __init__(
        self, simulator: LiveStreamSimulator, tokenizer: Any, params: RlParams, seed: int
    ) -> None:
        self.simulator = simulator
        self.tokenizer = tokenizer
        self.params = params
        self.seed = seed
        self.index = {prompt_key(t.id, t.comment): i for i, t in enumerate(simulator.tasks)}
        if len(self.index) != len(simulator.tasks):
            raise StageParamsError("hsa_rl: task ids must be unique")
        self.variants_used = 0
        self.unaugmented = 0

    def __call__(self, prompts: Sequence[Any], trainer: Any) -> dict[str, Any]:
        model = trainer.accelerator.unwrap_model(trainer.model)
        n = int(trainer.num_generations)
        return self.rollouts(prompts, model, n, int(trainer.state.global_step))

    def rollouts(self, prompts: Sequence[Any], model: Any, n: int, step: int) -> dict[str, Any]:
        from training_app.pipeline.policy_client import PolicyChatModel, turn_closing_text

        if len(prompts) % n:
            raise ValueError(f"{len(prompts)} prompts do not split into groups of {n}")
        closing = self.tokenizer(turn_closing_text(self.tokenizer), add_special_tokens=False)[
            "input_ids"
        ]
        out: dict[str, list[Any]] = {
            key: []
            for key in (
                "prompt_ids",
                "completion_ids",
                "logprobs",
                "env_mask",
                "trace",
                "gold",
                "reasoning_tokens",
                "variant",
            )
        }
        for start in range(0, len(prompts), n):
            group = prompts[start : start + n]
            if any(p != group[0] for p in group):
                raise ValueError(
                    "a rollout group mixes prompts; expected each prompt repeated "
                    "num_generations times"
                )
            task_index = self.index[str(group[0])]
            episode = self.simulator.episode(task_index, group_seed(self.seed, step, task_index))
            self.variants_used += 1
            self.unaugmented += int("unaugmented" in episode.variant)
            for _ in group:
                client = PolicyChatModel(
                    model,
                    self.tokenizer,
                    max_completion_tokens=self.params.max_completion_tokens,
                    max_prompt_tokens=self.params.max_prompt_tokens,
                    closing_ids=closing,
                )
                trace = self.simulator.run(episode, client)
                if not client.completion_ids:  # no model call happened (a hook answered)
                    client.completion_ids.append(self.tokenizer.eos_token_id)
                    client.env_mask.append(0)
                    client.logprobs.append(0.0)
                out["prompt_ids"].append(client.prompt_ids or self._prompt_only(episode))
                out["completion_ids"].append(client.completion_ids)
                out["logprobs"].append(client.logprobs)
                out["env_mask"].append(client.env_mask)
                out["trace"].append(trace.to_dict())
                out["gold"].append(episode.gold_dict)
                out["reasoning_tokens"].append(
                    [
                        len(
                            self.tokenizer(reasoning_text(t), add_special_tokens=False)["input_ids"]
                        )
                        for t in client.turn_texts
                    ]
                )
                out["variant"].append(dict(episode.variant))
        return out

    def _prompt_only(self, episode: Any) -> list[int]:
        return list(
            self.tokenizer(episode.task.comment, add_special_tokens=False)["input_ids"]
        ) or [self.tokenizer.eos_token_id]


def build_simulator(params: RlParams, inputs: StageInputs) -> LiveStreamSimulator:
    from inference.agents.session import AgentConfig

    if inputs.catalogs and not params.catalog_csv:
        # the run's rooms as the platform exported them (one room per harness, usually one)
        catalog = ProductCatalog(
            [
                {**product, "price": Decimal(str(product["price"]))}
                for snapshot in inputs.catalogs.values()
                for product in snapshot.get("products", [])
            ],
            list(
                {  # one coupon per code: the room's own first, then any the golds recorded
                    str(c["code"]): c
                    for c in reversed(
                        [
                            *(
                                c
                                for snapshot in inputs.catalogs.values()
                                for c in snapshot.get("coupons", [])
                            ),
                            *coupons_from_tasks(inputs.tasks),
                        ]
                    )
                }.values()
            ),
            params.currency,
        )
    else:
        catalog_path = Path(params.catalog_csv) if params.catalog_csv else DEMO_PRODUCTS_CSV
        if not catalog_path.is_file():
            raise StageParamsError(f"hsa_rl params: catalog_csv {catalog_path} is not a file")
        catalog = ProductCatalog.from_csv(
            catalog_path, coupons_from_tasks(inputs.tasks), params.currency
        )
    config = AgentConfig(
        max_steps=params.agent_max_steps,
        max_tokens=params.max_turn_tokens,
        temperature=params.temperature,
        tool_mode="text",
    )
    return LiveStreamSimulator(
        harnesses=inputs.harnesses,
        tasks=inputs.tasks,
        catalog=catalog,
        policy=training_policy(inputs.hsa_policy),
        agent_config=config,
    )


def run_rl_stage(
    spec: StageSpec, inputs: StageInputs, workdir: Path, reporter: StageReporter
) -> StageOutcome:
    params = RlParams.from_mapping(spec.params)
    simulator = build_simulator(params, inputs)

    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from training_app.pipeline.reporting import ReporterCallback
    from training_app.pipeline.trainer_run import (
        left_padded_tokenizer,
        online_trainer_args,
        run_trainer,
        with_overrides,
    )

    model_dir = Path(inputs.init_model_dir)
    tokenizer = left_padded_tokenizer(model_dir)
    torch.manual_seed(inputs.seed)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    rollout = HarnessRollout(simulator, tokenizer, params, inputs.seed)
    policy_label = inputs.hsa_policy or "none (Fixed-Harness)"
    reporter.log(
        f"HSA-RL: {len(simulator.tasks)} tasks, policy {policy_label}, "
        f"{params.num_generations} rollouts per group, aggregation {params.aggregation}"
    )
    config = GRPOConfig(
        **with_overrides(
            dict(
                max_steps=params.steps,
                per_device_train_batch_size=params.prompts_per_step * params.num_generations,
                gradient_accumulation_steps=params.gradient_accumulation_steps,
                num_generations=params.num_generations,
                learning_rate=params.learning_rate,
                beta=params.beta,
                temperature=params.temperature,
                max_completion_length=params.max_completion_tokens,
                reward_weights=params.weights,
                multi_objective_aggregation=AGGREGATIONS[params.aggregation],
                **online_trainer_args(
                    workdir,
                    seed=inputs.seed,
                    save_steps=params.save_steps,
                    logging_steps=params.logging_steps,
                ),
            ),
            inputs,
        )
    )
    dataset = Dataset.from_list([{"prompt": prompt_key(t.id, t.comment)} for t in simulator.tasks])
    band = (
        LengthBand(params.length_band_low, params.length_band_high)
        if params.length_penalty
        else None
    )
    funcs: list[Any] = list(reward_functions(params.components, band))
    callback = ReporterCallback(reporter)
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=funcs,
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=[callback],
        rollout_func=rollout,
    )
    run = run_trainer(trainer, callback, inputs=inputs, workdir=workdir, reporter=reporter)
    reward_keys = [f"rewards/{name}/mean" for name in params.components] + ["reward", "kl"]
    summary: dict[str, Any] = {
        "tasks": len(simulator.tasks),
        "hsa_policy": inputs.hsa_policy or None,
        "aggregation": params.aggregation,
        "reward_weights": dict(zip(params.components, params.weights, strict=True)),
        "groups_rolled_out": rollout.variants_used,
        "groups_unaugmented": rollout.unaugmented,
        "resumed_from": run.resumed_from.name if run.resumed_from else None,
        "final_metrics": {k: run.last_logs[k] for k in reward_keys if k in run.last_logs},
    }
    return run.outcome(summary)
