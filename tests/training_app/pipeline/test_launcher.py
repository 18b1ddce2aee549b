"""A stage in a child process, followed by the worker: ``stage_cli`` runs the tiny Trainer
loop (real steps and checkpoints) in a real subprocess; the parent forwards its events,
turns a stop request into ``STOP``, and the child stops by itself when its supervisor goes
silent. ``any_rank`` is checked with two real gloo processes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import pytest
import torch.multiprocessing as mp

from training_app.pipeline.contract import StageInputs, StageSpec, newest_checkpoint
from training_app.pipeline.launcher import (
    EventFollower,
    StageProcessError,
    follow_stage_process,
    stage_cli_command,
    write_job,
)
from training_app.pipeline.reporting import any_rank
from training_app.pipeline.stage_cli import read_job

TINY_RUNNER = "tests.training_app.stage_runners.tiny_trainer_stage"


class RecordingReporter:
    def __init__(self, stop_at_step: int | None = None) -> None:
        self.stop_at_step = stop_at_step
        self.progress_seen: list[tuple[int, int]] = []
        self.metric_steps: list[int] = []
        self.lines: list[str] = []

    def progress(self, step: int, total: int) -> None:
        self.progress_seen.append((step, total))

    def metrics(self, step: int, values: Mapping[str, float]) -> None:
        self.metric_steps.append(step)

    def log(self, line: str) -> None:
        self.lines.append(line)

    def should_stop(self) -> bool:
        last = self.progress_seen[-1][0] if self.progress_seen else 0
        return self.stop_at_step is not None and last >= self.stop_at_step


def _inputs(model: Path) -> StageInputs:
    return StageInputs(init_model_dir=model, base_model_dir=model, seed=1)


def test_the_follower_forwards_complete_lines_only(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    reporter = RecordingReporter()
    follower = EventFollower(events, reporter)
    assert follower.poll() == 0  # no file yet
    events.write_text('{"kind": "progress", "step": 1, "total": 4}\n{"kind": "lo')
    follower.poll()
    assert reporter.progress_seen == [(1, 4)] and reporter.lines == []
    with events.open("a") as handle:
        handle.write(
            'g", "line": "hello"}\n{"kind": "metrics", "step": 2, "values": {"loss": 1}}\n'
        )
    follower.poll()
    assert reporter.lines == ["hello"] and reporter.metric_steps == [2]


def test_the_job_file_round_trips(tmp_path: Path, tiny_model_dir: Path) -> None:
    inputs = StageInputs(
        init_model_dir=tiny_model_dir,
        base_model_dir=tiny_model_dir,
        harnesses={"h": {"name": "x"}},
        tasks=[{"id": "t1"}],
        catalogs={"h": {"products": []}},
        hsa_policy="train_default",
        seed=5,
        trainer_overrides={"bf16": True},
    )
    job = write_job(StageSpec("opd", {"steps": 2}), inputs, tmp_path, runner=TINY_RUNNER)
    document = json.loads(job.read_text())
    spec, read_back, workdir = read_job(document)
    assert (spec.kind, dict(spec.params), workdir) == ("opd", {"steps": 2}, tmp_path)
    assert read_back == inputs
    assert document["runner"] == TINY_RUNNER and document["supervisor_timeout_s"] > 0


def test_a_child_stage_reports_finishes_and_resumes_after_a_stop(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    spec = StageSpec("hsa_sft", {"max_steps": 6, "save_steps": 2, "step_sleep_s": 0.3})
    job = write_job(spec, _inputs(tiny_model_dir), tmp_path, runner=TINY_RUNNER)

    stopping = RecordingReporter(stop_at_step=3)
    outcome = follow_stage_process(stage_cli_command(job), tmp_path, stopping, poll_s=0.1)
    assert outcome.stopped and outcome.final_dir is None
    checkpoint = newest_checkpoint(tmp_path)
    assert checkpoint is not None
    stopped_at = int(checkpoint.name.split("-")[1])
    assert 3 <= stopped_at < 6 and outcome.steps_done == stopped_at
    assert any("stop requested" in line for line in stopping.lines)
    assert stopping.metric_steps and max(stopping.metric_steps) <= stopped_at

    finishing = RecordingReporter()
    outcome = follow_stage_process(stage_cli_command(job), tmp_path, finishing, poll_s=0.1)
    assert not outcome.stopped and outcome.steps_done == 6
    assert outcome.final_dir is not None and (outcome.final_dir / "config.json").is_file()
    # the second attempt resumed: it logged only the steps after the checkpoint
    assert sorted(set(finishing.metric_steps)) == list(range(stopped_at + 1, 7))
    assert finishing.progress_seen[-1] == (6, 6)


def test_a_child_whose_supervisor_is_gone_stops_at_a_checkpoint(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    """Nothing renews SUPERVISOR here (as when the worker was SIGKILLed): the stage saves
    and exits instead of training on beside the attempt the watchdog would start."""
    spec = StageSpec("hsa_sft", {"max_steps": 40, "save_steps": 100, "step_sleep_s": 0.2})
    job = write_job(
        spec, _inputs(tiny_model_dir), tmp_path, runner=TINY_RUNNER, supervisor_timeout_s=2.0
    )
    (tmp_path / "SUPERVISOR").touch()
    started = time.monotonic()
    completed = subprocess.run(stage_cli_command(job), capture_output=True, timeout=300)
    assert completed.returncode == 3, completed.stderr.decode()[-2000:]
    assert time.monotonic() - started < 120
    outcome = json.loads((tmp_path / "outcome.json").read_text())
    assert outcome["stopped"] and 0 < outcome["steps_done"] < 40
    assert newest_checkpoint(tmp_path) is not None
    events = (tmp_path / "events.jsonl").read_text()
    assert "supervising worker has been silent" in events


def test_a_failing_child_raises_with_the_end_of_its_log(tmp_path: Path) -> None:
    command = [sys.executable, "-c", "import sys; print('boom: no GPU'); sys.exit(1)"]
    with pytest.raises(StageProcessError, match=r"status 1[\s\S]*boom: no GPU"):
        follow_stage_process(command, tmp_path, RecordingReporter(), poll_s=0.05)


def _agree(rank: int, flags: list[bool], port: int, results: dict[int, bool]) -> None:
    import torch.distributed as dist

    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=len(flags)
    )
    try:
        results[rank] = any_rank(flags[rank])
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize(("flags", "expected"), [([True, False], True), ([False, False], False)])
def test_the_stop_flag_is_agreed_across_processes(flags: list[bool], expected: bool) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    results = mp.Manager().dict()
    mp.spawn(_agree, args=(flags, port, results), nprocs=len(flags), join=True)
    assert dict(results) == dict.fromkeys(range(len(flags)), expected)
    assert any_rank(True) and not any_rank(False)  # no process group: the flag itself
