"""Replay a request set through the full live-reply path and store a latency report.

    manage.py replay_latency --endpoint local-smollm2 \
        --requests experiments_app/demo_data/replay_100.jsonl --concurrency 1,4,8 \
        [--room ID] [--limit N] [--arm harness|react] [--queue]

The same job the console and the API start (``services.latency_replay``): the command queues
the report and runs it here, printing each level as it finishes (``--queue``: leaves it to
the ``eval`` worker instead). Every request goes through ``live_reply`` with
``source=replay`` and a fresh request id; the report stores, per level, P50/P95/max, the
share under 15 s, TTFT P50/P95 (first model call), fallbacks and the raw numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from experiments_app.latency import LevelSummary
from experiments_app.models import LatencyReport, LiveReply
from experiments_app.services.latency_replay import (
    MAX_CONCURRENCY,
    latency_replay_queue,
    latency_replay_run,
)
from harness_app.models import Room
from training_app import selectors as endpoint_selectors
from training_app.models import ModelEndpoint


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
        parser.add_argument(
            "--queue",
            action="store_true",
            help="queue the replay on the eval worker (its progress on the console's report "
            "page) instead of running it here",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        endpoint = self._endpoint(options["endpoint"])
        levels = parse_concurrency(options["concurrency"])
        if options["limit"] is not None and options["limit"] < 1:
            raise CommandError("--limit must be at least 1")
        room = self._room(options["room"], endpoint)
        try:
            report = latency_replay_queue(
                room=room,
                endpoint=endpoint,
                concurrency=levels,
                request_set="file",
                request_path=options["requests"],
                limit=options["limit"],
                arm=options["arm"] or "",
                enqueue=options["queue"],
            )
        except ValidationError as exc:
            # A request file's problems name their line (path:N: ...); the rest their option.
            problems = [m if name == "request_set" else f"--{name}: {m}" for name, m in _flat(exc)]
            raise CommandError("; ".join(problems)) from None
        assert report.harness_version is not None
        self.stdout.write(
            f"replaying {report.requests} request(s) on room {room.pk} ({room.name}), "
            f"{report.arm} arm, harness v{report.harness_version.number}, "
            f"endpoint {endpoint.name}"
        )
        if options["queue"]:
            self.stdout.write(
                self.style.SUCCESS(f"latency report {report.pk} queued on the eval worker")
            )
            return
        summaries: list[LevelSummary] = []

        def level_done(summary: LevelSummary) -> None:
            summaries.append(summary)
            level, wall_s = summary.concurrency, summary.wall_s
            self.stdout.write(f"  concurrency {level}: done in {wall_s:.1f} s")

        latency_replay_run(report.pk, on_level=level_done)
        report.refresh_from_db()
        if report.status != LatencyReport.Status.SUCCEEDED:
            raise CommandError(
                f"latency report {report.pk} {report.status}: {report.error or 'no error text'}"
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


def _flat(exc: ValidationError) -> list[tuple[str, str]]:
    return [(name, message) for name, messages in exc.message_dict.items() for message in messages]
