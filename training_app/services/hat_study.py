"""The HAT study (issue #16, docs/RESULTS.md): reproduce the report's central claim at small
scale with the platform's own runs. ``manage.py hat_study`` runs ``study_run``.

Every step goes through the services a console user clicks: the rooms and published
harnesses (``harness_app.services``), the eval sets (``eval_set_build_qa``, ``eval_set_ifeval``,
``eval_set_bfcl``), the training runs (``run_create`` from the committed YAML configs in
``training_app/demo_data/hat_study/runs/``, run inline: eager Celery, the same lease, chain and
checkpoint code as the ``train`` worker) and the eval runs (``eval_run_create``, run inline
from the local checkpoints, batched in process). So the console's score table, training-run
pages and eval-run pages show the study's runs.

Resumable: each step finds what it made before by name (rooms, sets by content, runs by
name and label) and only does what is missing; a training stage killed mid-way resumes
from its newest checkpoint, an eval run keeps the items it stored. The state file
(``<out>/state.json``) records each step's wall time; ``<out>/results.json`` holds every
number and interval ``docs/RESULTS.md`` reports. One study process at a time (a lock file).
"""

from __future__ import annotations

import csv
import fcntl
import json
import logging
import os
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import yaml
from django.conf import settings
from django.contrib.auth import get_user_model

from harness_app import services as harness_services
from harness_app.harness.serialization import harness_from_yaml
from harness_app.models import Coupon, HarnessVersion, Room
from training_app.evals.study_analysis import (
    ModelScores,
    score_row,
    study_comparisons,
)
from training_app.evals.study_report import results_markdown
from training_app.models import (
    EvalRun,
    EvalSet,
    ModelEndpoint,
    StageMetric,
    StageRun,
    TrainingRun,
)
from training_app.services import evals, runs
from training_app.services.run_config import default_base_model_dir

log = logging.getLogger(__name__)

STUDY_DATA = Path(__file__).resolve().parents[1] / "demo_data" / "hat_study"
HARNESS_DATA = Path(__file__).resolve().parents[2] / "harness_app" / "demo_data"
STUDY_OWNER = "merchant"
STUDY_OPERATOR = "operator"


@dataclass(frozen=True)
class StudyScale:
    """How big the study is. ``cpu`` measured about 4 hours on 2 CPU cores (Base's eval runs
    34 min, Fixed-SFT's about 48, its training 13; docs/RESULTS.md "Status")."""

    name: str
    qa_per_type: int  # Live-Stream QA items per question type per room
    ifeval_prompts: int  # the first N of IFEval's 541 prompts (a fixed subset)
    bfcl_cases: int  # live_simple cases at an even stride (original and augmented)
    sft_steps: int | None = None  # override the configs' HSA-SFT steps (None: as committed)
    batch: int = 16  # in-process generation batch (eval runs' max_concurrency)
    # Token budgets, the same for every model: a text-mode action or a short reply fits 128
    # (the base model otherwise rambles to the cap on every call, which is most of the cost);
    # a live_simple answer is one call; IFEval needs >= 256 (length instructions).
    qa_max_tokens: int = 128
    bfcl_max_tokens: int = 128
    ifeval_max_tokens: int = 256


SCALES: dict[str, StudyScale] = {
    "cpu": StudyScale("cpu", qa_per_type=2, ifeval_prompts=100, bfcl_cases=50),
    "full": StudyScale("full", qa_per_type=4, ifeval_prompts=300, bfcl_cases=100),
    # a minutes-long end-to-end check of the machinery (the test suite's, and a dry run)
    "smoke": StudyScale("smoke", qa_per_type=1, ifeval_prompts=4, bfcl_cases=3, sft_steps=1),
}


@dataclass(frozen=True)
class StudyRoom:
    key: str
    name: str
    category: str
    products: Path
    harness: Path
    coupons: Path


