"""Fixtures for training tests: the tiny causal LM (``tiny_model_dir``), a gold dataset on
the demo harness, and a training run config built on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.training_app.tiny_model import tiny_model_dir

ROOT = Path(__file__).resolve().parents[2]
GOLD = ROOT / "training_app" / "demo_data" / "gold_trajectories.jsonl"
DEMO_DATA = ROOT / "harness_app" / "demo_data"
TINY_RUNNER = "tests.training_app.stage_runners.tiny_trainer_stage"


@pytest.fixture
def gold_dataset(published_room, operator, tmp_path, settings):  # type: ignore[no-untyped-def]
    from training_app import services

    settings.MEDIA_ROOT = tmp_path / "artifacts"
    return services.dataset_create_gold(
        harness_version=published_room.harness.published_version,
        name="gold",
        data=GOLD.read_bytes(),
        created_by=operator,
    )


@pytest.fixture
def run_config_dict(gold_dataset) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    version = gold_dataset.harness_version
    return {
        "name": "sft then rl",
        "harness_versions": [{"harness": version.harness_id, "version": version.number}],
        "datasets": [gold_dataset.pk],
        "hsa_policy": "hsa-train",
        "stages": ["hsa_sft", "hsa_rl"],
        "params": {"hsa_sft": {"max_steps": 4, "save_steps": 2}},
        "seed": 7,
    }


@pytest.fixture
def tiny_runners(settings, tmp_path, tiny_model_dir):  # type: ignore[no-untyped-def]
    """Every stage kind runs the tiny Trainer loop; stages write under tmp_path."""
    settings.HAT_TRAIN_STAGE_RUNNERS = {kind: TINY_RUNNER for kind in ("hsa_sft", "opd", "hsa_rl")}
    settings.HAT_TRAIN_DIR = tmp_path / "training"
    return tiny_model_dir


__all__ = [
    "enqueued",
    "gold_dataset",
    "run_config_dict",
    "tiny_model_dir",
    "tiny_runners",
]


@pytest.fixture
def enqueued(monkeypatch) -> list[int]:  # type: ignore[no-untyped-def]
    """Stage ids ``run_stage.delay`` was called with (no broker involved)."""
    from training_app.tasks import run_stage

    calls: list[int] = []
    monkeypatch.setattr(run_stage, "delay", lambda stage_id: calls.append(stage_id))
    return calls
