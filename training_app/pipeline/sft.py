"""Stage 1, HSA-SFT: TRL's ``SFTTrainer`` on prompt/completion rows (``sft_data``) with the
loss on the completion (the assistant turn) only.

SmolLM2's chat template has no ``{% generation %}`` markers, so ``assistant_only_loss`` cannot
work; each row is a conversational prompt/completion pair instead, and TRL masks every token
of the prompt (its ``completion_only_loss``): the loss covers exactly the assistant turn's
tokens, its end-of-turn token included.

A fraction of *tasks* (``heldout_fraction``, by task id, so no variant of a held-out task is
trained on) is held out; their tool-call turns are the held-out set, whose loss is measured
before and after training and reported in the summary. Checkpoints go to
``workdir/checkpoints`` every ``save_steps`` and on a cooperative stop; a rerun with
``inputs.resume`` continues from the newest one. The final model goes to ``workdir/final``,
with the base checkpoint's MTP head weights copied in (``checkpoints.copy_mtp_weights``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from training_app.pipeline.contract import (
    StageInputs,
    StageOutcome,
    StageReporter,
    StageSpec,
    newest_checkpoint,
)
from training_app.pipeline.sft_data import BuildOptions, SftRow, build_sft_rows
from training_app.pipeline.stage_params import params_from_mapping, require

STAGE = "hsa_sft"
HELDOUT_BEFORE_FILE = "heldout_before.json"
TOOL_MODES = ("text", "native")


@dataclass(frozen=True)
class SftParams:
    """HSA-SFT parameters (defaults: the CPU profile, SmolLM2-135M, a smoke-sized run).

    ``max_length`` is in tokens: a demo-harness turn is 1.4-2.3K tokens with the text-action
    instructions in the system prompt, so rows longer than it are dropped (counted in the
    summary), never truncated (truncation would cut the completion off)."""

    max_steps: int = 20
    learning_rate: float = 5e-5
    per_device_train_batch_size: int = 1
    gradient_accumulation_steps: int = 4
    max_length: int = 2560
    gradient_checkpointing: bool = False
    # bf16 autocast runs on CPU (torch 2.13, use_cpu) but was slower than fp32 on the 2-core
    # dev box (one tiny-model step: 35 s against 15-25 s); turn it on for GPUs.
    bf16: bool = False
    save_steps: int = 10
    logging_steps: int = 1
    variants_per_example: int = 1
    recovery_fraction: float = 0.1
    heldout_fraction: float = 0.1
    # The held-out loss is measured twice (before and after): cap its rows so a large task
    # set does not spend minutes there (80 rows took 5 minutes on a loaded 2-core box).
    heldout_max_rows: int = 32
    tool_mode: str = "text"
    seed: int | None = None  # None: the run's seed (StageInputs.seed)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> SftParams:
        return params_from_mapping(cls, data, stage=STAGE)

    def __post_init__(self) -> None:
        positive = (
            "max_steps",
            "per_device_train_batch_size",
            "gradient_accumulation_steps",
            "heldout_max_rows",
            "max_length",
            "save_steps",
            "logging_steps",
        )
        for key in positive:
            value = getattr(self, key)
            require(value >= 1, STAGE, key, f"must be >= 1, got {value}")
        require(
            math.isfinite(self.learning_rate) and self.learning_rate > 0,
            STAGE,
            "learning_rate",
            f"must be a finite number > 0, got {self.learning_rate}",
        )
        require(
            self.variants_per_example >= 0,
            STAGE,
            "variants_per_example",
            f"must be >= 0, got {self.variants_per_example}",
        )
        require(
            0 <= self.recovery_fraction <= 1,
            STAGE,
            "recovery_fraction",
            f"must be in [0, 1], got {self.recovery_fraction}",
        )
        require(
            0 <= self.heldout_fraction < 1,
            STAGE,
            "heldout_fraction",
            f"must be in [0, 1), got {self.heldout_fraction}",
        )
        require(
            self.tool_mode in TOOL_MODES,
            STAGE,
            "tool_mode",
            f"must be one of {', '.join(TOOL_MODES)}, got {self.tool_mode!r}",
        )


# --- data split ------------------------------------------------------------------------------


def heldout_task_ids(task_ids: Sequence[str], fraction: float, seed: int) -> set[str]:
    """``fraction`` of the distinct task ids (at least one when there are two or more)."""
    distinct = sorted(set(task_ids))
    if fraction <= 0 or len(distinct) < 2:
        return set()
    count = min(len(distinct) - 1, max(1, round(fraction * len(distinct))))
    return set(random.Random(seed).sample(distinct, count))


def _length(tokenizer: Any, row: SftRow) -> int:
    record = row.to_record()
    tools = json.loads(record["tools"]) if "tools" in record else None
    ids = tokenizer.apply_chat_template(
        record["prompt"] + record["completion"], tools=tools, tokenize=True
    )
    return len(ids["input_ids"] if isinstance(ids, Mapping) else ids)


# --- the trainer -----------------------------------------------------------------------------


def build_trainer(
    params: SftParams,
    model_dir: Path,
    train_rows: Sequence[SftRow],
    eval_rows: Sequence[SftRow],
    output_dir: Path,
    callbacks: Sequence[Any] = (),
    *,
    seed: int = 0,
    overrides: Mapping[str, Any] | None = None,
) -> Any:
    """An ``SFTTrainer`` with completion-only loss over the rows (datasets tokenized);
    ``overrides`` (a GPU profile's TRL arguments) are applied last."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    arguments: dict[str, Any] = dict(
        output_dir=str(output_dir),
        max_steps=params.max_steps,
        learning_rate=params.learning_rate,
        per_device_train_batch_size=params.per_device_train_batch_size,
        per_device_eval_batch_size=params.per_device_train_batch_size,
        gradient_accumulation_steps=params.gradient_accumulation_steps,
        max_length=params.max_length,
        activation_checkpointing=params.gradient_checkpointing,
        bf16=params.bf16,
        use_cpu=not torch.cuda.is_available(),
        save_strategy="steps",
        save_steps=params.save_steps,
        logging_steps=params.logging_steps,
        eval_strategy="no",
        completion_only_loss=True,
        packing=False,
        report_to=[],
        seed=seed,
        data_seed=seed,
        dataset_num_proc=None,
        disable_tqdm=True,
    )
    config = SFTConfig(**{**arguments, **(overrides or {})})
    return SFTTrainer(
        model=model,
        args=config,
        train_dataset=Dataset.from_list([r.to_record() for r in train_rows]),
        eval_dataset=Dataset.from_list([r.to_record() for r in eval_rows]) if eval_rows else None,
        processing_class=tokenizer,
        callbacks=list(callbacks),
    )