ROOMS: tuple[StudyRoom, ...] = (
    StudyRoom(
        "fashion",
        "HAT study: Autumn Wardrobe",
        "fashion (knitwear, outerwear, shoes)",
        HARNESS_DATA / "products.csv",
        HARNESS_DATA / "compact_harness.yaml",
        STUDY_DATA / "rooms" / "fashion_coupons.csv",
    ),
    StudyRoom(
        "kitchen",
        "HAT study: Kitchen Pro Live",
        "kitchen (cookware, knives, appliances)",
        STUDY_DATA / "rooms" / "kitchen" / "products.csv",
        STUDY_DATA / "rooms" / "kitchen" / "harness.yaml",
        STUDY_DATA / "rooms" / "kitchen" / "coupons.csv",
    ),
    StudyRoom(
        "outdoor",
        "HAT study: Trail & Summit Live",
        "outdoor (apparel with size charts, packs, gear)",
        STUDY_DATA / "rooms" / "outdoor" / "products.csv",
        STUDY_DATA / "rooms" / "outdoor" / "harness.yaml",
        STUDY_DATA / "rooms" / "outdoor" / "coupons.csv",
    ),
)


@dataclass(frozen=True)
class StudyModel:
    key: str
    label: str
    config: str  # a file under runs/ ("" for the base model)


# In the order they run: the central comparison (Fixed-Harness SFT vs HAT) first, so a
# study cut short still has it.
MODELS: tuple[StudyModel, ...] = (
    StudyModel("base", "Base", ""),
    StudyModel("fixed_sft", "Fixed-Harness SFT", "fixed_sft.yaml"),
    StudyModel("hat", "HAT", "hat.yaml"),
    StudyModel("hsa_sft", "HSA-SFT", "hsa_sft.yaml"),
)


class StudyError(RuntimeError):
    pass


# --- the whole study ---------------------------------------------------------------------------


