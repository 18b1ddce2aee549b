"""Blind labeling: server time of the labeling page's next-pair request (issue #13 target:
p95 <= 50 ms with 10,000 pairs and 20 labelers labeling).

A blind test of 10,000 ready pairs (k = 3) and 20 assigned labelers. The labelers take turns:
each asks for its next pair (``GET /api/v1/labeling/tests/{token}/next/``, in-process through
Django's middleware and DRF, which reserves the pair and the prefetched one under row locks
and a keyed per-labeler order over the open pairs) and labels it (``POST .../labels/``).
Measured: the next-pair request, and the label request (which answers with the next pairs).
A second phase runs the 20 labelers in 20 threads at once (one process, so it includes
waiting for the GIL and for row locks).

Printed beside it, from the same run: the floor of one indexed SELECT of a pair row by its
token, and the floor of an authenticated API round trip (``GET /api/v1/labeling/tests/``).
"""

from __future__ import annotations

import os
import secrets
import statistics
import threading
import time
from pathlib import Path
from typing import Any

from bench.database import setup_django

ROOT = Path(__file__).resolve().parent.parent
PAIRS = int(os.environ.get("BENCH_BLIND_PAIRS", "10000"))
LABELERS = 20
ROUNDS = int(os.environ.get("BENCH_BLIND_ROUNDS", "20"))  # labels per labeler, sequential phase
THREAD_ROUNDS = int(os.environ.get("BENCH_BLIND_THREAD_ROUNDS", "10"))
TARGET_P95_MS = 50.0


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def _row(label: str, values: list[float]) -> str:
    return (
        f"{label:<58} p50 {_pct(values, 50):>7.2f} ms   p95 {_pct(values, 95):>7.2f} ms"
        f"   p99 {_pct(values, 99):>7.2f} ms   n {len(values)}"
    )


def _build() -> tuple[Any, list[Any]]:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from console.roles import Role
    from experiments_app.models import BlindPair, BlindSide, BlindTest, BlindTestLabeler
    from harness_app import services as harness_services
    from harness_app.harness.serialization import harness_from_yaml
    from training_app.models import ModelEndpoint

    users = get_user_model()
    run = secrets.token_hex(4)
    operator = users.objects.create(username=f"bench-blind-op-{run}", is_superuser=True)
    owner = users.objects.create(username=f"bench-blind-owner-{run}")
    room = harness_services.room_create(owner=owner, name=f"bench blind {run}")
    yaml_text = (ROOT / "harness_app" / "demo_data" / "live_stream_harness.yaml").read_text()
    version = harness_services.harness_version_create(
        harness=room.harness,
        content=harness_from_yaml(yaml_text),
        base_version=None,
        author=operator,
        message="bench",
    )
    endpoint = ModelEndpoint.objects.create(
        name=f"bench-blind-{run}", base_url="http://127.0.0.1:9/v1", model_name="m"
    )
    test = BlindTest.objects.create(
        name=f"bench {run}",
        room=room,
        compare=BlindTest.Compare.ENDPOINTS,
        request_source=BlindTest.RequestSource.UPLOAD,
        reply_source=BlindTest.ReplySource.STORED,
        labels_per_pair=3,
        status=BlindTest.Status.OPEN,
    )
    for side in ("one", "two"):
        BlindSide.objects.create(
            test=test, side=side, label=side, harness_version=version, endpoint=endpoint
        )
    BlindPair.objects.bulk_create(
        [
            BlindPair(
                test=test,
                position=i,
                comment=f"Viewer comment {i}: is the coat warm enough for winter?",
                context={"product": {"sku": f"SKU-{i:05d}", "title": "Wool coat"}},
                reply_one=f"Reply {i} from the first side. " * 6,
                reply_two=f"Reply {i} from the second side. " * 6,
                ready=True,
                labels_needed=3,
            )
            for i in range(PAIRS)
        ],
        batch_size=2000,
    )
    group = Group.objects.get_or_create(name=Role.LABELER.value)[0]
    labelers = []
    for i in range(LABELERS):
        user = users.objects.create(username=f"bench-blind-{run}-{i}")
        user.groups.add(group)
        labelers.append(user)
    BlindTestLabeler.objects.bulk_create(
        [BlindTestLabeler(test=test, labeler=u, assigned_by=operator) for u in labelers]
    )
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE experiments_app_blindpair")
    return test, labelers