def run_sft_stage(
    spec: StageSpec, inputs: StageInputs, workdir: Path, reporter: StageReporter
) -> StageOutcome:
    from transformers import AutoTokenizer

    from training_app.pipeline.checkpoints import copy_mtp_weights
    from training_app.pipeline.reporting import ReporterCallback
    from training_app.pipeline.trainer_run import checkpoints_dir, run_trainer

    params = SftParams.from_mapping(spec.params)
    seed = inputs.seed if params.seed is None else params.seed
    rows, report = build_sft_rows(
        inputs.tasks,
        inputs.harnesses,
        BuildOptions(
            hsa_policy=inputs.hsa_policy,
            variants_per_example=params.variants_per_example,
            seed=seed,
            tool_mode=params.tool_mode,  # type: ignore[arg-type]
            recovery_fraction=params.recovery_fraction,
        ),
    )
    reporter.log(f"data: {json.dumps(report.to_dict(), sort_keys=True)}")
    tokenizer = AutoTokenizer.from_pretrained(inputs.init_model_dir)
    fitting = [r for r in rows if _length(tokenizer, r) <= params.max_length]
    too_long = len(rows) - len(fitting)
    heldout = heldout_task_ids([r.task_id for r in fitting], params.heldout_fraction, seed)
    train_rows = [r for r in fitting if r.task_id not in heldout]
    eval_rows = [r for r in fitting if r.task_id in heldout and r.turn == "tool_call"]
    eval_rows = eval_rows[: params.heldout_max_rows]
    if not train_rows:
        raise ValueError(
            f"no training rows: {len(rows)} built, {too_long} longer than max_length "
            f"{params.max_length}, {len(rows) - too_long - len(train_rows)} held out"
        )
    summary: dict[str, Any] = {
        "data": {
            **report.to_dict(),
            "rows_too_long": too_long,
            "train_rows": len(train_rows),
            "heldout_tasks": len(heldout),
            "heldout_rows": len(eval_rows),
        },
        "params": dataclasses.asdict(params) | {"seed": seed},
    }

    resuming = inputs.resume and newest_checkpoint(workdir) is not None
    callback = ReporterCallback(reporter)
    trainer = build_trainer(
        params,
        inputs.init_model_dir,
        train_rows,
        eval_rows,
        checkpoints_dir(workdir),
        [callback],
        seed=seed,
        overrides=inputs.trainer_overrides,
    )
    before_file = workdir / HELDOUT_BEFORE_FILE
    heldout_before: float | None = None
    if eval_rows:
        if resuming and before_file.is_file():
            heldout_before = float(json.loads(before_file.read_text())["eval_loss"])
        else:
            heldout_before = float(trainer.evaluate()["eval_loss"])
            workdir.mkdir(parents=True, exist_ok=True)
            before_file.write_text(json.dumps({"eval_loss": heldout_before}))
        reporter.metrics(0, {"heldout_loss": heldout_before})
    run = run_trainer(trainer, callback, inputs=inputs, workdir=workdir, reporter=reporter)
    steps = run.steps_done
    summary["train_loss"] = run.train_loss
    summary["heldout_loss_before"] = heldout_before
    if run.final_dir is None:
        reporter.log(f"stopped at step {steps}; checkpoint saved")
        return StageOutcome(final_dir=None, stopped=True, steps_done=steps, summary=summary)
    if eval_rows:
        heldout_after = float(trainer.evaluate()["eval_loss"])
        summary["heldout_loss_after"] = heldout_after
        reporter.metrics(steps, {"heldout_loss": heldout_after})
    final = run.final_dir
    mtp = copy_mtp_weights(inputs.init_model_dir, final)
    if not mtp and inputs.base_model_dir != inputs.init_model_dir:
        mtp = copy_mtp_weights(inputs.base_model_dir, final)
    summary["mtp_tensors_copied"] = mtp
    return StageOutcome(final_dir=final, stopped=False, steps_done=steps, summary=summary)
