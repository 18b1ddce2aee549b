"""Running a stage in a separate process and following it: the link between a Celery
``train`` task and the process that ``accelerate launch`` starts on a GPU machine.

The child is ``stage_cli`` (directly, or under ``accelerate launch`` through the bundle's
``launch.sh``); it reports to files in the stage's workdir. ``follow_stage_process`` writes the
job file, starts the command, forwards every new line of ``events.jsonl`` to the caller's
``StageReporter`` (progress, metrics, logs), turns the reporter's stop request into the
``STOP`` file the child's trainer callback looks for, renews ``SUPERVISOR`` (a killed worker
stops renewing it, and the child then stops at a checkpoint instead of training on beside
the attempt the watchdog starts), and returns the ``StageOutcome`` the
child wrote to ``outcome.json``. The child's stdout and stderr go to ``process.log`` in the
workdir; its last lines are in the error when it fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from training_app.pipeline.contract import StageInputs, StageOutcome, StageReporter, StageSpec
from training_app.pipeline.stage_cli import (
    EVENTS_FILE,
    EXIT_STOPPED,
    OUTCOME_FILE,
    STOP_FILE,
    SUPERVISOR_FILE,
    job_document,
)

JOB_FILE = "job.json"
SUPERVISOR_TIMEOUT_S = 30.0
PROCESS_LOG = "process.log"


class StageProcessError(RuntimeError):
    """The stage process failed; the message has its exit status and the end of its log."""


class EventFollower:
    """Reads ``events.jsonl`` incrementally: complete lines only (a line the child is still
    writing waits for the next poll), from where the last read stopped."""

    def __init__(self, path: Path, reporter: StageReporter) -> None:
        self.path = path
        self.reporter = reporter
        self._offset = 0
        self._partial = b""

    def skip_existing(self) -> None:
        """Start after what is in the file now (an earlier attempt's events)."""
        self._offset = self.path.stat().st_size if self.path.exists() else 0

    def poll(self) -> int:
        """Forward the events written since the last poll; returns how many."""
        try:
            with self.path.open("rb") as handle:
                handle.seek(self._offset)
                chunk = handle.read()
        except FileNotFoundError:
            return 0
        self._offset += len(chunk)
        data = self._partial + chunk
        *lines, self._partial = data.split(b"\n")
        for line in lines:
            if line.strip():
                self._forward(line)
        return len(lines)

    def _forward(self, line: bytes) -> None:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            self.reporter.log(f"unreadable event line: {line[:200]!r}")
            return
        kind = event.get("kind") if isinstance(event, dict) else None
        if kind == "progress":
            self.reporter.progress(int(event["step"]), int(event["total"]))
        elif kind == "metrics":
            values = {str(k): float(v) for k, v in dict(event["values"]).items()}
            self.reporter.metrics(int(event["step"]), values)
        elif kind == "log":
            self.reporter.log(str(event["line"]))


def write_job(
    spec: StageSpec,
    inputs: StageInputs,
    workdir: Path,
    *,
    runner: str = "",
    supervisor_timeout_s: float = SUPERVISOR_TIMEOUT_S,
) -> Path:
    """``workdir/job.json`` for the stage; ``runner`` (``module.function``) replaces the
    pipeline's own runner for the kind, as ``HAT_TRAIN_STAGE_RUNNERS`` does in process. The
    stage stops at a checkpoint when ``follow_stage_process`` has not renewed ``SUPERVISOR``
    for ``supervisor_timeout_s`` (its worker died)."""
    workdir.mkdir(parents=True, exist_ok=True)
    job_file = workdir / JOB_FILE
    document = job_document(spec, inputs, workdir) | {"supervisor_timeout_s": supervisor_timeout_s}
    if runner:
        document["runner"] = runner
    job_file.write_text(json.dumps(document), encoding="utf-8")
    return job_file


def stage_cli_command(job_file: Path) -> list[str]:
    """The child command on a CPU (or single-GPU) worker: this interpreter, no launcher."""
    return [sys.executable, "-m", "training_app.pipeline.stage_cli", "--job", str(job_file)]


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text("utf-8", errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return ""


def follow_stage_process(
    command: Sequence[str],
    workdir: Path,
    reporter: StageReporter,
    *,
    poll_s: float = 0.5,
    stop_grace_s: float = 600.0,
    env: Mapping[str, str] | None = None,
) -> StageOutcome:
    """Run ``command`` (which must run the job in ``workdir``) to its end and return the
    outcome it wrote. Events already in ``events.jsonl`` from an earlier attempt are skipped;
    a stale ``STOP`` or ``outcome.json`` is removed first. When the reporter asks to stop, the
    ``STOP`` file is written and the child gets ``stop_grace_s`` to save and exit before it is
    terminated."""
    for stale in (STOP_FILE, OUTCOME_FILE):
        (workdir / stale).unlink(missing_ok=True)
    supervisor = workdir / SUPERVISOR_FILE
    supervisor.touch()
    follower = EventFollower(workdir / EVENTS_FILE, reporter)
    follower.skip_existing()
    log_path = workdir / PROCESS_LOG
    child_env = {**os.environ, **(env or {})}
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            list(command), cwd=os.getcwd(), stdout=log, stderr=subprocess.STDOUT, env=child_env
        )
        stop_sent_at: float | None = None
        try:
            while process.poll() is None:
                supervisor.touch()
                follower.poll()
                if stop_sent_at is None and reporter.should_stop():
                    (workdir / STOP_FILE).touch()
                    stop_sent_at = time.monotonic()
                    reporter.log("stop requested: asked the stage process to save and stop")
                elif stop_sent_at is not None and time.monotonic() - stop_sent_at > stop_grace_s:
                    process.terminate()
                time.sleep(poll_s)
        except BaseException:
            process.kill()
            process.wait()
            raise
    follower.poll()
    code = process.returncode
    outcome_path = workdir / OUTCOME_FILE
    if code not in (0, EXIT_STOPPED) or not outcome_path.exists():
        raise StageProcessError(
            f"the stage process exited with status {code}; last lines of {log_path}:\n"
            + _tail(log_path)
        )
    return outcome_from_dict(json.loads(outcome_path.read_text("utf-8")))


def outcome_from_dict(data: Mapping[str, Any]) -> StageOutcome:
    final = data.get("final_dir")
    return StageOutcome(
        final_dir=Path(final) if final else None,
        stopped=bool(data.get("stopped", False)),
        steps_done=int(data.get("steps_done", 0)),
        summary=dict(data.get("summary", {})),
    )
