"""The bridge from a transformers/TRL trainer to a ``StageReporter``: progress every step,
the trainer's logged metrics (loss, learning rate, grad norm, rewards, KL, ...) as they are
logged, and cooperative cancel: when the reporter says stop, the trainer saves a checkpoint
and ends after the current step. Under ``accelerate launch`` every process runs the callback
and checks the stop flag; the flag is then agreed across processes (``any_rank``: one
process seeing ``STOP`` a step before another would leave the others waiting in a collective
forever), and only the main process reports, so nothing is counted twice."""

from __future__ import annotations

import math
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from training_app.pipeline.contract import StageReporter

# Timing counters transformers logs with every evaluation and at the end of training
# (eval_runtime, train_samples_per_second, ...): not training curves, so not charted.
HOUSEKEEPING_SUFFIXES = ("_runtime", "_per_second", "_preparation_time", "total_flos")


def any_rank(flag: bool, device: Any = "cpu") -> bool:
    """True on every process when ``flag`` is true on any (an all-reduce of one number);
    ``flag`` itself when no process group is running."""
    import torch
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return flag
    value = torch.tensor([1.0 if flag else 0.0], device=device)
    dist.all_reduce(value, op=dist.ReduceOp.MAX)
    return bool(value.item() > 0)


class ReporterCallback(TrainerCallback):
    def __init__(self, reporter: StageReporter) -> None:
        self.reporter = reporter
        self.stopped = False

    def on_train_begin(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: Any,
    ) -> None:
        if state.is_world_process_zero:
            self.reporter.progress(state.global_step, state.max_steps)

    def on_step_end(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: Any,
    ) -> None:
        if state.is_world_process_zero:
            self.reporter.progress(state.global_step, state.max_steps)
        stop = self.reporter.should_stop()
        if args.world_size > 1:
            stop = any_rank(stop, args.device)
        if stop:
            self.stopped = True
            self.reporter.log(f"stop requested: saving a checkpoint at step {state.global_step}")
            control.should_save = True
            control.should_training_stop = True

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        values = {
            key: float(value)
            for key, value in (logs or {}).items()
            if isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(float(value))
            and not key.endswith(HOUSEKEEPING_SUFFIXES)
        }
        if values and state.is_world_process_zero:
            self.reporter.metrics(state.global_step, values)
