"""Running a transformers/TRL trainer under the stage contract: resume from the newest
``checkpoint-N`` when asked, report through ``ReporterCallback``, honour a cooperative stop
(the callback has the trainer save a checkpoint; no final model is written) and save the
final model with its tokenizer under ``workdir/final``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transformers import AutoTokenizer, PrinterCallback

from training_app.pipeline.contract import (
    StageInputs,
    StageOutcome,
    StageReporter,
    newest_checkpoint,
)
from training_app.pipeline.reporting import ReporterCallback


@dataclass(frozen=True)
class TrainerRun:
    stopped: bool
    steps_done: int
    final_dir: Path | None
    resumed_from: Path | None
    last_logs: dict[str, float]
    train_loss: float

    def outcome(self, summary: dict[str, Any]) -> StageOutcome:
        return StageOutcome(
            final_dir=self.final_dir,
            stopped=self.stopped,
            steps_done=self.steps_done,
            summary=summary,
        )


def checkpoints_dir(workdir: Path) -> Path:
    return workdir / "checkpoints"


def left_padded_tokenizer(model_dir: Path) -> Any:
    """The model's tokenizer padding on the left (for generation), EOS as pad if it has none."""
    tokenizer = AutoTokenizer.from_pretrained(model_dir, padding_side="left")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def online_trainer_args(
    workdir: Path, *, seed: int, save_steps: int, logging_steps: int
) -> dict[str, Any]:
    """The TRL config arguments the generating stages (OPD, RL) share: checkpoints under
    ``workdir/checkpoints`` every ``save_steps``, fp32, no tqdm or external reporting."""
    return {
        "output_dir": str(checkpoints_dir(workdir)),
        "logging_steps": logging_steps,
        "save_strategy": "steps",
        "save_steps": save_steps,
        "report_to": "none",
        "bf16": False,
        "gradient_checkpointing": False,
        "disable_tqdm": True,
        "seed": seed,
        "data_seed": seed,
    }


def with_overrides(arguments: dict[str, Any], inputs: StageInputs) -> dict[str, Any]:
    """A TRL config's arguments with the stage's ``trainer_overrides`` applied last."""
    return {**arguments, **inputs.trainer_overrides}


def run_trainer(
    trainer: Any,
    callback: ReporterCallback,
    *,
    inputs: StageInputs,
    workdir: Path,
    reporter: StageReporter,
) -> TrainerRun:
    """Train ``trainer`` (already built with ``callback`` among its callbacks)."""
    # The reporter gets every log; transformers' stdout printer would only add noise.
    trainer.remove_callback(PrinterCallback)
    resume = newest_checkpoint(workdir) if inputs.resume else None
    if resume is not None:
        reporter.log(f"resuming from {resume.name}")
    result = trainer.train(resume_from_checkpoint=str(resume) if resume is not None else None)
    steps = int(trainer.state.global_step)
    logs: dict[str, float] = {}
    for entry in trainer.state.log_history:
        logs.update({k: float(v) for k, v in entry.items() if isinstance(v, int | float)})
    train_loss = float(result.training_loss)
    if callback.stopped:
        return TrainerRun(True, steps, None, resume, logs, train_loss)
    final = workdir / "final"
    trainer.save_model(str(final))
    tokenizer = getattr(trainer, "processing_class", None)
    if tokenizer is not None:
        tokenizer.save_pretrained(str(final))
    reporter.log(f"saved the final model to {final}")
    return TrainerRun(False, steps, final, resume, logs, train_loss)
