"""Replay a request set through the full live-reply path and store a latency report.

    manage.py replay_latency --endpoint local-smollm2 \
        --requests experiments_app/demo_data/replay_100.jsonl --concurrency 1,4,8 \
        [--room ID] [--limit N] [--arm harness|react]

Every request goes through ``live_reply`` (routing override, agent, tools, hooks, trace
storage) exactly as a live comment would, with ``source=replay`` and a fresh request id, so
idempotency never answers from an earlier run. Each concurrency level replays the whole set
with that many worker threads; the latency of a request is the wall time of its
``live_reply`` call as its worker saw it. The report stores, per level, P50/P95/max, the
share under 15 s, TTFT P50/P95 (first model call), fallbacks and the raw numbers.
"""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from experiments_app.latency import LevelSummary, summarize_level
from experiments_app.models import LatencyReport, LiveReply
from experiments_app.routing import ArmChoice
from experiments_app.services import ReplyRequest, live_reply
from harness_app.models import HarnessVersion, Room
from training_app import selectors as endpoint_selectors
from training_app.models import ModelEndpoint

MAX_CONCURRENCY = 256


@dataclass(frozen=True)
class ReplayItem:
    comment: str
    product_sku: str
    uv_id: str
    recent_comments: tuple[str, ...]


@dataclass(frozen=True)
class Outcome:
    latency_ms: float
    ttft_ms: float | None
    fallback: bool


def load_requests(path: Path, limit: int | None = None) -> list[ReplayItem]:
    """Read a JSONL request set; every problem names its line."""
    try:
        lines = path.read_text("utf-8").splitlines()
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from None
    items: list[ReplayItem] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CommandError(f"{path}:{number}: not valid JSON: {exc.msg}") from None
        if not isinstance(data, dict):
            raise CommandError(f"{path}:{number}: each line must be a JSON object")
        comment = data.get("comment")
        if not isinstance(comment, str) or not comment.strip():
            raise CommandError(f"{path}:{number}: 'comment' must be a non-empty string")
        recent = data.get("recent_comments", [])
        if not isinstance(recent, list) or not all(isinstance(c, str) for c in recent):
            raise CommandError(f"{path}:{number}: 'recent_comments' must be a list of strings")
        items.append(
            ReplayItem(
                comment=comment,
                product_sku=str(data.get("product_sku") or ""),
                uv_id=str(data.get("uv_id") or f"replay-uv-{number}"),
                recent_comments=tuple(recent),
            )
        )
        if limit is not None and len(items) >= limit:
            break
    if not items:
        raise CommandError(f"{path}: no requests in the file")
    return items


def parse_concurrency(text: str) -> list[int]:
    try:
        levels = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise CommandError(
            f"--concurrency must be comma-separated whole numbers like 1,4,8; got {text!r}"
        ) from None
    if not levels or any(not 1 <= level <= MAX_CONCURRENCY for level in levels):
        raise CommandError(f"--concurrency levels must be between 1 and {MAX_CONCURRENCY}")
    return levels