def study_run(
    *,
    scale: StudyScale,
    out: Path,
    latency: bool = True,
    echo: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run (or resume) the study; returns the results written to ``<out>/results.json``."""
    out.mkdir(parents=True, exist_ok=True)
    with _lock(out / ".lock"), _eager():
        state = _State(out / "state.json")
        versions = state.step("rooms", echo, study_rooms)
        sets = state.step("eval_sets", echo, lambda: study_eval_sets(versions, scale))
        model_dirs: dict[str, str] = {"base": str(_base_model_dir())}
        trained: dict[str, TrainingRun] = {}
        eval_runs: dict[str, dict[str, int]] = {}
        for model in MODELS:
            if model.config:
                run = state.step(
                    f"train:{model.key}", echo, partial(study_train, model, versions, scale)
                )
                final = runs.run_final_dir(run)
                if final is None:
                    raise StudyError(f"training run {run.pk} ({run.name}) has no final model")
                model_dirs[model.key], trained[model.key] = str(final), run
            eval_runs[model.key] = state.step(
                f"eval:{model.key}",
                echo,
                partial(study_evaluate, model, model_dirs[model.key], sets, scale, echo),
            )
        results = study_results(sets, scale, eval_runs, trained)
        if latency:
            results["latency"] = state.step(
                "latency", echo, partial(study_latency, trained["hat"], scale, echo)
            )
        results["wall_s"] = state.walls()
        (out / "results.json").write_text(json.dumps(results, indent=2, default=str), "utf-8")
        (out / "results.md").write_text(results_markdown(results), "utf-8")
        echo(f"results: {out / 'results.json'}, {out / 'results.md'}")
        return results


# --- rooms ----------------------------------------------------------------------------------------


def study_rooms() -> dict[str, HarnessVersion]:
    """The three rooms (created once), each with its catalog, coupons and published harness."""
    user_model = get_user_model()
    owner = user_model.objects.filter(username=STUDY_OWNER).first()
    operator = user_model.objects.filter(username=STUDY_OPERATOR).first()
    if owner is None or operator is None:
        raise StudyError("run manage.py seed_demo first (the study's rooms belong to 'merchant')")
    versions: dict[str, HarnessVersion] = {}
    for spec in ROOMS:
        room = Room.objects.filter(owner=owner, name=spec.name).first()
        if room is None:
            room = harness_services.room_create(
                owner=owner, name=spec.name, locale="en-US", currency="USD"
            )
            harness_services.products_import(room=room, data=spec.products.read_bytes(), fmt="csv")
            with spec.coupons.open(encoding="utf-8") as handle:
                for row in csv.DictReader(handle):
                    Coupon.objects.create(room=room, **row)
            version = harness_services.harness_version_create(
                harness=room.harness,
                content=harness_from_yaml(spec.harness.read_text("utf-8")),
                base_version=None,
                author=operator,
                message=f"HAT study harness ({spec.category})",
            )
            harness_services.harness_version_publish(version=version)
        room.harness.refresh_from_db()
        published = room.harness.published_version
        if published is None:
            raise StudyError(f"room {room.name!r} has no published harness")
        versions[spec.key] = published
    return versions


# --- eval sets -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class StudySets:
    qa: dict[str, EvalSet]  # room key -> its Live-Stream QA set
    ifeval: EvalSet
    bfcl: EvalSet
    bfcl_augmented: EvalSet


def study_eval_sets(versions: dict[str, HarnessVersion], scale: StudyScale) -> StudySets:
    qa = {
        key: evals.eval_set_build_qa(
            harness_version=version,
            name=f"HAT study {scale.name}: {key} Live-Stream QA ({scale.qa_per_type} per type)",
            per_type=scale.qa_per_type,
            seed=0,
        )
        for key, version in versions.items()
    }
    bfcl = evals.eval_set_bfcl(categories=["live_simple"], per_category=scale.bfcl_cases)
    augmented = evals.eval_set_bfcl(
        categories=["live_simple"],
        per_category=scale.bfcl_cases,
        augmentation="bfcl-tool-schemas-heldout",
        seed=0,
    )
    return StudySets(qa, evals.eval_set_ifeval(), bfcl, augmented)


# --- training -------------------------------------------------------------------------------------


def study_config(model: StudyModel, versions: dict[str, HarnessVersion], scale: StudyScale) -> Any:
    """The committed YAML config with the rooms' harness versions (and the scale's name)."""
    config = yaml.safe_load((STUDY_DATA / "runs" / model.config).read_text("utf-8"))
    config["name"] = f"{config['name']} [{scale.name}]"
    config["harness_versions"] = [
        {"harness": v.harness_id, "version": v.number} for v in versions.values()
    ]
    if scale.sft_steps is not None:
        config["params"]["hsa_sft"]["max_steps"] = scale.sft_steps
        config["params"]["hsa_sft"]["save_steps"] = scale.sft_steps
        for stage, key in (("opd", "steps"), ("hsa_rl", "steps")):
            if stage in config["params"]:
                config["params"][stage][key] = 1
                config["params"][stage]["save_steps"] = 1
    return config


def study_train(
    model: StudyModel, versions: dict[str, HarnessVersion], scale: StudyScale
) -> TrainingRun:
    """The model's training run: created from its config once, run inline; a failed or
    interrupted one is resumed from its newest checkpoint."""
    config = study_config(model, versions, scale)
    run = TrainingRun.objects.filter(name=config["name"]).order_by("-pk").first()
    if run is None:
        operator = get_user_model().objects.filter(username=STUDY_OPERATOR).first()
        run = runs.run_create(config=config, created_by=operator, start=False)
    if run.status == TrainingRun.Status.SUCCEEDED:
        return run
    # A stage the killed predecessor of this process held: requeued (eager: it runs here,
    # from its newest checkpoint, and the stages after it follow).
    runs.stages_requeue_stale(timeout_s=1e-6)
    run.refresh_from_db()
    if run.status == TrainingRun.Status.DRAFT:
        runs.run_start(run=run)
    elif run.status in (TrainingRun.Status.FAILED, TrainingRun.Status.CANCELLED):
        runs.run_resume(run=run)
    queued = run.stage_runs.filter(status=StageRun.Status.QUEUED).order_by("order").first()
    if queued is not None:  # queued when its predecessor died, never delivered
        from training_app.tasks import run_stage

        run_stage.delay(queued.pk)
    run.refresh_from_db()
    if run.status != TrainingRun.Status.SUCCEEDED:
        raise StudyError(f"training run {run.pk} ended {run.status}")
    return run


# --- evaluation -----------------------------------------------------------------------------------


def model_label(model: StudyModel, scale: StudyScale) -> str:
    return f"{model.label} [study {scale.name}]"


def study_eval_plan(sets: StudySets, scale: StudyScale) -> list[dict[str, Any]]:
    """Every eval run one model makes: QA on each room (original, T1, T2), IFEval, BFCL."""
    plan: list[dict[str, Any]] = []
    for room, qa_set in sets.qa.items():
        for variant in ("", "t1", "t2"):
            plan.append(
                {
                    "key": f"qa:{room}:{variant or 'live'}",
                    "eval_set": qa_set,
                    "variant_set": variant,
                    "max_tokens": scale.qa_max_tokens,
                }
            )
    plan.append(
        {
            "key": "ifeval",
            "eval_set": sets.ifeval,
            "item_limit": scale.ifeval_prompts,
            "max_tokens": scale.ifeval_max_tokens,
        }
    )
    for key, bfcl_set in (("bfcl", sets.bfcl), ("bfcl_augmented", sets.bfcl_augmented)):
        plan.append({"key": key, "eval_set": bfcl_set, "max_tokens": scale.bfcl_max_tokens})
    return plan


def study_evaluate(
    model: StudyModel,
    model_dir: str,
    sets: StudySets,
    scale: StudyScale,
    echo: Callable[[str], None],
) -> dict[str, int]:
    """Each planned eval run of the model, created once and run inline; returns key -> run id."""
    label = model_label(model, scale)
    done: dict[str, int] = {}
    for spec in study_eval_plan(sets, scale):
        started = time.perf_counter()
        run = _eval_run(label, model_dir, spec, scale)
        done[spec["key"]] = run.pk
        summary = run.summary or {}
        echo(
            f"  {label:<32} {spec['key']:<22} run {run.pk} {run.status} "
            f"n={summary.get('n')} ({time.perf_counter() - started:.0f} s)"
        )
    return done


def _eval_run(label: str, model_dir: str, spec: dict[str, Any], scale: StudyScale) -> EvalRun:
    found = (
        EvalRun.objects.filter(
            model_label=label,
            eval_set=spec["eval_set"],
            variant_set=spec.get("variant_set", ""),
            item_limit=spec.get("item_limit"),
        )
        .exclude(status__in=[EvalRun.Status.FAILED, EvalRun.Status.CANCELLED])
        .order_by("-pk")
        .first()
    )
    if found is None:
        found = evals.eval_run_create(
            eval_set=spec["eval_set"],
            model_label=label,
            local_model_dir=model_dir,
            max_tokens=spec["max_tokens"],
            max_concurrency=scale.batch,
            item_limit=spec.get("item_limit"),
            variant_set=spec.get("variant_set", ""),
        )  # eager Celery: the run executes here when the create commits
    found.refresh_from_db()
    if not found.is_finished:  # interrupted: it keeps its stored items and does the rest
        evals.eval_run_execute(found.pk)
        found.refresh_from_db()
    if found.status != EvalRun.Status.SUCCEEDED:
        raise StudyError(
            f"eval run {found.pk} ({label}, {spec['key']}) ended {found.status}: {found.error}"
        )
    return found


# --- results --------------------------------------------------------------------------------------


def model_scores(label: str, eval_runs: dict[str, int]) -> ModelScores:
    """A model's item scores from its eval runs (keys made unique across rooms)."""
    scores = ModelScores(label)
    for key, run_id in eval_runs.items():
        rows = EvalRun.objects.get(pk=run_id).item_results.values_list(
            "item_id", "base_id", "passed"
        )
        if key.startswith("qa:"):
            _, room, variant = key.split(":")
            for item_id, base_id, passed in rows:
                if variant == "live":
                    scores.live[f"{room}:{base_id}"] = float(passed)
                else:
                    getattr(scores, variant)[f"{room}:{item_id}"] = float(passed)
                    getattr(scores, f"{variant}_base")[f"{room}:{item_id}"] = f"{room}:{base_id}"
        elif key == "ifeval":
            scores.ifeval = {item_id: float(passed) for item_id, _b, passed in rows}
        else:
            getattr(scores, key).update({base_id: float(p) for _i, base_id, p in rows})
    return scores


