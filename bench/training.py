"""Training on the CPU profile (issue #11), through the platform, on SmolLM2-135M-Instruct.

Part 1, the whole run (target: <= 15 minutes on 2 cores): the demo's three-stage HAT run
(HSA-SFT -> General OPD -> HSA-RL, ``seed_demo``'s params) on the compact harness over the
demo catalog, each stage executed in this process exactly as the Celery task does it
(``stage_execute``: lease, heartbeat thread, database reporter). Then its final checkpoint is
registered as a model endpoint, served by ``transformers serve``, and answers a viewer
comment through the live reply path (``services.live_reply`` with that endpoint).

Part 2, platform overhead (target: >= 0.9x): HSA-SFT tokens/s through a StageRun beside a
bare TRL ``SFTTrainer`` on the same rows and config, in the same run, the two interleaved
(platform, bare, platform, bare), median over the steady steps (the first two steps of each
trainer are warm-up). Step times come from one timing callback added to both trainers.

    python -m bench training            # both parts
    BENCH_TRAINING_PARTS=overhead python -m bench training

The broker is in-memory here: nothing reaches a running ``make run`` worker.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PARTS = os.environ.get("BENCH_TRAINING_PARTS", "run,overhead").split(",")
TARGET_RUN_S = 15 * 60
TARGET_OVERHEAD = 0.9
OVERHEAD_ROUNDS = int(os.environ.get("BENCH_TRAINING_ROUNDS", "2"))
OVERHEAD_STEPS = int(os.environ.get("BENCH_TRAINING_STEPS", "12"))  # per trainer; 2 warm-up
WARMUP_STEPS = 2


class StepTimer:
    """A trainer callback that keeps each optimizer step's wall time and input tokens."""

    def __init__(self) -> None:
        self.steps: list[tuple[float, int]] = []
        self._started = 0.0
        self._tokens = 0

    def as_callback(self) -> Any:
        from transformers import TrainerCallback

        timer = self

        class _Callback(TrainerCallback):  # type: ignore[misc]
            def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                timer._started = time.perf_counter()
                timer._tokens = int(state.num_input_tokens_seen)

            def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                tokens = int(state.num_input_tokens_seen) - timer._tokens
                timer.steps.append((time.perf_counter() - timer._started, tokens))

        return _Callback()

    def steady_tokens_per_s(self) -> list[float]:
        return [tokens / seconds for seconds, tokens in self.steps[WARMUP_STEPS:] if seconds > 0]


def _setup() -> tuple[Any, Any]:
    os.environ["CELERY_BROKER_URL"] = "memory://"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from bench.database import setup_django

    setup_django()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("seed_demo", "--no-experiment", verbosity=0)
    from console.management.commands.seed_demo import DEMO_TRAINING_ROOM
    from harness_app.models import Room

    operator = get_user_model().objects.get(username="operator")
    return Room.objects.get(name=DEMO_TRAINING_ROOM), operator


def _run_config(room: Any, name: str, stages: list[str], params: dict[str, Any]) -> dict[str, Any]:
    from inference.workers.local_model import ensure_local_checkpoint

    version = room.harness.published_version
    return {
        "name": name,
        "base_model_dir": str(ensure_local_checkpoint().path),
        "harness_versions": [{"harness": room.harness.pk, "version": version.number}],
        "catalog_tasks": True,
        "hsa_policy": "hsa-train",
        "stages": stages,
        "params": params,
        "seed": 0,
    }


