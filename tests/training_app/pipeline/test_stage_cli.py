"""The stage job file and the file reporter a GPU worker's processes use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from training_app.pipeline.stage_cli import (
    EXIT_BAD_JOB,
    FileReporter,
    JobFileError,
    main,
    read_job,
)


def _job(**overrides: object) -> dict[str, object]:
    job: dict[str, object] = {
        "kind": "hsa_sft",
        "params": {"max_steps": 2},
        "workdir": "/tmp/w",
        "inputs": {"init_model_dir": "/m/init", "base_model_dir": "/m/base", "seed": 3},
    }
    job.update(overrides)
    return job


def test_a_job_becomes_spec_inputs_and_workdir() -> None:
    spec, inputs, workdir = read_job(_job())
    assert spec.kind == "hsa_sft" and spec.params == {"max_steps": 2}
    assert inputs.init_model_dir == Path("/m/init") and inputs.seed == 3 and inputs.resume
    assert workdir == Path("/tmp/w")


@pytest.mark.parametrize(
    ("job", "field"),
    [
        (_job(kind="dpo"), "kind"),
        (_job(params=[1]), "params"),
        ({k: v for k, v in _job().items() if k != "workdir"}, "workdir"),
        (_job(inputs={"base_model_dir": "/b"}), "inputs.init_model_dir"),
        (_job(inputs={"init_model_dir": "/i", "base_model_dir": "/b", "seed": "x"}), "seed"),
        (_job(inputs={"init_model_dir": "/i", "base_model_dir": "/b", "tasks": {}}), "tasks"),
    ],
)
def test_a_bad_job_names_the_field(job: dict[str, object], field: str) -> None:
    with pytest.raises(JobFileError, match=field):
        read_job(job)


def test_the_cli_refuses_a_bad_job_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "job.json"
    path.write_text(json.dumps(_job(kind="dpo")))
    assert main(["--job", str(path)]) == EXIT_BAD_JOB
    assert "kind must be one of" in capsys.readouterr().err


def test_file_reporter_writes_events_and_sees_the_stop_file(tmp_path: Path) -> None:
    reporter = FileReporter(tmp_path)
    reporter.progress(1, 10)
    reporter.metrics(1, {"loss": 2.5})
    reporter.log("hello")
    assert not reporter.should_stop()
    (tmp_path / "STOP").touch()
    reporter._stop_checked_at = 0.0  # skip the once-a-second throttle
    assert reporter.should_stop()
    reporter.close()
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert [e["kind"] for e in events] == ["progress", "metrics", "log"]
    assert events[1]["values"] == {"loss": 2.5}


def test_only_the_main_process_writes(tmp_path: Path) -> None:
    reporter = FileReporter(tmp_path, is_main_process=False)
    reporter.progress(1, 2)
    reporter.close()
    assert not (tmp_path / "events.jsonl").exists()