def study_results(
    sets: StudySets,
    scale: StudyScale,
    eval_runs: dict[str, dict[str, int]],
    trained: dict[str, TrainingRun],
) -> dict[str, Any]:
    """Every number the report gives, for the models in ``eval_runs`` (model key -> its eval
    runs by plan key)."""
    models: dict[str, ModelScores] = {}
    infrastructure: dict[str, int] = {}
    by_key = {m.key: m for m in MODELS}
    for key, model_runs in eval_runs.items():
        models[key] = model_scores(model_label(by_key[key], scale), model_runs)
        infrastructure[key] = sum(
            EvalRun.objects.get(pk=pk).item_results.exclude(infrastructure_error="").count()
            for pk in model_runs.values()
        )
    rows = {key: asdict(score_row(scores)) for key, scores in models.items()}
    comparisons = study_comparisons(models, base="base", fixed="fixed_sft", hat="hat")
    return {
        "scale": asdict(scale),
        "machine": {"cpus": os.cpu_count(), "torch_threads": _torch_threads()},
        "labels": {key: model_label(by_key[key], scale) for key in models},
        "sets": {
            "qa": {k: {"id": s.pk, "items": s.items} for k, s in sets.qa.items()},
            "ifeval": {"id": sets.ifeval.pk, "prompts": scale.ifeval_prompts},
            "bfcl": {"id": sets.bfcl.pk, "items": sets.bfcl.items},
            "bfcl_augmented": {"id": sets.bfcl_augmented.pk, "items": sets.bfcl_augmented.items},
        },
        "eval_runs": eval_runs,
        "training_runs": {key: run.pk for key, run in trained.items()},
        "infrastructure_errors": infrastructure,
        "scores": rows,
        "comparisons": [c.to_dict() for c in comparisons],
        "curves": training_curves(list(trained.values())),
        "console": console_score_table(
            {key: model_label(by_key[key], scale) for key in models}, eval_runs, rows
        ),
        "configs": {key: runs_config_yaml(run) for key, run in trained.items()},
    }


