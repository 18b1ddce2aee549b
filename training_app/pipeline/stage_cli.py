"""Run one training stage from a job file, outside Django: the process that ``accelerate
launch`` starts on each GPU of a GPU worker (see ``gpu_profile``), and a way to rerun a stage
by hand.

    python -m training_app.pipeline.stage_cli --job job.json

``job.json``: ``{"kind", "params", "workdir", "inputs": {init_model_dir, base_model_dir,
harnesses, tasks, catalogs, hsa_policy, seed, resume, trainer_overrides}}``
(``job_document`` writes it; ``launcher`` starts this module on it and follows it). The
stage reports to files in ``workdir``: ``events.jsonl`` (one JSON object a line: progress,
metrics, log; written by the main process only). It stops cooperatively when a file ``STOP``
appears there, or, when the job has ``supervisor_timeout_s``, when the file ``SUPERVISOR``
(renewed by the launching worker) is older than that. The outcome is written to
``outcome.json``. Exit status: 0 finished, 3 stopped on request, 2 bad job file.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from training_app.pipeline.contract import (
    STAGE_ORDER,
    StageInputs,
    StageOutcome,
    StageRunner,
    StageSpec,
    stage_runner,
)

EVENTS_FILE = "events.jsonl"
STOP_FILE = "STOP"
SUPERVISOR_FILE = "SUPERVISOR"
OUTCOME_FILE = "outcome.json"
EXIT_STOPPED = 3
EXIT_BAD_JOB = 2


class JobFileError(ValueError):
    """The job file is not a stage job; the message names the field."""


class FileReporter:
    """Appends events to ``workdir/events.jsonl``; ``should_stop`` looks for ``workdir/STOP``
    at most once a second (a stat per training step would be cheap too, but a shared file
    system may not be)."""

    def __init__(
        self, workdir: Path, *, is_main_process: bool = True, supervisor_timeout_s: float = 0.0
    ) -> None:
        self.workdir = workdir
        self.is_main_process = is_main_process
        self.supervisor_timeout_s = supervisor_timeout_s
        self._stop_checked_at = 0.0
        self._stop = False
        self._events: IO[str] | None = None

    def _write(self, event: Mapping[str, Any]) -> None:
        if not self.is_main_process:
            return
        if self._events is None:
            self.workdir.mkdir(parents=True, exist_ok=True)
            self._events = (self.workdir / EVENTS_FILE).open("a", encoding="utf-8")
        self._events.write(json.dumps({"t": round(time.time(), 3), **event}) + "\n")
        self._events.flush()

    def progress(self, step: int, total: int) -> None:
        self._write({"kind": "progress", "step": step, "total": total})

    def metrics(self, step: int, values: Mapping[str, float]) -> None:
        self._write({"kind": "metrics", "step": step, "values": dict(values)})

    def log(self, line: str) -> None:
        self._write({"kind": "log", "line": line})

    def should_stop(self) -> bool:
        now = time.monotonic()
        if not self._stop and now - self._stop_checked_at >= 1.0:
            self._stop_checked_at = now
            self._stop = (self.workdir / STOP_FILE).exists() or self._supervisor_gone()
        return self._stop

    def _supervisor_gone(self) -> bool:
        """The worker that launched this stage stopped renewing ``SUPERVISOR`` (it was
        killed): stop at a checkpoint rather than train on beside the attempt the watchdog
        will start."""
        if self.supervisor_timeout_s <= 0:
            return False
        try:
            age = time.time() - (self.workdir / SUPERVISOR_FILE).stat().st_mtime
        except FileNotFoundError:
            return True
        if age > self.supervisor_timeout_s:
            self.log(f"the supervising worker has been silent {age:.0f} s: stopping")
            return True
        return False

    def close(self) -> None:
        if self._events is not None:
            self._events.close()
            self._events = None


def _require(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in data:
        raise JobFileError(f"{where}{key} is required")
    value = data[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise JobFileError(f"{where}{key} has the wrong type ({type(value).__name__})")
    return value


def read_job(data: Any) -> tuple[StageSpec, StageInputs, Path]:
    """The (spec, inputs, workdir) a job document describes; ``JobFileError`` names the field."""
    if not isinstance(data, dict):
        raise JobFileError("the job must be a JSON object")
    kind = _require(data, "kind", str, "")
    if kind not in STAGE_ORDER:
        raise JobFileError(f"kind must be one of {', '.join(STAGE_ORDER)}, not {kind!r}")
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise JobFileError("params must be an object")
    workdir = Path(_require(data, "workdir", str, ""))
    raw = _require(data, "inputs", dict, "")
    harnesses = raw.get("harnesses", {})
    tasks = raw.get("tasks", [])
    catalogs = raw.get("catalogs", {})
    overrides = raw.get("trainer_overrides", {})
    for key, value in (
        ("harnesses", harnesses),
        ("catalogs", catalogs),
        ("trainer_overrides", overrides),
    ):
        if not isinstance(value, dict):
            raise JobFileError(f"inputs.{key} must be an object")
    if not isinstance(tasks, list):
        raise JobFileError("inputs.tasks must be a list")
    seed = raw.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise JobFileError("inputs.seed must be an integer")
    inputs = StageInputs(
        init_model_dir=Path(_require(raw, "init_model_dir", str, "inputs.")),
        base_model_dir=Path(_require(raw, "base_model_dir", str, "inputs.")),
        harnesses=harnesses,
        tasks=tasks,
        catalogs=catalogs,
        hsa_policy=str(raw.get("hsa_policy", "")),
        seed=seed,
        resume=bool(raw.get("resume", True)),
        trainer_overrides=overrides,
    )
    return StageSpec(kind=kind, params=params), inputs, workdir


def job_document(spec: StageSpec, inputs: StageInputs, workdir: Path) -> dict[str, Any]:
    """The job file's content for ``spec`` and ``inputs``; ``read_job`` reads it back."""
    return {
        "kind": spec.kind,
        "params": dict(spec.params),
        "workdir": str(workdir),
        "inputs": {
            "init_model_dir": str(inputs.init_model_dir),
            "base_model_dir": str(inputs.base_model_dir),
            "harnesses": {k: dict(v) for k, v in inputs.harnesses.items()},
            "tasks": [dict(t) for t in inputs.tasks],
            "catalogs": {k: dict(v) for k, v in inputs.catalogs.items()},
            "hsa_policy": inputs.hsa_policy,
            "seed": inputs.seed,
            "resume": inputs.resume,
            "trainer_overrides": dict(inputs.trainer_overrides),
        },
    }


