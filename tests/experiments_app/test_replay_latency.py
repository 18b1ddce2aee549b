"""`manage.py replay_latency` over a scripted model server: every request goes through the
full live-reply path, the stored report's numbers match numpy on its stored latencies, and
worker threads leave no database connection behind. Also the shipped 100-request set."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from experiments_app.models import LatencyReport, LiveReply
from tests.inference.scripted_server import ScriptedServer, SseReply, chunk
from training_app.models import ModelEndpoint

ROOT = Path(__file__).resolve().parents[2]
DEMO_DIR = ROOT / "experiments_app" / "demo_data"
CATALOG = ROOT / "harness_app" / "demo_data" / "products.csv"


def slow_say(text: str, delay_s: float) -> SseReply:
    usage = {"prompt_tokens": 40, "completion_tokens": 6, "total_tokens": 46}
    return SseReply(
        [chunk(role="assistant", content=text), chunk(finish_reason="stop", usage=usage)],
        first_delay_s=delay_s,
    )


def write_requests(path: Path, n: int) -> Path:
    lines = [
        {
            "comment": f"How much is item {i}?",
            "product_sku": "SW-1001",
            "uv_id": f"uv-{i}",
            "recent_comments": ["hi"],
        }
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def open_connections() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
        return int(cursor.fetchone()[0])


@pytest.mark.django_db(transaction=True)
def test_replay_stores_a_report_whose_numbers_match_numpy(
    published_room: Any, tmp_path: Path
) -> None:
    requests = write_requests(tmp_path / "set.jsonl", 5)
    with ScriptedServer() as server:
        # 5 requests x 2 levels; the delays spread the latencies out
        server.enqueue(*(slow_say(f"Reply {i}", 0.01 * (i % 5 + 1)) for i in range(10)))
        endpoint = ModelEndpoint.objects.create(
            name="scripted", base_url=server.base_url, model_name="scripted-model", timeout_s=5
        )
        before = open_connections() if connection.vendor == "postgresql" else None
        out = StringIO()
        call_command(
            "replay_latency",
            "--endpoint",
            "scripted",
            "--requests",
            str(requests),
            "--concurrency",
            "1,2",
            "--room",
            str(published_room.pk),
            stdout=out,
        )
        calls = len(server.requests)
    # every request went through the model, with a fresh request id per replay
    assert calls == 10
    replies = LiveReply.objects.filter(room=published_room, source="replay")
    assert replies.count() == 10
    assert len(set(replies.values_list("request_id", flat=True))) == 10
    assert not replies.filter(fallback=True).exists()
    assert set(replies.values_list("endpoint", flat=True)) == {endpoint.pk}
    # the stored numbers are the percentiles of the stored raw latencies
    report = LatencyReport.objects.get()
    assert (report.endpoint, report.room, report.requests) == (endpoint, published_room, 5)
    # the same job the console and the API queue, run in the command's process
    assert report.status == "succeeded" and report.progress_done == report.progress_total == 10
    assert report.parameters["request_set"] == "file" and report.request_file == str(requests)
    assert [level["concurrency"] for level in report.results] == [1, 2]
    for level in report.results:
        latencies = np.asarray(level["latencies_ms"])
        assert latencies.size == 5 and (latencies > 10).all()  # at least the 10 ms delay
        assert level["p50_ms"] == pytest.approx(np.percentile(latencies, 50), abs=1e-3)
        assert level["p95_ms"] == pytest.approx(np.percentile(latencies, 95), abs=1e-3)
        assert level["max_ms"] == pytest.approx(latencies.max())
        assert level["share_under_15s"] == 1.0
        assert level["fallbacks"] == 0
        ttfts = np.asarray(level["ttfts_ms"])
        assert ttfts.size == 5
        assert level["ttft_p50_ms"] == pytest.approx(np.percentile(ttfts, 50), abs=1e-3)
        assert level["ttft_p95_ms"] == pytest.approx(np.percentile(ttfts, 95), abs=1e-3)
    # the printed table has a row per level
    table = out.getvalue()
    assert "P50 ms" in table and f"latency report {report.pk} stored" in table
    assert len([line for line in table.splitlines() if line.strip().startswith(("1 ", "2 "))]) == 2
    # every worker thread closed its database connection
    if before is not None:
        assert open_connections() == before


@pytest.mark.django_db(transaction=True)
def test_an_outage_is_counted_as_fallbacks(published_room: Any, tmp_path: Path) -> None:
    requests = write_requests(tmp_path / "set.jsonl", 3)
    ModelEndpoint.objects.create(name="down", base_url="http://127.0.0.1:9/v1", timeout_s=1)
    call_command(
        "replay_latency",
        "--endpoint",
        "down",
        "--requests",
        str(requests),
        "--concurrency",
        "2",
        stdout=StringIO(),
    )
    level = LatencyReport.objects.get().results[0]
    assert level["fallbacks"] == 3 and level["ttfts_ms"] == [] and level["ttft_p50_ms"] is None


@pytest.mark.django_db
def test_unknown_endpoint_names_the_known_ones(tmp_path: Path) -> None:
    ModelEndpoint.objects.create(name="alpha", base_url="http://x:1/v1")
    ModelEndpoint.objects.create(name="beta", base_url="http://x:2/v1")
    with pytest.raises(
        CommandError, match="no model endpoint named 'gamma'; known endpoints: alpha, beta"
    ):
        call_command(
            "replay_latency",
            "--endpoint",
            "gamma",
            "--requests",
            str(write_requests(tmp_path / "r.jsonl", 1)),
        )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"comment": "ok"}\nnot json\n', r"set.jsonl:2: not valid JSON"),
        ('{"comment": ""}\n', r"set.jsonl:1: 'comment' must be a non-empty string"),
        ('{"comment": "a", "recent_comments": "x"}\n', r":1: 'recent_comments' must be a list"),
        ("\n\n", r"no requests in the file"),
    ],
)
def test_bad_request_files_name_the_line(
    published_room: Any, tmp_path: Path, content: str, message: str
) -> None:
    ModelEndpoint.objects.create(name="e", base_url="http://x:1/v1")
    path = tmp_path / "set.jsonl"
    path.write_text(content)
    with pytest.raises(CommandError, match=message):
        call_command("replay_latency", "--endpoint", "e", "--requests", str(path))
    assert LatencyReport.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("levels", ["0", "1,x", "", "1,999"])
def test_bad_concurrency_is_refused(published_room: Any, tmp_path: Path, levels: str) -> None:
    ModelEndpoint.objects.create(name="e", base_url="http://x:1/v1")
    with pytest.raises(CommandError, match="--concurrency"):
        call_command(
            "replay_latency",
            "--endpoint",
            "e",
            "--requests",
            str(write_requests(tmp_path / "r.jsonl", 1)),
            "--concurrency",
            levels,
        )


@pytest.mark.django_db
def test_room_is_required_when_it_is_ambiguous(
    published_room: Any, other_room: Any, operator: Any, demo_harness: Any, tmp_path: Path
) -> None:
    from harness_app import services

    version = services.harness_version_create(
        harness=other_room.harness,
        content=demo_harness,
        base_version=None,
        author=operator,
        message="v1",
    )
    services.harness_version_publish(version=version)
    ModelEndpoint.objects.create(name="e", base_url="http://x:1/v1")
    with pytest.raises(CommandError, match="pass --room; rooms with a published harness"):
        call_command(
            "replay_latency",
            "--endpoint",
            "e",
            "--requests",
            str(write_requests(tmp_path / "r.jsonl", 1)),
        )


# --- the shipped request set -------------------------------------------------------------


def test_shipped_replay_file_has_100_realistic_requests_on_the_demo_catalog() -> None:
    import csv

    skus = {row["sku"] for row in csv.DictReader(CATALOG.open(encoding="utf-8"))}
    lines = [json.loads(line) for line in (DEMO_DIR / "replay_100.jsonl").read_text().splitlines()]
    assert len(lines) == 100
    for line in lines:
        assert set(line) == {"comment", "product_sku", "uv_id", "recent_comments"}
        assert line["comment"].strip() and "{" not in line["comment"]
        assert line["product_sku"] in skus or line["product_sku"] == ""
        assert isinstance(line["recent_comments"], list)
    comments = " ".join(line["comment"].lower() for line in lines)
    for topic in ("how much", "size", "coupon", "ship", "return", "stock"):
        assert topic in comments, topic
    assert len({line["comment"] for line in lines}) > 50  # not one question repeated


def test_the_generator_rebuilds_the_committed_file_byte_for_byte(tmp_path: Path) -> None:
    import runpy

    module = runpy.run_path(str(DEMO_DIR / "make_replay_file.py"))
    out = tmp_path / "replay.jsonl"
    module["main"](["--out", str(out)])
    assert out.read_bytes() == (DEMO_DIR / "replay_100.jsonl").read_bytes()


@pytest.mark.django_db
def test_queue_leaves_the_replay_to_the_eval_worker(
    published_room: Any, tmp_path: Path, django_capture_on_commit_callbacks: Any
) -> None:
    ModelEndpoint.objects.create(name="e", base_url="http://x:1/v1")
    out = StringIO()
    with django_capture_on_commit_callbacks() as callbacks:
        call_command(
            "replay_latency",
            "--endpoint",
            "e",
            "--requests",
            str(write_requests(tmp_path / "r.jsonl", 3)),
            "--concurrency",
            "1,4",
            "--queue",
            stdout=out,
        )
    report = LatencyReport.objects.get()
    assert report.status == "queued" and report.progress_total == 6
    assert len(callbacks) == 1  # run_latency_replay.delay, on commit
    assert f"latency report {report.pk} queued on the eval worker" in out.getvalue()


@pytest.mark.django_db
def test_the_services_refusals_name_the_option(published_room: Any, tmp_path: Path) -> None:
    ModelEndpoint.objects.create(name="e", base_url="http://x:1/v1")
    with pytest.raises(CommandError, match="--concurrency: Each level may appear once"):
        call_command(
            "replay_latency",
            "--endpoint",
            "e",
            "--requests",
            str(write_requests(tmp_path / "r.jsonl", 1)),
            "--concurrency",
            "2,2",
        )
    assert LatencyReport.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_failed_replay_is_a_command_error_and_a_failed_report(
    published_room: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from experiments_app.services import latency_replay

    def broken(**kwargs: Any) -> Any:
        raise RuntimeError("disk full")

    monkeypatch.setattr(latency_replay, "live_reply", broken)
    ModelEndpoint.objects.create(name="e", base_url="http://x:1/v1")
    with pytest.raises(CommandError, match=r"latency report \d+ failed: a replay worker failed"):
        call_command(
            "replay_latency",
            "--endpoint",
            "e",
            "--requests",
            str(write_requests(tmp_path / "r.jsonl", 2)),
            stdout=StringIO(),
        )
    report = LatencyReport.objects.get()
    assert report.status == "failed" and "RuntimeError: disk full" in report.error