def _execute(run: Any) -> None:
    """Every stage of ``run`` in order, as the Celery task body runs it."""
    from training_app.models import StageRun
    from training_app.services import runs

    for stage in run.stage_runs.order_by("order"):
        StageRun.objects.filter(pk=stage.pk).update(status=StageRun.Status.QUEUED)
        result = runs.stage_execute(stage.pk)
        stage.refresh_from_db()
        print(
            f"  stage {stage.kind:<8} {result:<10} steps {stage.progress_step}/"
            f"{stage.progress_total}  {stage.error[:200]}"
        )
        if result != "succeeded":
            raise SystemExit(f"stage {stage.kind} ended {result}: {stage.error}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _live_reply_from(run: Any, room: Any) -> None:
    from experiments_app.routing import ArmChoice
    from experiments_app.services.live_replies import ReplyRequest, live_reply
    from inference.workers.profiles import transformers_serve_command
    from inference.workers.serve_local import server_environment
    from training_app.services import runs

    endpoint = runs.run_register_endpoint(run=run, name=f"bench-run-{run.pk}")
    port = _free_port()
    endpoint.base_url = f"http://127.0.0.1:{port}/v1"
    endpoint.timeout_s = 120.0
    endpoint.save(update_fields=["base_url", "timeout_s"])
    final = runs.run_final_dir(run)
    assert final is not None
    log = (ROOT / "var" / f"bench-serve-{run.pk}.log").open("wb")
    server = subprocess.Popen(
        transformers_serve_command(final, port=port),
        env=server_environment(),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        _wait_for_port(port, 180)
        room.reply_deadline_ms = 120_000
        room.save(update_fields=["reply_deadline_ms"])
        started = time.perf_counter()
        reply = live_reply(
            room=room,
            request=ReplyRequest(
                request_id=f"bench-{uuid.uuid4().hex}",
                uv_id="bench-uv",
                comment="how much is the merino wool crew sweater?",
                product_sku="SW-1001",
            ),
            choice=ArmChoice("harness", room.harness.published_version, endpoint),
        )
        seconds = time.perf_counter() - started
        print(
            f"  live reply from the trained checkpoint in {seconds:.1f} s: status "
            f"{reply.status}, skill {reply.skill or '-'}, fallback "
            f"{reply.fallback_reason or 'none'}, {reply.completion_tokens} completion tokens\n"
            f"  reply: {reply.reply[:200]!r}"
        )
    finally:
        server.terminate()
        server.wait(timeout=30)


def _wait_for_port(port: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise SystemExit(f"transformers serve did not listen on {port} within {timeout_s:.0f} s")


def _whole_run(room: Any, operator: Any) -> None:
    from console.management.commands.seed_demo import DEMO_TRAINING_PARAMS
    from training_app.services import runs

    config = _run_config(
        room,
        f"bench HAT {uuid.uuid4().hex[:6]}",
        ["hsa_sft", "opd", "hsa_rl"],
        DEMO_TRAINING_PARAMS,
    )
    run = runs.run_create(config=config, created_by=operator, start=False)
    started = time.perf_counter()
    _execute(run)
    seconds = time.perf_counter() - started
    run.refresh_from_db()
    verdict = "met" if seconds <= TARGET_RUN_S else "NOT met"
    print(
        f"three-stage CPU run (SmolLM2-135M, compact harness): {seconds / 60:.1f} min "
        f"(target <= {TARGET_RUN_S / 60:.0f} min: {verdict})"
    )
    for stage in run.stage_runs.order_by("order"):
        summary = {k: v for k, v in stage.summary.items() if not isinstance(v, dict | list)}
        print(f"  {stage.kind}: {summary}")
    _live_reply_from(run, room)


def _overhead(room: Any, operator: Any) -> None:
    from training_app.pipeline import sft
    from training_app.services import runs

    params = {
        "max_steps": OVERHEAD_STEPS,
        "save_steps": 1000,
        "max_length": 1024,
        "gradient_accumulation_steps": 1,
        # the held-out loss runs outside the timed steps: skip it, it only costs wall time
        "heldout_fraction": 0.0,
    }
    captured: dict[str, Any] = {}
    original_build = sft.build_trainer

    def build_with_timer(*args: Any, **kwargs: Any) -> Any:
        trainer = original_build(*args, **kwargs)
        trainer.args.include_num_input_tokens_seen = "non_padding"
        trainer.add_callback(captured["timer"].as_callback())
        captured.setdefault("rows", args)  # (params, model_dir, train_rows, ...)
        captured.setdefault("seed", kwargs["seed"])  # the same seed: the same batches
        return trainer

    platform: list[float] = []
    bare: list[float] = []
    sft.build_trainer = build_with_timer  # type: ignore[assignment]
    try:
        for round_number in range(OVERHEAD_ROUNDS):
            # alternate which goes first, so a drift in machine load does not favour one
            order = ("platform", "bare") if round_number % 2 == 0 else ("bare", "platform")
            if "rows" not in captured:
                order = ("platform", "bare")  # the bare trainer needs the platform's rows
            for which in order:
                if which == "platform":
                    # the platform: a StageRun executed as the Celery task does it
                    captured["timer"] = StepTimer()
                    config = _run_config(
                        room,
                        f"bench overhead {uuid.uuid4().hex[:6]}",
                        ["hsa_sft"],
                        {"hsa_sft": params},
                    )
                    _execute(runs.run_create(config=config, created_by=operator, start=False))
                    figures = captured["timer"].steady_tokens_per_s()
                    platform += figures
                else:
                    # bare TRL on the same rows and config: no reporter, database or heartbeat
                    timer = StepTimer()
                    sft_params, model_dir, train_rows = captured["rows"][:3]
                    out = ROOT / "var" / "bench-training" / f"bare-{round_number}"
                    trainer = original_build(
                        sft_params, model_dir, train_rows, [], out, [], seed=captured["seed"]
                    )
                    trainer.args.include_num_input_tokens_seen = "non_padding"
                    trainer.add_callback(timer.as_callback())
                    trainer.train()
                    figures = timer.steady_tokens_per_s()
                    bare += figures
                steps = (captured["timer"] if which == "platform" else timer).steps
                print(
                    f"  round {round_number + 1} {which:8s} median tokens/s "
                    f"{statistics.median(figures):.0f} over {len(figures)} steady steps; "
                    "per step (s, tokens): "
                    + ", ".join(f"({seconds:.1f}, {tokens})" for seconds, tokens in steps),
                    flush=True,
                )
    finally:
        sft.build_trainer = original_build  # type: ignore[assignment]
    ratio = statistics.median(platform) / statistics.median(bare)
    verdict = "met" if ratio >= TARGET_OVERHEAD else "NOT met"
    print(
        f"SFT tokens/s through a StageRun: median {statistics.median(platform):.0f} over "
        f"{len(platform)} steady steps; bare TRL: {statistics.median(bare):.0f} over {len(bare)} "
        f"-> {ratio:.3f}x (target >= {TARGET_OVERHEAD}x: {verdict})"
    )


def run() -> None:
    room, operator = _setup()
    if "run" in PARTS:
        _whole_run(room, operator)
    if "overhead" in PARTS:
        _overhead(room, operator)