# The study's score columns and the console score table's columns they must agree with.
CONSOLE_COLUMNS = {
    "live": "live_stream_qa",
    "harness_variant": "harness_variant_qa",
    "t1": "harness_variant_t1",
    "t2": "harness_variant_t2",
    "ifeval": "ifeval_prompt",
    "bfcl": "bfcl",
    "bfcl_augmented": "bfcl_heldout",
}


def console_score_table(
    labels: dict[str, str], eval_runs: dict[str, dict[str, int]], rows: dict[str, Any]
) -> dict[str, Any]:
    """The console's score table of the same runs (``selectors.evals.score_report``, the
    page's own code) beside the study's: its URL, and where its estimates or n differ from
    the study's (an independent path from the stored items: the two must agree)."""
    from training_app.selectors import evals as eval_selectors

    run_ids = sorted(pk for model_runs in eval_runs.values() for pk in model_runs.values())
    study_runs = list(EvalRun.objects.filter(pk__in=run_ids).select_related("eval_set"))
    report = eval_selectors.score_report(study_runs, reference_model=labels.get("base", "Base"))
    worst = 0.0
    mismatches: list[str] = []
    for key, row in rows.items():
        console_row = report.table.row(labels[key])
        for study_key, column in CONSOLE_COLUMNS.items():
            cell = console_row.cells.get(column)
            ours = row[study_key]
            if cell is None or cell.n != ours["n"]:
                mismatches.append(f"{key} {column}: n {ours['n']} vs {cell and cell.n}")
                continue
            worst = max(worst, abs(cell.estimate - 100 * ours["estimate"]))
    return {
        "score_table_url": "/evaluation/score-table/?"
        + urlencode([("runs", pk) for pk in run_ids]),
        "max_estimate_difference_points": worst,
        "mismatches": mismatches,
        "problems": list(report.problems),
    }


