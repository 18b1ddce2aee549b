"""Latency replay jobs: queue a replay of a request set through the full live-reply path, and
the body the ``eval`` Celery task runs (``manage.py replay_latency`` runs the same body in
process). docs/RUNTIME.md, "Latency replay".

Every request goes through ``live_reply`` (routing override, agent, tools, hooks, trace
storage) exactly as a live comment would, with ``source=replay`` and a request id fresh to
each run, so idempotency never answers from an earlier one. Each concurrency level replays
the whole set with that many worker threads; the latency of a request is the wall time of
its ``live_reply`` call as its worker saw it. The statistics are ``experiments_app.latency``.

A queued report holds everything the run needs: the request items, the levels, the arm and
the harness version published when it was queued. Rejected input raises Django's
``ValidationError`` with a dict naming the field (a 400 naming it in the API, an error on the
console form's field); nothing is saved then.

The run claims its report with one conditional UPDATE (``queued``, or ``running`` whose
heartbeat ``updated_at`` is older than ``STALE_AFTER_S``: its worker died) and records its
``worker`` token; every later write is conditional on that token, so a worker that lost the
report stops writing. A heartbeat thread renews ``updated_at`` while a level runs. On
redelivery the levels already stored are kept and the rest run again with new request ids.
The cancel flag is read between requests: requests in flight finish, the level is stored as
``partial``, the report ends ``cancelled``.
"""

from __future__ import annotations

import json
import logging
import math
import os
import queue
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from experiments_app.latency import LevelSummary, summarize_level
from experiments_app.models import LatencyReport, LiveReply
from experiments_app.routing import ArmChoice
from experiments_app.services.live_replies import ReplyRequest, live_reply
from harness_app.models import Room
from training_app.models import ModelEndpoint

log = logging.getLogger(__name__)

Status = LatencyReport.Status

DEMO_REQUEST_FILE = "experiments_app/demo_data/replay_100.jsonl"
# Each worker thread holds its own database connection while a level runs: 64 leaves room
# under PostgreSQL's default max_connections (100) for the web and the other workers.
MAX_CONCURRENCY = 64
MAX_LEVELS = 8
MAX_REQUESTS = 2000  # per level; a replay makes levels x requests live replies
MAX_COMMENT_CHARS = 2000
MAX_REPORTED_PROBLEMS = 20
REQUEST_SETS = ("demo", "upload", "file")  # "file": a path on the server, the command only
ARMS = ("", LiveReply.Arm.HARNESS, LiveReply.Arm.REACT)
# The run's lease: renewed every HEARTBEAT_INTERVAL_S, taken over after STALE_AFTER_S.
HEARTBEAT_INTERVAL_S = 5.0
STALE_AFTER_S = 60.0
CANCEL_POLL_S = 0.25


# --- request sets -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ReplayItem:
    comment: str
    product_sku: str
    uv_id: str
    recent_comments: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "comment": self.comment,
            "product_sku": self.product_sku,
            "uv_id": self.uv_id,
            "recent_comments": list(self.recent_comments),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReplayItem:
        return cls(
            comment=str(data["comment"]),
            product_sku=str(data.get("product_sku") or ""),
            uv_id=str(data.get("uv_id") or ""),
            recent_comments=tuple(str(c) for c in data.get("recent_comments") or ()),
        )


