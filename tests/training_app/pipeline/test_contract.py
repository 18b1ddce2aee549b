"""The stage contract's checkpoint rule and runner lookup."""

from __future__ import annotations

from pathlib import Path

import pytest

from training_app.pipeline.contract import newest_checkpoint, stage_runner


def _checkpoint(root: Path, step: int, *, complete: bool) -> Path:
    folder = root / "checkpoints" / f"checkpoint-{step}"
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"weights")
    if complete:
        (folder / "trainer_state.json").write_text("{}")
    return folder


def test_the_newest_complete_checkpoint_is_resumed(tmp_path: Path) -> None:
    assert newest_checkpoint(tmp_path) is None
    _checkpoint(tmp_path, 2, complete=True)
    ten = _checkpoint(tmp_path, 10, complete=True)
    _checkpoint(tmp_path, 9, complete=True)
    (tmp_path / "checkpoints" / "checkpoint-x").mkdir()
    assert newest_checkpoint(tmp_path) == ten  # numeric, not lexical, order


def test_a_checkpoint_cut_short_by_a_kill_is_skipped(tmp_path: Path) -> None:
    # given a worker killed while it saved checkpoint-4 (no trainer_state.json yet)
    two = _checkpoint(tmp_path, 2, complete=True)
    _checkpoint(tmp_path, 4, complete=False)
    # then the stage resumes from the last complete one
    assert newest_checkpoint(tmp_path) == two


def test_unknown_stage_kinds_are_refused() -> None:
    with pytest.raises(ValueError, match="hsa_sft, opd, hsa_rl"):
        stage_runner("dpo")