def study_report(*, scale: StudyScale, out: Path) -> dict[str, Any]:
    """The results of the models whose eval runs have all succeeded so far, without running
    anything (a study in progress, or one cut short); written to ``<out>/results.json``."""
    versions = study_rooms()
    sets = study_eval_sets(versions, scale)
    eval_runs: dict[str, dict[str, int]] = {}
    trained: dict[str, TrainingRun] = {}
    for model in MODELS:
        if model.config:
            name = study_config(model, versions, scale)["name"]
            run = TrainingRun.objects.filter(name=name, status=TrainingRun.Status.SUCCEEDED)
            found_run = run.order_by("-pk").first()
            if found_run is None:
                continue
            trained[model.key] = found_run
        found = {
            spec["key"]: _finished_eval_run(model_label(model, scale), spec)
            for spec in study_eval_plan(sets, scale)
        }
        if all(found.values()):
            eval_runs[model.key] = {k: v for k, v in found.items() if v is not None}
    results = study_results(sets, scale, eval_runs, trained)
    state = _State(out / "state.json")
    results["wall_s"] = state.walls()
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2, default=str), "utf-8")
    return results


def _finished_eval_run(label: str, spec: dict[str, Any]) -> int | None:
    run = (
        EvalRun.objects.filter(
            model_label=label,
            eval_set=spec["eval_set"],
            variant_set=spec.get("variant_set", ""),
            item_limit=spec.get("item_limit"),
            status=EvalRun.Status.SUCCEEDED,
        )
        .order_by("-pk")
        .first()
    )
    return run.pk if run is not None else None


def runs_config_yaml(run: TrainingRun) -> str:
    from training_app.services.run_config import run_config_yaml

    return run_config_yaml(run)


def training_curves(training_runs: list[TrainingRun]) -> dict[str, Any]:
    """Per run and stage, each logged metric's (step, value) series."""
    curves: dict[str, Any] = {}
    for run in training_runs:
        stages: dict[str, Any] = {}
        for stage in run.stage_runs.order_by("order"):
            series: dict[str, list[tuple[int, float]]] = {}
            for metric in StageMetric.objects.filter(stage=stage).order_by("step"):
                series.setdefault(metric.name, []).append((metric.step, metric.value))
            stages[stage.kind] = {
                "series": series,
                "summary": stage.summary,
                "wall_s": (stage.finished_at - stage.started_at).total_seconds()
                if stage.finished_at and stage.started_at
                else None,
            }
        curves[run.name] = stages
    return curves


def _base_model_dir() -> Path:
    """The embedded SmolLM2-135M-Instruct (converted from the packaged GGUF once)."""
    from inference.workers.local_model import ensure_local_checkpoint

    return ensure_local_checkpoint(default_base_model_dir()).path


def _torch_threads() -> int:
    import torch

    return int(torch.get_num_threads())


# --- latency --------------------------------------------------------------------------------------


