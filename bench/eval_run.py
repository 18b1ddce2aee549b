"""Eval-run throughput: items/s of a whole eval run (the ``eval`` task's body: the production
agent, tools over the catalog snapshot, rule checks, one database row per item, progress and
cancel checks) against an instant OpenAI-compatible endpoint at concurrency 4, beside the
bare client making the same HTTP calls (recorded from the run) at concurrency 4 in the same
process. Target (issue #12): >= 0.9x.

Environment: ``BENCH_EVAL_ROUNDS`` (3), ``BENCH_DATABASE_URL`` (bench/database.py).
"""

from __future__ import annotations

import json
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.database import setup_django
from bench.gold_model import GoldModelServer

CONCURRENCY = 4
ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "harness_app" / "demo_data"


class RecordingGoldServer(GoldModelServer):
    """The gold model server, keeping every conversation it answered."""

    def __init__(self, items: Any) -> None:
        super().__init__(items)
        self.bodies: list[dict[str, Any]] = []

    def next_action(self, messages: list[dict[str, Any]]) -> Any:
        with self._lock:
            self.bodies.append({"messages": messages})
        return super().next_action(messages)


def _room() -> Any:
    from django.contrib.auth import get_user_model

    from harness_app import services as harness_services
    from harness_app.harness.serialization import harness_from_yaml
    from harness_app.models import Room

    owner, _ = get_user_model().objects.get_or_create(username="bench-eval")
    room = Room.objects.filter(name="bench eval room").first()
    if room is None:
        room = harness_services.room_create(owner=owner, name="bench eval room")
        harness_services.products_import(
            room=room, data=(DEMO / "products.csv").read_bytes(), fmt="csv"
        )
        version = harness_services.harness_version_create(
            harness=room.harness,
            content=harness_from_yaml((DEMO / "compact_harness.yaml").read_text("utf-8")),
            base_version=None,
            author=owner,
            message="bench",
        )
        harness_services.harness_version_publish(version=version)
        room.harness.refresh_from_db()
    return room


def _platform_round(eval_set: Any, server: Any) -> tuple[float, int]:
    from training_app.models import ModelEndpoint
    from training_app.services import evals

    endpoint, _ = ModelEndpoint.objects.update_or_create(
        name="bench-gold",
        defaults={"base_url": server.base_url, "tool_mode": "text", "max_concurrency": 8},
    )
    run = evals.eval_run_create(
        eval_set=eval_set, model_label="bench", endpoint=endpoint, max_concurrency=CONCURRENCY
    )
    started = time.perf_counter()
    status = evals.eval_run_execute(run.pk)
    wall = time.perf_counter() - started
    assert status == "succeeded", (status, run.error)
    run.refresh_from_db()
    assert run.summary["passed"] == run.summary["n"], "the gold model must pass every item"
    return wall, run.summary["n"]


def _bare_round(base_url: str, bodies: list[dict[str, Any]], n_items: int) -> float:
    """The same calls with the bare client: one conversation per item, its calls in order
    (as the agent makes them), four conversations at a time."""
    from inference.clients.openai_compatible import ClientConfig, OpenAICompatibleClient

    client = OpenAICompatibleClient(ClientConfig(base_url=base_url))
    conversations: dict[str, list[list[dict[str, Any]]]] = {}
    for body in bodies:
        key = json.dumps(body["messages"][:2], sort_keys=True)
        conversations.setdefault(key, []).append(body["messages"])

    def converse(calls: list[list[dict[str, Any]]]) -> None:
        for messages in calls:
            client.chat(messages, max_tokens=256, temperature=0.0, stream=True)

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
        list(pool.map(converse, conversations.values()))
    wall = time.perf_counter() - started
    assert len(conversations) == n_items, (len(conversations), n_items)
    client.close()
    return wall


def run() -> None:
    setup_django()
    from training_app.evals.qa_set_document import loads_qa_set
    from training_app.models import EvalRun
    from training_app.services import evals

    room = _room()
    eval_set = evals.eval_set_build_qa(
        harness_version=room.harness.published_version, name="bench LS", seed=0
    )
    with eval_set.file.open("rb") as handle:
        items = loads_qa_set(handle.read()).items
    rounds = int(os.environ.get("BENCH_EVAL_ROUNDS", "3"))
    platform: list[float] = []
    bare: list[float] = []
    from training_app import tasks

    tasks.run_eval.delay = lambda *_a, **_k: None  # type: ignore[method-assign]
    with RecordingGoldServer(items) as server:
        _platform_round(eval_set, server)  # warm-up: imports, connections, caches
        recorded = list(server.bodies)
        for number in range(rounds):
            # alternate which side goes first; both replay the same conversations
            if number % 2:
                bare_wall = _bare_round(server.base_url, recorded, len(items))
                server.bodies.clear()
                wall, n = _platform_round(eval_set, server)
            else:
                server.bodies.clear()
                wall, n = _platform_round(eval_set, server)
                recorded = list(server.bodies)
                bare_wall = _bare_round(server.base_url, recorded, n)
            platform.append(n / wall)
            bare.append(n / bare_wall)
            print(
                f"  round {number + 1}: platform {n / wall:7.1f} items/s ({wall:.2f} s), "
                f"bare client {n / bare_wall:7.1f} items/s ({bare_wall:.2f} s), {n} items"
            )
    EvalRun.objects.filter(model_label="bench").delete()
    p, b = statistics.median(platform), statistics.median(bare)
    print(
        f"eval run, {len(items)} Live-Stream QA items, concurrency {CONCURRENCY}: "
        f"{p:.1f} items/s (median of {rounds}); bare client, same calls: {b:.1f} items/s; "
        f"ratio {p / b:.3f}x (target >= 0.9x)"
    )
