"""A real stage runner for the mechanism tests (lease, heartbeat, watchdog, cancel, resume):
it trains the tiny model with a bare transformers ``Trainer`` on a few fixed sentences,
writes ``checkpoint-N`` folders under ``workdir/checkpoints`` and resumes from the newest one
(``resume_from_checkpoint``), exactly as the contract asks of the real runners. Selected
through ``HAT_TRAIN_STAGE_RUNNERS=hsa_sft=tests.training_app.stage_runners.tiny_trainer_stage``.

Params: ``max_steps``, ``save_steps``, ``step_sleep_s`` (a pause per step, so a test can kill
the worker mid-stage), ``learning_rate``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from training_app.pipeline.contract import (
    StageInputs,
    StageOutcome,
    StageReporter,
    StageSpec,
    newest_checkpoint,
)

SENTENCES = [
    "The blue kettle holds one litre and ships in two days.",
    "Use the coupon code at checkout to save ten percent.",
    "This jacket is waterproof and comes in three sizes.",
    "Returns are free within thirty days of delivery.",
]


def tiny_trainer_stage(
    spec: StageSpec, inputs: StageInputs, workdir: Path, reporter: StageReporter
) -> StageOutcome:
    import torch
    from transformers import (
        AutoModelForCausalLM,
        AutoTokenizer,
        Trainer,
        TrainerCallback,
        TrainingArguments,
    )

    from training_app.pipeline.reporting import ReporterCallback

    params: dict[str, Any] = dict(spec.params)
    max_steps = int(params.get("max_steps", 6))
    save_steps = int(params.get("save_steps", 2))
    sleep_s = float(params.get("step_sleep_s", 0.0))
    tokenizer = AutoTokenizer.from_pretrained(inputs.init_model_dir)
    model = AutoModelForCausalLM.from_pretrained(inputs.init_model_dir, dtype=torch.float32)
    encoded = [tokenizer(text, truncation=True, max_length=32) for text in SENTENCES]
    rows = [{"input_ids": e["input_ids"], "labels": list(e["input_ids"])} for e in encoded]

    class Pause(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if sleep_s:
                time.sleep(sleep_s)

    callback = ReporterCallback(reporter)
    args = TrainingArguments(
        output_dir=str(workdir / "checkpoints"),
        max_steps=max_steps,
        per_device_train_batch_size=1,
        learning_rate=float(params.get("learning_rate", 1e-3)),
        logging_steps=1,
        save_steps=save_steps,
        save_strategy="steps",
        report_to=[],
        use_cpu=True,
        seed=inputs.seed,
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    trainer = Trainer(model=model, args=args, train_dataset=rows, callbacks=[callback, Pause()])
    resume = newest_checkpoint(workdir) if inputs.resume else None
    reporter.log(f"tiny trainer: {max_steps} steps, resume={resume.name if resume else None}")
    trainer.train(resume_from_checkpoint=str(resume) if resume else None)
    steps = trainer.state.global_step
    if callback.stopped:
        return StageOutcome(final_dir=None, stopped=True, steps_done=steps)
    final = workdir / "final"
    trainer.save_model(str(final))
    tokenizer.save_pretrained(str(final))
    return StageOutcome(
        final_dir=final,
        stopped=False,
        steps_done=steps,
        summary={"steps": steps, "init_model_dir": str(inputs.init_model_dir)},
    )