def study_latency(
    hat_run: TrainingRun, scale: StudyScale, echo: Callable[[str], None]
) -> dict[str, Any]:
    """The HAT checkpoint registered as a model endpoint, and a short latency replay of it
    through the live reply path beside the base model's (both served by ``transformers
    serve`` on this machine, one after the other, on the fashion room)."""
    from experiments_app.models import LatencyReport
    from experiments_app.services.latency_replay import latency_replay_queue, latency_replay_run
    from inference.workers.profiles import transformers_serve_command
    from training_app.services.endpoints import endpoint_create

    hat_dir = runs.run_final_dir(hat_run)
    if hat_dir is None:
        raise StudyError(f"the HAT run {hat_run.pk} has no final model")
    hat_endpoint = runs.run_register_endpoint(run=hat_run, name=f"hat-study-{scale.name}")
    base_port = int(settings.HAT_TRAIN_SERVE_PORT) - 1
    base_endpoint = ModelEndpoint.objects.filter(name=f"hat-study-base-{scale.name}").first()
    if base_endpoint is None:
        from inference.workers.profiles import served_model_id

        base_dir = _base_model_dir()
        base_endpoint = endpoint_create(
            name=f"hat-study-base-{scale.name}",
            base_url=f"http://127.0.0.1:{base_port}/v1",
            model_name=served_model_id(base_dir),
            role=ModelEndpoint.Role.STUDENT,
            tool_mode=ModelEndpoint.ToolMode.TEXT,
            timeout_s=60.0,
            max_concurrency=2,
        )
    room = Room.objects.get(name=ROOMS[0].name)
    requests = Path(settings.BASE_DIR) / "experiments_app" / "demo_data" / "replay_100.jsonl"
    out: dict[str, Any] = {"endpoints": {"hat": hat_endpoint.name, "base": base_endpoint.name}}
    for key, endpoint, model_dir, port in (
        ("base", base_endpoint, _base_model_dir(), base_port),
        ("hat", hat_endpoint, hat_dir, runs.run_serve_port(hat_run)),
    ):
        existing = LatencyReport.objects.filter(
            endpoint=endpoint, room=room, status=LatencyReport.Status.SUCCEEDED
        ).first()
        if existing is None:
            with _served(transformers_serve_command(model_dir, port=port), port):
                report = latency_replay_queue(
                    room=room,
                    endpoint=endpoint,
                    concurrency=[1],
                    request_set="file",
                    request_path=requests,
                    limit=8,
                    enqueue=False,
                )
                latency_replay_run(report.pk)
            existing = LatencyReport.objects.get(pk=report.pk)
        echo(f"  latency {key}: report {existing.pk} {existing.status}")
        out[key] = {"report": existing.pk, "status": existing.status, "levels": existing.results}
    return out


@contextmanager
def _served(command: list[str], port: int, timeout_s: float = 300.0) -> Iterator[None]:
    from training_app.management.commands.serve_run import OFFLINE_ENV

    process = subprocess.Popen(
        command, env=os.environ | OFFLINE_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise StudyError(f"the model server on port {port} did not start") from None
                time.sleep(2)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


# --- plumbing -------------------------------------------------------------------------------------


class _State:
    """Each finished step's wall time; a step's value is recomputed (cheaply, by name) on
    resume, its wall time kept from the run that did the work."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, Any] = json.loads(path.read_text("utf-8")) if path.exists() else {}
        self.values: dict[str, Any] = {}

    def step(self, name: str, echo: Callable[[str], None], work: Callable[[], Any]) -> Any:
        echo(f"{time.strftime('%H:%M:%S')} {name} ...")
        started = time.perf_counter()
        value = work()
        wall = time.perf_counter() - started
        entry = self.data.setdefault(name, {})
        entry.setdefault("wall_s", round(wall, 1))  # the first (working) pass's time
        entry["last_wall_s"] = round(wall, 1)
        self.values[name] = value
        self.path.write_text(json.dumps(self.data, indent=2), "utf-8")
        echo(f"{time.strftime('%H:%M:%S')} {name} done ({wall:.0f} s)")
        return value

    def walls(self) -> dict[str, float]:
        return {name: entry["wall_s"] for name, entry in self.data.items()}


@contextmanager
def _lock(path: Path) -> Iterator[None]:
    with path.open("w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StudyError(f"another study holds {path}") from None
        yield


@contextmanager
def _eager() -> Iterator[None]:
    from celery import current_app

    was = current_app.conf.task_always_eager
    current_app.conf.task_always_eager = True
    try:
        yield
    finally:
        current_app.conf.task_always_eager = was
