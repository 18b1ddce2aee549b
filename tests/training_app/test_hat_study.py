"""The HAT study's platform parts (docs/RESULTS.md): its three rooms, its run configs, the
held-out-augmented BFCL set, and QA and BFCL eval runs from a local checkpoint in process
(on the embedded SmolLM2-135M, a few items with tiny budgets)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_app.models import Room
from inference.workers.local_model import ensure_local_checkpoint
from tests.factories import UserFactory
from training_app.evals.qa_runner import QARunConfig
from training_app.models import EvalRun, EvalSet, TrainingRun
from training_app.services import evals, hat_study, runs
from training_app.services.run_config import run_config_validate

pytestmark = pytest.mark.django_db


@pytest.fixture
def study_users(db):  # type: ignore[no-untyped-def]
    from console.roles import Role

    return (
        UserFactory(username=hat_study.STUDY_OWNER, role=Role.MERCHANT),
        UserFactory(username=hat_study.STUDY_OPERATOR, role=Role.OPERATOR),
    )


@pytest.fixture
def run_eval_calls(monkeypatch) -> list[int]:  # type: ignore[no-untyped-def]
    from training_app.tasks import run_eval

    calls: list[int] = []
    monkeypatch.setattr(run_eval, "delay", lambda run_id: calls.append(run_id))
    return calls


def test_the_study_rooms_are_three_categories_each_with_a_published_harness(
    study_users,
) -> None:
    versions = hat_study.study_rooms()
    assert hat_study.study_rooms().keys() == versions.keys()  # idempotent
    assert Room.objects.filter(name__startswith="HAT study:").count() == 3
    sizes = {}
    for key, version in versions.items():
        room = version.harness.room
        assert room.coupons.count() == 3 and room.products.count() >= 14
        qa_set = evals.eval_set_build_qa(harness_version=version, name=key, per_type=1)
        with qa_set.file.open("rb") as handle:
            items = [json.loads(line) for line in handle.read().splitlines()[1:]]
        sizes[key] = {item.get("question_type") for item in items}
    # the kitchen catalog has no size charts: no size questions there
    assert "size" in sizes["outdoor"] and "size" not in sizes["kitchen"]
    tools = {k: sorted(t["name"] for t in v.content["tools"]) for k, v in versions.items()}
    assert len({tuple(t) for t in tools.values()}) == 3  # each room names its tools its own way


def test_the_committed_configs_validate_and_differ_only_where_the_study_says(
    study_users,
) -> None:
    versions = hat_study.study_rooms()
    scale = hat_study.SCALES["cpu"]
    configs = {m.key: hat_study.study_config(m, versions, scale) for m in hat_study.MODELS[1:]}
    for config in configs.values():
        run_config_validate(config)  # raises on any bad field
        assert len(config["harness_versions"]) == 3 and config["name"].endswith("[cpu]")
    fixed, hsa, hat = configs["fixed_sft"], configs["hsa_sft"], configs["hat"]
    assert fixed["hsa_policy"] == "" and hsa["hsa_policy"] == hat["hsa_policy"] == "hsa-train"
    assert fixed["params"]["hsa_sft"] == hsa["params"]["hsa_sft"] == hat["params"]["hsa_sft"]
    assert hat["stages"] == ["hsa_sft", "opd", "hsa_rl"]
    hat_model = next(m for m in hat_study.MODELS if m.key == "hat")
    smoke = hat_study.study_config(hat_model, versions, hat_study.SCALES["smoke"])
    assert smoke["params"]["hsa_sft"]["max_steps"] == 1 and smoke["params"]["opd"]["steps"] == 1
    run = runs.run_create(config=smoke, created_by=None, start=False)
    assert run.status == TrainingRun.Status.DRAFT and run.stage_runs.count() == 3


def test_the_held_out_augmented_bfcl_set_pairs_with_the_original(run_eval_calls) -> None:
    original = evals.eval_set_bfcl(categories=["live_simple"], per_category=20)
    augmented = evals.eval_set_bfcl(
        categories=["live_simple"], per_category=20, augmentation="bfcl-tool-schemas-heldout"
    )
    assert augmented.pk != original.pk and augmented.source["augmentation"] == (
        "bfcl-tool-schemas-heldout"
    )
    with original.file.open("rb") as handle:
        first = {r["id"]: r for r in map(json.loads, handle.read().splitlines())}
    with augmented.file.open("rb") as handle:
        made = [json.loads(line) for line in handle.read().splitlines()]
    assert 0 < len(made) <= 20 and all(r["source_id"] in first for r in made)
    renamed = [
        r
        for r in made
        if {f["name"] for f in r["function"]}
        != {f["name"] for f in first[r["source_id"]]["function"]}
    ]
    assert renamed, "the held-out policy renamed no function"
    with pytest.raises(evals.EvalSetError, match="augmentation must be one of"):
        evals.eval_set_bfcl(categories=["live_simple"], augmentation="hsa-train")
    assert EvalSet.objects.count() == 2


def test_qa_and_bfcl_runs_generate_from_a_local_checkpoint(compact_room, run_eval_calls) -> None:
    model_dir = str(ensure_local_checkpoint().path)
    qa_set = evals.eval_set_build_qa(
        harness_version=compact_room.harness.published_version, name="LS", per_type=1
    )
    run = evals.eval_run_create(
        eval_set=qa_set,
        model_label="local",
        local_model_dir=model_dir,
        item_limit=2,
        max_tokens=8,
        max_concurrency=2,
    )
    assert run.generation["deadline_s"] == evals.LOCAL_DEADLINE_S
    assert QARunConfig(**run.generation).tool_mode == "text"
    assert evals.eval_run_execute(run.pk) == EvalRun.Status.SUCCEEDED
    rows = list(run.item_results.all())
    assert len(rows) == 2 and not any(r.infrastructure_error for r in rows)
    assert all(r.result["model_calls"] >= 1 and r.result["completion_tokens"] > 0 for r in rows)

    augmented = evals.eval_set_bfcl(
        categories=["live_simple"], per_category=4, augmentation="bfcl-tool-schemas-heldout"
    )
    bfcl = evals.eval_run_create(
        eval_set=augmented,
        model_label="local",
        local_model_dir=model_dir,
        item_limit=2,
        max_tokens=16,
        max_concurrency=2,
    )
    assert evals.eval_run_execute(bfcl.pk) == EvalRun.Status.SUCCEEDED
    cases = list(bfcl.item_results.order_by("position"))
    assert len(cases) == 2 and all(c.result["response"] for c in cases)
    assert all(c.base_id != c.item_id and c.item_id == f"{c.base_id}-hsa" for c in cases)
    assert Path(model_dir, "config.json").is_file()


def test_the_console_score_table_agrees_with_the_studys_own_scores(compact_room) -> None:
    # given one model's stored runs in the study's plan shape (QA live/T1/T2 on one room,
    # IFEval, BFCL original and held-out), with mixed verdicts
    from dataclasses import asdict

    from training_app.evals.study_analysis import score_row
    from training_app.models import EvalItemResult

    qa_set = evals.eval_set_build_qa(
        harness_version=compact_room.harness.published_version, name="LS", per_type=1
    )
    sets = {
        "qa:fashion:live": (qa_set, ""),
        "qa:fashion:t1": (qa_set, "t1"),
        "qa:fashion:t2": (qa_set, "t2"),
        "ifeval": (evals.eval_set_ifeval(), ""),
        "bfcl": (evals.eval_set_bfcl(categories=["live_simple"], per_category=6), ""),
        "bfcl_augmented": (
            evals.eval_set_bfcl(
                categories=["live_simple"], per_category=6, augmentation="bfcl-tool-schemas-heldout"
            ),
            "",
        ),
    }
    eval_runs: dict[str, int] = {}
    for index, (key, (eval_set, variant)) in enumerate(sets.items()):
        run = EvalRun.objects.create(
            eval_set=eval_set,
            model_label="Base [study test]",
            local_model_dir="/checkpoints/base",
            variant_set=variant,
            status=EvalRun.Status.SUCCEEDED,
            progress_done=6,
            progress_total=6,
        )
        EvalItemResult.objects.bulk_create(
            EvalItemResult(
                run=run,
                position=n,
                item_id=f"item-{n}-{variant}" if variant else f"item-{n}",
                base_id=f"item-{n}",
                passed=(n + index) % 3 == 0,
                score=float((n + index) % 3 == 0),
            )
            for n in range(6)
        )
        eval_runs[key] = run.pk
    scores = hat_study.model_scores("Base [study test]", eval_runs)
    rows = {"base": asdict(score_row(scores))}
    labels = {"base": "Base [study test]"}
    # when the console's table is built from the same runs
    console = hat_study.console_score_table(labels, {"base": eval_runs}, rows)
    # then every cell has the study's n and estimate, and the URL names every run
    assert console["mismatches"] == [] and console["problems"] == []
    assert console["max_estimate_difference_points"] < 1e-9
    assert console["score_table_url"].count("runs=") == len(sets)
    # and a study row that disagrees is reported, not hidden
    rows["base"]["ifeval"]["n"] = 5
    broken = hat_study.console_score_table(labels, {"base": eval_runs}, rows)
    assert broken["mismatches"] == ["base ifeval_prompt: n 5 vs 6"]