def replay_level(
    items: list[ReplayItem],
    *,
    room: Room,
    choice: ArmChoice,
    concurrency: int,
    run_id: str,
) -> LevelSummary:
    """Replay ``items`` with ``concurrency`` worker threads pulling from one queue."""
    work: queue.Queue[tuple[int, ReplayItem]] = queue.Queue()
    for index, item in enumerate(items):
        work.put((index, item))
    outcomes: list[Outcome | None] = [None] * len(items)
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            while True:
                try:
                    index, item = work.get_nowait()
                except queue.Empty:
                    return
                request = ReplyRequest(
                    request_id=f"replay-{run_id}-c{concurrency}-{index:05d}",
                    uv_id=item.uv_id,
                    comment=item.comment,
                    product_sku=item.product_sku,
                    recent_comments=item.recent_comments,
                )
                started = time.perf_counter()
                record = live_reply(
                    room=room, request=request, source=LiveReply.Source.REPLAY, choice=choice
                )
                elapsed_ms = (time.perf_counter() - started) * 1000
                outcomes[index] = Outcome(elapsed_ms, record.ttft_ms, record.fallback)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        finally:
            # Each thread has its own connection; leaving it open would keep a database
            # session alive after the command (and block dropping a test database).
            connection.close()

    started = time.perf_counter()
    threads = [
        threading.Thread(target=worker, name=f"replay-c{concurrency}-{n}", daemon=True)
        for n in range(concurrency)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall_s = time.perf_counter() - started
    if errors:
        raise CommandError(f"a replay worker failed: {errors[0]!r}")
    done = [o for o in outcomes if o is not None]
    return summarize_level(
        concurrency=concurrency,
        latencies_ms=[o.latency_ms for o in done],
        ttfts_ms=[o.ttft_ms for o in done if o.ttft_ms is not None],
        fallbacks=sum(o.fallback for o in done),
        wall_s=wall_s,
    )


class Command(BaseCommand):
    help = "Replay a JSONL request set through the live-reply path; store a latency report."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--endpoint", required=True, help="the model endpoint's name")
        parser.add_argument("--requests", required=True, type=Path, help="a JSONL request set")
        parser.add_argument(
            "--concurrency", default="1", help="comma-separated levels, e.g. 1,4,8 (default 1)"
        )
        parser.add_argument(
            "--room",
            type=int,
            default=None,
            help="room id (default: the one room with a published harness, preferring "
            "rooms that reply through this endpoint)",
        )
        parser.add_argument("--limit", type=int, default=None, help="replay the first N only")
        parser.add_argument(
            "--arm",
            choices=[LiveReply.Arm.HARNESS, LiveReply.Arm.REACT],
            default=None,
            help="agent to run (default: the room's serving arm)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        endpoint = self._endpoint(options["endpoint"])
        levels = parse_concurrency(options["concurrency"])
        if options["limit"] is not None and options["limit"] < 1:
            raise CommandError("--limit must be at least 1")
        items = load_requests(options["requests"], options["limit"])
        room = self._room(options["room"], endpoint)
        version = HarnessVersion.objects.get(
            harness=room.harness, status=HarnessVersion.Status.PUBLISHED
        )
        choice = ArmChoice(options["arm"] or room.serving_arm, version, endpoint)
        run_id = uuid.uuid4().hex[:12]

        self.stdout.write(
            f"replaying {len(items)} request(s) on room {room.pk} ({room.name}), "
            f"{choice.arm} arm, harness v{version.number}, endpoint {endpoint.name}"
        )
        summaries = []
        for level in levels:
            summary = replay_level(
                items, room=room, choice=choice, concurrency=level, run_id=run_id
            )
            summaries.append(summary)
            self.stdout.write(f"  concurrency {level}: done in {summary.wall_s:.1f} s")
        report = LatencyReport.objects.create(
            endpoint=endpoint,
            room=room,
            request_file=str(options["requests"])[:300],
            requests=len(items),
            results=[s.as_json() for s in summaries],
        )
        self.stdout.write(format_table(summaries))
        self.stdout.write(self.style.SUCCESS(f"latency report {report.pk} stored"))

    def _endpoint(self, name: str) -> ModelEndpoint:
        endpoint = endpoint_selectors.endpoint_get_by_name(name)
        if endpoint is None:
            known = ", ".join(endpoint_selectors.endpoints_list().values_list("name", flat=True))
            raise CommandError(
                f"no model endpoint named {name!r}; known endpoints: {known or 'none'}"
            )
        if not endpoint.is_active:
            raise CommandError(f"model endpoint {name!r} is not active")
        return endpoint

    def _room(self, room_id: int | None, endpoint: ModelEndpoint) -> Room:
        served = Room.objects.select_related("harness").filter(
            harness__published_version__isnull=False
        )
        if room_id is not None:
            room = Room.objects.select_related("harness").filter(pk=room_id).first()
            if room is None:
                raise CommandError(f"no room with id {room_id}")
            if room.harness.published_version_id is None:
                raise CommandError(f"room {room_id} has no published harness to replay")
            return room
        for candidates in (served.filter(reply_endpoint=endpoint), served):
            rooms = list(candidates.order_by("pk")[:2])
            if len(rooms) == 1:
                return rooms[0]
        listed = ", ".join(f"{r.pk} ({r.name})" for r in served.order_by("pk")[:20])
        raise CommandError(f"pass --room; rooms with a published harness: {listed or 'none'}")


def format_table(summaries: list[LevelSummary]) -> str:
    header = (
        f"{'conc':>5} {'n':>5} {'P50 ms':>10} {'P95 ms':>10} {'max ms':>10} "
        f"{'<15 s':>7} {'TTFT P50':>9} {'TTFT P95':>9} {'fallbk':>7}"
    )
    rows = [header, "-" * len(header)]
    for s in summaries:
        rows.append(
            f"{s.concurrency:>5} {s.requests:>5} {_ms(s.p50_ms):>10} {_ms(s.p95_ms):>10} "
            f"{_ms(s.max_ms):>10} {_pct(s.share_under_15s):>7} {_ms(s.ttft_p50_ms):>9} "
            f"{_ms(s.ttft_p95_ms):>9} {s.fallbacks:>7}"
        )
    return "\n".join(rows)


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"