def _clients(labelers: list[Any]) -> list[Any]:
    from rest_framework.test import APIClient

    out = []
    for user in labelers:
        client = APIClient()
        client.force_authenticate(user=user)
        out.append(client)
    return out


def _label_round(client: Any, test: Any, next_ms: list[float], label_ms: list[float]) -> None:
    from django.urls import reverse

    start = time.perf_counter()
    response = client.get(reverse("api:labeling-next", args=[test.token]))
    next_ms.append((time.perf_counter() - start) * 1000)
    assert response.status_code == 200, response.content
    pair = response.json()["pair"]
    if pair is None:
        return
    start = time.perf_counter()
    labeled = client.post(
        reverse("api:labeling-labels", args=[test.token]),
        {"pair": pair["token"], "choice": "a", "seconds": 3.0},
        format="json",
    )
    label_ms.append((time.perf_counter() - start) * 1000)
    assert labeled.status_code == 201, labeled.content


def run() -> None:
    setup_django()
    from django.db import connection
    from django.urls import reverse

    from experiments_app.models import BlindLabel, BlindPair, BlindTest

    print(f"building a blind test of {PAIRS:,} pairs, k=3, {LABELERS} labelers ...")
    test, labelers = _build()
    clients = _clients(labelers)
    try:
        # warm-up: every labeler's first look (reserves its two pairs)
        warm_next: list[float] = []
        warm_label: list[float] = []
        for client in clients:
            _label_round(client, test, warm_next, warm_label)
        next_ms: list[float] = []
        label_ms: list[float] = []
        for _ in range(ROUNDS):
            for client in clients:
                _label_round(client, test, next_ms, label_ms)

        threaded_next: list[float] = []
        threaded_label: list[float] = []
        lock = threading.Lock()

        def labeler_thread(client: Any) -> None:
            mine_next: list[float] = []
            mine_label: list[float] = []
            try:
                for _ in range(THREAD_ROUNDS):
                    _label_round(client, test, mine_next, mine_label)
            finally:
                connection.close()
            with lock:
                threaded_next.extend(mine_next)
                threaded_label.extend(mine_label)

        threads = [threading.Thread(target=labeler_thread, args=(c,)) for c in clients]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        # floors, same run
        tokens = list(BlindPair.objects.filter(test=test).values_list("token", flat=True)[:500])
        select_ms = []
        for token in tokens:
            start = time.perf_counter()
            BlindPair.objects.get(token=token)
            select_ms.append((time.perf_counter() - start) * 1000)
        list_ms = []
        for _ in range(200):
            start = time.perf_counter()
            clients[0].get(reverse("api:labeling-test-list"))
            list_ms.append((time.perf_counter() - start) * 1000)

        stored = BlindLabel.objects.filter(test=test).count()
        over_k = BlindPair.objects.filter(test=test, label_count__gt=3).count()
        p95 = _pct(next_ms, 95)
        verdict = "met" if p95 <= TARGET_P95_MS else "NOT met"
        print(_row("next pair (GET .../next/), 20 labelers taking turns", next_ms))
        print(_row("label (POST .../labels/, answers with the next pairs)", label_ms))
        print(_row("next pair, 20 labelers in 20 threads at once", threaded_next))
        print(_row("label, 20 labelers in 20 threads at once", threaded_label))
        print(_row("floor: one indexed SELECT of a pair row by token", select_ms))
        print(_row("floor: authenticated GET /api/v1/labeling/tests/", list_ms))
        print(f"labels stored {stored}, pairs past k {over_k}")
        print(f"target: next pair p95 <= {TARGET_P95_MS:.0f} ms -> {p95:.2f} ms, {verdict}")
        print(f"(mean next pair {statistics.fmean(next_ms):.2f} ms)")
    finally:
        BlindTest.objects.filter(pk=test.pk).delete()
