"""Runtime overhead of a live reply, excluding model time (issue #3 target: p50 <= 5 ms,
p99 <= 25 ms for the demo harness).

Every request goes through the whole path in-process: the Django middleware and DRF API layer
with room-key authentication, input validation, idempotency claim, arm lookup, agent build,
catalog tools, hooks, and the trace write, against an instant-response OpenAI-compatible
endpoint on loopback (three model calls per reply: load_skill, get_product, answer).

    overhead = end-to-end API latency - time inside the three model calls

Printed beside it, measured in the same run: the end-to-end latency itself, the model-call
time (the instant endpoint over HTTP: the model-free floor of the round trips), and the floor
of the API layer alone (an authenticated GET of the room's published harness).
"""

from __future__ import annotations

import json
import os
import statistics
import time
import uuid
from pathlib import Path

from bench.database import setup_django

ROOT = Path(__file__).resolve().parent.parent
REQUESTS = int(os.environ.get("BENCH_RUNTIME_REQUESTS", "400"))
PROFILE = os.environ.get("BENCH_PROFILE")  # a path: write a cProfile of the measured loop
# BENCH_WITH_EXPERIMENT=1: the room runs an A/B experiment (two Harness arms, 50/50), so every
# reply also goes through sticky assignment and exposure logging (issue #5: <= 1 extra query).
WITH_EXPERIMENT = os.environ.get("BENCH_WITH_EXPERIMENT") == "1"
WARMUP = 30


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def _row(label: str, values: list[float]) -> str:
    return (
        f"{label:<52} p50 {_percentile(values, 50):>7.2f} ms"
        f"   p99 {_percentile(values, 99):>7.2f} ms   mean {statistics.fmean(values):>7.2f} ms"
    )


def _start_experiment(room, version, endpoint, owner) -> None:  # type: ignore[no-untyped-def]
    from experiments_app import services as ab

    arms = [
        ab.ArmSpec("harness-a", "harness", version, endpoint, 5000),
        ab.ArmSpec("harness-b", "harness", version, endpoint, 5000),
    ]
    experiment = ab.experiment_create(
        spec=ab.ExperimentSpec(name=f"overhead {room.pk}", rooms=[room], arms=arms),
        created_by=owner,
    )
    ab.experiment_start(experiment=experiment)


def run() -> None:
    setup_django()
    from django.contrib.auth import get_user_model
    from django.test import Client

    from bench.instant_model import InstantModelServer
    from experiments_app.models import LiveReply
    from harness_app import services
    from harness_app.harness.serialization import harness_from_yaml
    from training_app.models import ModelEndpoint

    suffix = uuid.uuid4().hex[:8]
    owner = get_user_model().objects.create_user(username=f"bench-{suffix}")
    room = services.room_create(owner=owner, name=f"Bench room {suffix}")
    services.products_import(
        room=room, fmt="csv", data=(ROOT / "harness_app/demo_data/products.csv").read_bytes()
    )
    content = harness_from_yaml(
        (ROOT / "harness_app/demo_data/live_stream_harness.yaml").read_text()
    )
    version = services.harness_version_create(
        harness=room.harness, content=content, base_version=None, author=owner
    )
    services.harness_version_publish(version=version)
    _, key = services.api_key_create(room=room, name="bench", scopes=["reply"], created_by=owner)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")

    with InstantModelServer() as model:
        endpoint = ModelEndpoint.objects.create(
            name=f"instant-{suffix}", base_url=model.base_url, model_name="", timeout_s=5
        )
        room.reply_endpoint = endpoint
        room.save()
        if WITH_EXPERIMENT:
            _start_experiment(room, version, endpoint, owner)
        totals: list[float] = []
        model_ms: list[float] = []
        overheads: list[float] = []
        floors: list[float] = []
        fallbacks = 0
        import cProfile

        profiler = cProfile.Profile()
        for i in range(WARMUP + REQUESTS):
            if PROFILE and i == WARMUP:
                profiler.enable()
            body = {
                "request_id": f"b-{suffix}-{i}",
                "room": room.pk,
                "uv_id": f"uv-{i % 50}",
                "comment": "How much is the merino sweater?",
                "context": {"product_sku": "SW-1001", "recent_comments": ["hello", "nice!"]},
            }
            started = time.perf_counter()
            response = client.post(
                "/api/v1/live/reply", json.dumps(body), content_type="application/json"
            )
            total = (time.perf_counter() - started) * 1000
            floor_started = time.perf_counter()
            client.get(f"/api/v1/live/rooms/{room.pk}/harness/")
            floor = (time.perf_counter() - floor_started) * 1000
            if i < WARMUP:
                continue
            data = response.json()
            record = LiveReply.objects.only("model_ms").get(pk=data["trace_id"])
            fallbacks += int(data["fallback"])
            totals.append(total)
            model_ms.append(record.model_ms or 0.0)
            overheads.append(total - (record.model_ms or 0.0))
            floors.append(floor)
        if PROFILE:
            profiler.disable()
            profiler.dump_stats(PROFILE)
        print(
            f"{REQUESTS} replies (after {WARMUP} warm-up)"
            f"{', routed through a running A/B experiment' if WITH_EXPERIMENT else ''}, "
            "demo harness: "
            f"{len(content.skills)} skills, {len(content.tools)} tools, "
            f"{len(content.hooks)} hooks, 30 products; 3 model calls per reply; "
            f"fallbacks: {fallbacks}"
        )
        print(_row("runtime overhead (end-to-end - model calls)", overheads))
        print(_row("  end-to-end API latency, instant model", totals))
        print(_row("  model calls (instant endpoint over HTTP)", model_ms))
        print(_row("  floor: authenticated GET of the harness (API)", floors))
        target_ok = _percentile(overheads, 50) <= 5 and _percentile(overheads, 99) <= 25
        print(f"target p50 <= 5 ms and p99 <= 25 ms: {'met' if target_ok else 'NOT met'}")
