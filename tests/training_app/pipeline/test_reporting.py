"""The trainer-to-reporter bridge: what reaches the charts, and the cooperative stop."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from transformers import TrainerControl, TrainerState, TrainingArguments

from training_app.pipeline.reporting import ReporterCallback


class Recorder:
    def __init__(self, stop: bool = False) -> None:
        self.stop = stop
        self.metric_rows: list[tuple[int, dict[str, float]]] = []
        self.progress_rows: list[tuple[int, int]] = []
        self.lines: list[str] = []

    def progress(self, step: int, total: int) -> None:
        self.progress_rows.append((step, total))

    def metrics(self, step: int, values: Mapping[str, float]) -> None:
        self.metric_rows.append((step, dict(values)))

    def log(self, line: str) -> None:
        self.lines.append(line)

    def should_stop(self) -> bool:
        return self.stop


def _state(step: int, *, main: bool = True) -> TrainerState:
    state = TrainerState(global_step=step, max_steps=10)
    state.is_world_process_zero = main
    return state


ARGS: Any = TrainingArguments(output_dir="/tmp/unused-reporting", use_cpu=True, report_to=[])


def test_curves_keep_training_metrics_and_drop_timing_counters() -> None:
    recorder = Recorder()
    callback = ReporterCallback(recorder)
    logs = {
        "loss": 1.5,
        "grad_norm": 3.0,
        "eval_loss": 0.7,
        "eval_runtime": 12.9,
        "eval_samples_per_second": 0.6,
        "train_steps_per_second": 0.1,
        "eval_model_preparation_time": 0.002,
        "total_flos": 1e12,
        "nan_metric": float("nan"),
        "flag": True,
        "note": "text",
    }
    callback.on_log(ARGS, _state(3), TrainerControl(), logs=logs)
    assert recorder.metric_rows == [(3, {"loss": 1.5, "grad_norm": 3.0, "eval_loss": 0.7})]
    callback.on_log(ARGS, _state(4, main=False), TrainerControl(), logs={"loss": 1.0})
    assert len(recorder.metric_rows) == 1  # only the main process reports


def test_a_stop_request_saves_and_ends_training() -> None:
    recorder = Recorder(stop=True)
    callback = ReporterCallback(recorder)
    control = TrainerControl()
    callback.on_step_end(ARGS, _state(5), control)
    assert control.should_save and control.should_training_stop and callback.stopped
    assert recorder.progress_rows == [(5, 10)]
    assert recorder.lines == ["stop requested: saving a checkpoint at step 5"]
