"""The contract between a training stage runner (pure: TRL, torch, no Django) and whoever
runs it (the Celery task through ``training_app.services``, ``manage.py train``, benchmarks).

A stage runner is ``run(spec, inputs, workdir, reporter) -> StageOutcome``:
- it writes checkpoints under ``workdir / "checkpoints"`` (transformers' ``checkpoint-N``
  folders) and its final model under ``workdir / "final"``;
- when ``inputs.resume`` is true and a checkpoint exists there, it resumes from the newest one
  (``resume_from_checkpoint``) instead of starting over: a redelivered task continues;
- it reports progress, metrics and log lines through ``reporter`` as it goes, and polls
  ``reporter.should_stop()`` (between steps, through a trainer callback): when it says yes the
  runner saves a checkpoint and returns with ``stopped=True`` (cooperative cancel);
- it never touches the database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

StageKind = Literal["hsa_sft", "opd", "hsa_rl"]
STAGE_ORDER: tuple[StageKind, ...] = ("hsa_sft", "opd", "hsa_rl")
STAGE_LABELS: Mapping[str, str] = {
    "hsa_sft": "HSA-SFT",
    "opd": "General OPD",
    "hsa_rl": "HSA-RL",
}


class StageReporter(Protocol):
    """Where a running stage sends what it does. Implementations must be cheap to call
    every step (the Django one buffers and writes at most every ~second)."""

    def progress(self, step: int, total: int) -> None: ...

    def metrics(self, step: int, values: Mapping[str, float]) -> None: ...

    def log(self, line: str) -> None: ...

    def should_stop(self) -> bool: ...


@dataclass(frozen=True)
class StageInputs:
    """Everything a stage reads. Paths are local directories or files.

    ``init_model_dir``: the checkpoint this stage starts from (the base model for the first
    stage, the previous stage's ``final`` otherwise). ``base_model_dir``: the run's base model
    (OPD's teacher). ``harnesses``: harness dicts (``harness_to_dict``) keyed by an id the
    task records refer to. ``tasks``: the stage's task records (gold trajectories with their
    harness id and live context, or general prompts for OPD; the format is in
    ``task_set``'s docstring). ``catalogs``: each harness id's room catalog as plain data
    (``catalog_snapshot``'s format), what the tools answer from during RL rollouts.
    ``hsa_policy``: a *training* policy name, or "" for Fixed-Harness (no augmentation).
    ``trainer_overrides``: TRL config arguments applied last to every trainer the stage
    builds (a GPU profile's bf16, DeepSpeed and vLLM settings, ``gpu_profile.trainer_overrides``).
    """

    init_model_dir: Path
    base_model_dir: Path
    harnesses: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    tasks: Sequence[Mapping[str, Any]] = ()
    catalogs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    hsa_policy: str = ""
    seed: int = 0
    resume: bool = True
    trainer_overrides: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StageSpec:
    kind: StageKind
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StageOutcome:
    """``final_dir`` is None when the stage stopped early. ``summary`` holds what the run page
    shows after the curves: data kept/dropped with reasons, final metrics, held-out figures."""

    final_dir: Path | None
    stopped: bool
    steps_done: int
    summary: Mapping[str, Any] = field(default_factory=dict)


class StageRunner(Protocol):
    def __call__(
        self, spec: StageSpec, inputs: StageInputs, workdir: Path, reporter: StageReporter
    ) -> StageOutcome: ...


# transformers' Trainer writes this file after the weights, optimizer and RNG state: a
# checkpoint folder without it was cut short (a worker killed mid-save) and cannot resume.
COMPLETE_CHECKPOINT_MARKER = "trainer_state.json"


def newest_checkpoint(workdir: Path) -> Path | None:
    """The complete ``checkpoint-N`` folder with the largest N under ``workdir/checkpoints``."""
    root = workdir / "checkpoints"
    if not root.is_dir():
        return None
    found: list[tuple[int, Path]] = []
    for child in root.iterdir():
        prefix, _, number = child.name.partition("-")
        if (
            prefix == "checkpoint"
            and number.isdigit()
            and (child / COMPLETE_CHECKPOINT_MARKER).is_file()
        ):
            found.append((int(number), child))
    return max(found)[1] if found else None


class NullReporter:
    """A reporter that prints nothing and never stops (scripts, benchmarks)."""

    def progress(self, step: int, total: int) -> None:
        return None

    def metrics(self, step: int, values: Mapping[str, float]) -> None:
        return None

    def log(self, line: str) -> None:
        return None

    def should_stop(self) -> bool:
        return False


def stage_runner(kind: str) -> StageRunner:
    """The runner for ``kind``, imported lazily (torch and TRL load only when a stage runs)."""
    if kind == "hsa_sft":
        from training_app.pipeline.sft import run_sft_stage

        return run_sft_stage
    if kind == "opd":
        from training_app.pipeline.opd import run_opd_stage

        return run_opd_stage
    if kind == "hsa_rl":
        from training_app.pipeline.rl import run_rl_stage

        return run_rl_stage
    raise ValueError(f"unknown stage kind {kind!r}; expected one of {', '.join(STAGE_ORDER)}")


__all__ = [
    "STAGE_LABELS",
    "STAGE_ORDER",
    "NullReporter",
    "StageInputs",
    "StageKind",
    "StageOutcome",
    "StageReporter",
    "StageRunner",
    "StageSpec",
    "newest_checkpoint",
    "stage_runner",
]