class RequestSetError(ValueError):
    """A request set that cannot be replayed; ``problems`` say where (``source:line: ...``)."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)


def parse_request_lines(
    text: str, *, source: str, limit: int | None = None, max_requests: int = MAX_REQUESTS
) -> list[ReplayItem]:
    """The requests of a JSONL text: one object a line with ``comment`` (required),
    ``product_sku``, ``uv_id`` and ``recent_comments`` (a list of strings). The first
    ``limit`` only when given. Every problem names its line as ``source:N:`` (up to 20)."""
    items: list[ReplayItem] = []
    problems: list[str] = []
    count = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if limit is not None and count >= limit:
            break
        count += 1
        problem = _line_problem(line, number, items)
        if problem:
            problems.append(f"{source}:{number}: {problem}")
            if len(problems) >= MAX_REPORTED_PROBLEMS:
                break
    if not problems and not items:
        problems.append(f"{source}: no requests in the file")
    if not problems and len(items) > max_requests:
        problems.append(
            f"{source}: {len(items)} requests; at most {max_requests} (set a limit to replay "
            "the first ones)"
        )
    if problems:
        raise RequestSetError(problems)
    return items


def _line_problem(line: str, number: int, items: list[ReplayItem]) -> str:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        return f"not valid JSON: {exc.msg}"
    if not isinstance(data, dict):
        return "each line must be a JSON object"
    comment = data.get("comment")
    if not isinstance(comment, str) or not comment.strip():
        return "'comment' must be a non-empty string"
    if len(comment) > MAX_COMMENT_CHARS:
        return f"'comment' has {len(comment)} characters; at most {MAX_COMMENT_CHARS}"
    recent = data.get("recent_comments", [])
    if not isinstance(recent, list) or not all(isinstance(c, str) for c in recent):
        return "'recent_comments' must be a list of strings"
    items.append(
        ReplayItem(
            comment=comment,
            product_sku=str(data.get("product_sku") or ""),
            uv_id=str(data.get("uv_id") or f"replay-uv-{number}"),
            recent_comments=tuple(recent),
        )
    )
    return ""


def load_request_file(path: Path, *, limit: int | None = None) -> list[ReplayItem]:
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise RequestSetError([f"cannot read {path}: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError as exc:
        raise RequestSetError([f"{path}: not UTF-8 (byte {exc.start})"]) from None
    return parse_request_lines(text, source=str(path), limit=limit)


def demo_request_path() -> Path:
    return Path(settings.BASE_DIR) / DEMO_REQUEST_FILE


def concurrency_problem(levels: object) -> str:
    """Why ``levels`` is not a list of concurrency levels ("" when it is one)."""
    allowed = f"1 to {MAX_LEVELS} distinct whole numbers between 1 and {MAX_CONCURRENCY}"
    if not isinstance(levels, list | tuple) or not levels:
        return f"Give {allowed}, e.g. [1, 4, 8]."
    if len(levels) > MAX_LEVELS:
        return f"{len(levels)} levels; at most {MAX_LEVELS}."
    for level in levels:
        if isinstance(level, bool) or not isinstance(level, int):
            return f"{level!r} is not a whole number; give {allowed}."
        if not 1 <= level <= MAX_CONCURRENCY:
            return f"{level} is out of range; each level must be between 1 and {MAX_CONCURRENCY}."
    if len(set(levels)) != len(levels):
        return "Each level may appear once."
    return ""


# --- queueing ---------------------------------------------------------------------------------


def latency_replay_queue(
    *,
    room: Room,
    endpoint: ModelEndpoint | None,
    concurrency: Sequence[int],
    request_set: str,
    upload: bytes | None = None,
    upload_name: str = "",
    request_path: Path | None = None,
    limit: int | None = None,
    arm: str = "",
    created_by: Any = None,
    enqueue: bool = True,
) -> LatencyReport:
    """Validate and store a ``queued`` replay; the ``eval`` task runs it after the commit
    (``enqueue=False``: the caller runs it, as the command does). ``created_by`` None is the
    shell (an operator's rights). Request sets: ``demo`` (the shipped 100 requests),
    ``upload`` (``upload``: JSONL bytes) or ``file`` (``request_path``)."""
    from experiments_app.selectors.latency_reports import latency_replay_endpoints
    from harness_app.selectors import rooms_visible_to

    errors: dict[str, list[str]] = {}

    def add(name: str, message: str) -> None:
        errors.setdefault(name, []).append(message)

    if created_by is not None and not rooms_visible_to(created_by).filter(pk=room.pk).exists():
        raise ValidationError({"room": ["No such room."]})
    version = room.harness.published_version
    if version is None:
        add("room", f"Room {room.name!r} has no published harness version to replay.")
    if endpoint is None:
        add("endpoint", "Pick the model endpoint to replay against.")
    elif not endpoint.is_active:
        add("endpoint", f"Model endpoint {endpoint.name!r} is inactive; pick an active one.")
    elif not latency_replay_endpoints(room=room, user=created_by).filter(pk=endpoint.pk).exists():
        add(
            "endpoint",
            f"Model endpoint {endpoint.name!r} is not one this room replies through (its "
            "reply endpoint or an experiment arm's); an operator can replay on any endpoint.",
        )
    problem = concurrency_problem(list(concurrency))
    if problem:
        add("concurrency", problem)
    if arm not in ARMS:
        add("arm", "Choose harness, react, or leave it empty for the room's serving agent.")
    if limit is not None and (isinstance(limit, bool) or not 1 <= limit <= MAX_REQUESTS):
        add("limit", f"Give a whole number between 1 and {MAX_REQUESTS}, or none for all.")
    items: list[ReplayItem] = []
    request_file = ""
    if request_set not in REQUEST_SETS:
        add("request_set", "Choose demo (the shipped 100 requests) or upload (a JSONL file).")
    elif "limit" not in errors:
        try:
            items, request_file = _request_items(
                request_set, upload, upload_name, request_path, limit, add
            )
        except RequestSetError as exc:
            add("upload" if request_set == "upload" else "request_set", exc.problems[0])
            for more in exc.problems[1:]:
                add("upload" if request_set == "upload" else "request_set", more)
    if errors:
        raise ValidationError(errors)
    assert endpoint is not None and version is not None
    levels = [int(level) for level in concurrency]
    resolved_arm = arm or room.serving_arm
    with transaction.atomic():
        report = LatencyReport.objects.create(
            endpoint=endpoint,
            room=room,
            harness_version=version,
            arm=resolved_arm,
            request_file=request_file[:300],
            requests=len(items),
            request_items=[item.as_json() for item in items],
            parameters={
                "concurrency": levels,
                "limit": limit,
                "arm": arm,
                "request_set": request_set,
            },
            results=[],
            status=Status.QUEUED,
            progress_total=len(items) * len(levels),
            created_by=created_by,
        )
        if enqueue:
            from experiments_app.tasks import run_latency_replay

            report_id = report.pk
            transaction.on_commit(lambda: run_latency_replay.delay(report_id))
    return report


def _request_items(
    request_set: str,
    upload: bytes | None,
    upload_name: str,
    request_path: Path | None,
    limit: int | None,
    add: Callable[[str, str], None],
) -> tuple[list[ReplayItem], str]:
    if request_set == "demo":
        return load_request_file(demo_request_path(), limit=limit), DEMO_REQUEST_FILE
    if request_set == "file":
        if request_path is None:
            add("request_set", "A file request set needs the file's path.")
            return [], ""
        return load_request_file(request_path, limit=limit), str(request_path)
    name = Path(upload_name or "upload.jsonl").name
    if not upload:
        add("upload", "Attach a JSONL file of requests (one JSON object a line).")
        return [], ""
    cap = settings.HAT_MAX_UPLOAD_BYTES
    if len(upload) > cap:
        add("upload", f"The file is {len(upload)} bytes; at most {cap}.")
        return [], ""
    try:
        text = upload.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        add("upload", f"The file is not UTF-8 (byte {exc.start}).")
        return [], ""
    return parse_request_lines(text, source=name, limit=limit), f"upload: {name}"


def latency_replay_cancel(*, report: LatencyReport) -> LatencyReport:
    """Ask a replay to stop: a queued one is cancelled at once; a running one starts no new
    request, the requests in flight finish and its levels so far are kept."""
    unfinished = [Status.QUEUED, Status.RUNNING]
    LatencyReport.objects.filter(pk=report.pk, status__in=unfinished).update(cancel_requested=True)
    LatencyReport.objects.filter(pk=report.pk, status=Status.QUEUED).update(
        status=Status.CANCELLED, finished_at=timezone.now(), updated_at=timezone.now()
    )
    report.refresh_from_db()
    return report


# --- running ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    latency_ms: float
    ttft_ms: float | None
    fallback: bool


@dataclass(frozen=True)
class LevelRun:
    summary: LevelSummary
    complete: bool  # False: stopped (cancelled) before every request ran


@dataclass(frozen=True)
class RunOutcome:
    status: str
    # True: another live worker holds the report (a redelivered message retries later).
    busy: bool = False


class ReplayError(RuntimeError):
    """The replay cannot go on; the message is what the operator reads on the report."""


class LeaseLost(RuntimeError):
    """Another worker took the report over (this one's heartbeat went stale)."""


def replay_level(
    items: Sequence[ReplayItem],
    *,
    room: Room,
    choice: ArmChoice,
    concurrency: int,
    run_id: str,
    should_stop: Callable[[], bool] = lambda: False,
    on_request: Callable[[], None] = lambda: None,
) -> LevelRun:
    """Replay ``items`` with ``concurrency`` worker threads pulling from one queue. A thread
    asks ``should_stop`` before each request and calls ``on_request`` after each one (in
    its own thread, with its own database connection)."""
    work: queue.Queue[tuple[int, ReplayItem]] = queue.Queue()
    for index, item in enumerate(items):
        work.put((index, item))
    outcomes: list[Outcome | None] = [None] * len(items)
    errors: list[BaseException] = []
    halt = threading.Event()

    def worker() -> None:
        try:
            while not halt.is_set() and not should_stop():
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
                on_request()
        except BaseException as exc:  # reported by the calling thread
            errors.append(exc)
            halt.set()
        finally:
            # Each thread has its own connection; leaving it open would keep a database
            # session alive after the run (and block dropping a test database).
            connection.close()

    started = time.perf_counter()
    threads = [
        threading.Thread(target=worker, name=f"replay-c{concurrency}-{n}", daemon=True)
        for n in range(concurrency)
    ]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    except BaseException:
        # A time limit (or Ctrl-C) in the calling thread: start nothing new, let the
        # requests in flight finish (each within the room's deadline), then re-raise.
        halt.set()
        for thread in threads:
            thread.join()
        raise
    wall_s = time.perf_counter() - started
    if errors:
        if isinstance(errors[0], LeaseLost):
            raise errors[0]
        raise ReplayError(f"a replay worker failed: {type(errors[0]).__name__}: {errors[0]}")
    done = [o for o in outcomes if o is not None]
    summary = summarize_level(
        concurrency=concurrency,
        latencies_ms=[o.latency_ms for o in done],
        ttfts_ms=[o.ttft_ms for o in done if o.ttft_ms is not None],
        fallbacks=sum(o.fallback for o in done),
        wall_s=wall_s,
    )
    return LevelRun(summary, complete=len(done) == len(items))


def latency_replay_run(
    report_id: int, *, on_level: Callable[[LevelSummary], None] | None = None
) -> RunOutcome:
    """The body of the ``eval`` task (and of ``manage.py replay_latency``): claim the
    report, replay every level not stored yet, store each level as it finishes. Returns
    the final status, or ``busy`` when a live worker holds the report."""
    owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    if not _claim(report_id, owner):
        return _unclaimed(report_id)
    heartbeat = _Heartbeat(report_id, owner)
    heartbeat.start()
    status, error = Status.SUCCEEDED, ""
    interrupted: KeyboardInterrupt | None = None
    try:
        if _replay(report_id, owner, heartbeat, on_level):
            status = Status.CANCELLED
    except KeyboardInterrupt as exc:  # Ctrl-C on the command: keep what is stored
        status, error, interrupted = Status.CANCELLED, "Interrupted (Ctrl-C).", exc
    except LeaseLost:
        log.warning("latency replay %s: lease lost to another worker; stopping", report_id)
        return RunOutcome(_status(report_id))
    except Exception as exc:  # recorded on the report for the operator; the worker lives on
        log.exception("latency replay %s failed", report_id)
        status = Status.FAILED
        error = str(exc) if isinstance(exc, ReplayError) else f"{type(exc).__name__}: {exc}"
    finally:
        heartbeat.stop()
    _held(report_id, owner).update(
        status=status,
        error=error[:4000],
        finished_at=timezone.now(),
        updated_at=timezone.now(),
    )
    if interrupted is not None:
        raise interrupted
    return RunOutcome(_status(report_id))


def latency_replays_requeue_stale() -> list[int]:
    """Beat's watchdog: a running replay whose heartbeat is older than ``STALE_AFTER_S``
    lost its worker (killed, its message acknowledged or lost). One that was asked to
    cancel is settled as cancelled (keeping its stored levels); the others are enqueued
    again, and the new delivery takes the stale report over (``_claim``), replaying only
    the levels not stored yet. Returns the ids enqueued."""
    from experiments_app.tasks import run_latency_replay

    now = timezone.now()
    stale = LatencyReport.objects.filter(
        status=Status.RUNNING, updated_at__lt=now - timedelta(seconds=STALE_AFTER_S)
    )
    stale.filter(cancel_requested=True).update(
        status=Status.CANCELLED, worker="", finished_at=now, updated_at=now
    )
    requeued = list(stale.filter(cancel_requested=False).values_list("pk", flat=True))
    for report_id in requeued:
        run_latency_replay.delay(report_id)
    if requeued:
        log.warning("latency replays %s: heartbeat stale, enqueued again", requeued)
    return requeued


def _claim(report_id: int, owner: str) -> bool:
    now = timezone.now()
    stale = Q(status=Status.RUNNING, updated_at__lt=now - timedelta(seconds=STALE_AFTER_S))
    claimed = (
        LatencyReport.objects.filter(Q(status=Status.QUEUED) | stale, pk=report_id)
        .filter(cancel_requested=False)
        .update(
            status=Status.RUNNING,
            worker=owner,
            started_at=Coalesce(F("started_at"), now),
            error="",
            updated_at=now,
        )
    )
    return claimed == 1


def _unclaimed(report_id: int) -> RunOutcome:
    """Why the report could not be claimed: finished, cancelled before it ran (settled
    here), or held by a live worker (``busy``)."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=STALE_AFTER_S)
    waiting = Q(status=Status.QUEUED) | Q(status=Status.RUNNING, updated_at__lt=cutoff)
    LatencyReport.objects.filter(waiting, pk=report_id, cancel_requested=True).update(
        status=Status.CANCELLED, finished_at=now, updated_at=now
    )
    status = _status(report_id)
    return RunOutcome(status, busy=status == Status.RUNNING)


def _status(report_id: int) -> str:
    status = LatencyReport.objects.filter(pk=report_id).values_list("status", flat=True).first()
    return str(status or "")


def _held(report_id: int, owner: str) -> Any:
    return LatencyReport.objects.filter(pk=report_id, worker=owner, status=Status.RUNNING)


def _replay(
    report_id: int,
    owner: str,
    heartbeat: _Heartbeat,
    on_level: Callable[[LevelSummary], None] | None,
) -> bool:
    """Run the levels not stored yet; True when cancelled."""
    report = LatencyReport.objects.select_related(
        "room__harness", "endpoint", "harness_version"
    ).get(pk=report_id)
    endpoint, version = report.endpoint, report.harness_version
    if endpoint is None:
        raise ReplayError("The model endpoint was deleted after the replay was queued.")
    if not endpoint.is_active:
        raise ReplayError(f"Model endpoint {endpoint.name!r} was deactivated after queueing.")
    if version is None:
        raise ReplayError("The harness version was deleted after the replay was queued.")
    items = [ReplayItem.from_json(item) for item in report.request_items]
    levels = [int(level) for level in report.parameters.get("concurrency") or []]
    if not items or not levels:
        raise ReplayError("The report has no requests or no concurrency levels to replay.")
    choice = ArmChoice(report.arm or report.room.serving_arm, version, endpoint)
    # A redelivered run keeps the levels already stored (never a partial one).
    results = [
        r
        for r in report.results
        if isinstance(r, dict) and not r.get("partial") and r.get("concurrency") in levels
    ]
    stored = {r["concurrency"] for r in results}
    _held(report_id, owner).update(
        results=results, progress_done=len(stored) * len(items), updated_at=timezone.now()
    )
    cancel = _CancelPoll(report_id)

    def stop() -> bool:
        return heartbeat.lost.is_set() or cancel()

    def tick() -> None:
        if not _held(report_id, owner).update(
            progress_done=F("progress_done") + 1, updated_at=timezone.now()
        ):
            raise LeaseLost(report_id)

    run_id = f"r{report_id}-{owner[-8:]}"
    for level in levels:
        if level in stored:
            continue
        if stop():
            break
        run = replay_level(
            items,
            room=report.room,
            choice=choice,
            concurrency=level,
            run_id=run_id,
            should_stop=stop,
            on_request=tick,
        )
        if heartbeat.lost.is_set():
            raise LeaseLost(report_id)
        entry = run.summary.as_json()
        if not run.complete:
            entry["partial"] = True
        results.append(entry)
        if not _held(report_id, owner).update(results=results, updated_at=timezone.now()):
            raise LeaseLost(report_id)
        if on_level is not None:
            on_level(run.summary)
        if not run.complete:
            break
    if heartbeat.lost.is_set():
        raise LeaseLost(report_id)
    return len({r["concurrency"] for r in results if not r.get("partial")}) < len(levels)


class _CancelPoll:
    """The report's cancel flag, read at most every ``CANCEL_POLL_S`` (shared by threads)."""

    def __init__(self, report_id: int) -> None:
        self.report_id = report_id
        self.checked_at = -math.inf
        self.requested = False
        self.lock = threading.Lock()

    def __call__(self) -> bool:
        with self.lock:
            now = time.monotonic()
            if not self.requested and now - self.checked_at >= CANCEL_POLL_S:
                self.checked_at = now
                self.requested = bool(
                    LatencyReport.objects.filter(pk=self.report_id)
                    .values_list("cancel_requested", flat=True)
                    .first()
                )
            return self.requested


class _Heartbeat(threading.Thread):
    """Renews the report's ``updated_at`` while this worker holds it; sets ``lost`` when
    the conditional update finds it held by another worker (or finished elsewhere)."""

    def __init__(self, report_id: int, owner: str) -> None:
        super().__init__(name=f"heartbeat-latency-{report_id}", daemon=True)
        self.report_id = report_id
        self.owner = owner
        self.done = threading.Event()
        self.lost = threading.Event()

    def run(self) -> None:
        try:
            while not self.done.wait(HEARTBEAT_INTERVAL_S):
                try:
                    renewed = _held(self.report_id, self.owner).update(updated_at=timezone.now())
                except Exception:  # a database blip: try again next beat
                    log.exception("heartbeat of latency replay %s failed", self.report_id)
                    continue
                if not renewed:
                    self.lost.set()
                    return
        finally:
            connection.close()

    def stop(self) -> None:
        self.done.set()
        self.join(timeout=10)