def outcome_to_dict(outcome: StageOutcome) -> dict[str, Any]:
    return {
        "final_dir": str(outcome.final_dir) if outcome.final_dir else None,
        "stopped": outcome.stopped,
        "steps_done": outcome.steps_done,
        "summary": dict(outcome.summary),
    }


def _runner(kind: str, dotted: Any) -> StageRunner:
    """The pipeline's runner for ``kind``, or the job's ``runner`` (``module.function``)."""
    if not dotted:
        return stage_runner(kind)
    module, _, name = str(dotted).rpartition(".")
    runner: StageRunner = getattr(importlib.import_module(module), name)
    return runner


def _is_main_process() -> bool:
    # accelerate launch sets RANK for every process it starts; a plain run has none.
    return os.environ.get("RANK", "0") == "0"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training_app.pipeline.stage_cli")
    parser.add_argument("--job", required=True, help="the stage job file (JSON)")
    args = parser.parse_args(argv)
    try:
        job = json.loads(Path(args.job).read_text("utf-8"))
        spec, inputs, workdir = read_job(job)
    except (OSError, json.JSONDecodeError, JobFileError) as exc:
        print(f"error: {args.job}: {exc}", file=sys.stderr)
        return EXIT_BAD_JOB
    timeout = job.get("supervisor_timeout_s", 0)
    reporter = FileReporter(
        workdir,
        is_main_process=_is_main_process(),
        supervisor_timeout_s=float(timeout) if isinstance(timeout, int | float) else 0.0,
    )
    try:
        outcome = _runner(spec.kind, job.get("runner", ""))(spec, inputs, workdir, reporter)
    finally:
        reporter.close()
    if _is_main_process():
        (workdir / OUTCOME_FILE).write_text(json.dumps(outcome_to_dict(outcome), indent=2))
    return EXIT_STOPPED if outcome.stopped else 0


if __name__ == "__main__":
    raise SystemExit(main())
