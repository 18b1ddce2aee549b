"""Latency report pages (list, detail with plotly figures) and the locally served plotly.js."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from console.charts import (
    latency_histogram,
    latency_share_under_deadline,
    latency_ttft_by_concurrency,
)
from console.views.vendor import PLOTLY_JS_VERSION
from experiments_app.latency import summarize_level
from experiments_app.models import LatencyReport
from training_app.models import ModelEndpoint

pytestmark = pytest.mark.django_db


def make_report(room: Any, **fields: Any) -> LatencyReport:
    endpoint = ModelEndpoint.objects.get_or_create(name="gpu", base_url="http://x:1/v1")[0]
    levels = [
        summarize_level(
            concurrency=1,
            latencies_ms=[3000, 3400, 8000, 2000],
            ttfts_ms=[200, 300],
            fallbacks=0,
            wall_s=16.4,
        ).as_json(),
        summarize_level(
            concurrency=4,
            latencies_ms=[5000, 9000, 16000, 4000],
            ttfts_ms=[900],
            fallbacks=1,
            wall_s=9.0,
        ).as_json(),
    ]
    defaults = {
        "endpoint": endpoint,
        "room": room,
        "request_file": "replay_100.jsonl",
        "requests": 4,
        "results": levels,
    }
    return LatencyReport.objects.create(**(defaults | fields))


def test_list_shows_reports_with_their_headline_numbers(
    merchant_client: Client, room: Any, django_assert_max_num_queries: Any
) -> None:
    for _ in range(5):
        make_report(room)
    # session, user, groups, room, count, page; the form's default endpoint and its choices
    # (read twice: Select asks for the first choice to decide on `required`); no N+1
    with django_assert_max_num_queries(9):
        response = merchant_client.get(reverse("console:latency-list", args=[room.pk]))
    html = response.content.decode()
    assert response.status_code == 200
    assert html.count("<b>c=1</b>: 3200 / 7310 ms · 100%") == 5
    assert html.count("<b>c=4</b>: 7000 / 14950 ms · 75%") == 5


def test_detail_has_the_percentile_table_and_local_plotly(
    merchant_client: Client, room: Any
) -> None:
    report = make_report(room)
    html = merchant_client.get(
        reverse("console:latency-detail", args=[room.pk, report.pk])
    ).content.decode()
    # percentile table, by hand over the sorted 2000, 3000, 3400, 8000 ms:
    # P50 = (3000 + 3400) / 2 = 3200; P95: h = 2.85 -> 3400 + 0.85 * (8000 - 3400) = 7310
    assert "3200 ms" in html and "7310 ms" in html and "8000 ms" in html
    assert "75%" in html and "250 ms" in html  # under 15 s at c=4; TTFT P50 at c=1
    # plotly.js from this server, never a CDN
    src = reverse("console:plotly-js", args=[PLOTLY_JS_VERSION])
    assert f'<script src="{src}" defer></script>' in html
    # every script and stylesheet is served by this server (a bare "cdn" search also hit
    # random CSRF tokens and CSP nonces now and then)
    sources = re.findall(r'<(?:script|link)[^>]+(?:src|href)="([^"]+)"', html)
    assert sources and all(s.startswith("/") and not s.startswith("//") for s in sources)
    # the figures are embedded as JSON for the chart script
    for figure_id in ("latency-histogram", "latency-by-concurrency"):
        match = re.search(
            rf'<script id="{figure_id}" type="application/json">(.*?)</script>', html, re.S
        )
        assert match, figure_id
        figure = json.loads(match.group(1))
        assert figure["data"] and "layout" in figure
    assert 'data-plotly-figure="latency-histogram"' in html


def test_histogram_has_one_trace_per_level_in_seconds(room: Any) -> None:
    report = make_report(room)
    figure = latency_histogram(report.results)
    assert [trace["name"] for trace in figure["data"]] == ["concurrency 1", "concurrency 4"]
    assert figure["data"][0]["x"] == [3.0, 3.4, 8.0, 2.0]
    assert figure["layout"]["shapes"][0]["x0"] == 15.0  # the deadline line


def test_other_merchant_gets_404_on_reports(
    other_merchant_client: Client, room: Any, other_room: Any
) -> None:
    report = make_report(room)
    assert (
        other_merchant_client.get(reverse("console:latency-list", args=[room.pk])).status_code
        == 404
    )
    assert (
        other_merchant_client.get(
            reverse("console:latency-detail", args=[room.pk, report.pk])
        ).status_code
        == 404
    )
    assert (
        other_merchant_client.get(
            reverse("console:latency-detail", args=[other_room.pk, report.pk])
        ).status_code
        == 404
    )


def test_plotly_js_is_served_from_the_installed_package(client: Client) -> None:
    response = client.get(reverse("console:plotly-js", args=[PLOTLY_JS_VERSION]))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    assert "immutable" in response["Cache-Control"]
    head = b"".join(response.streaming_content)[:2000]  # type: ignore[attr-defined]
    assert b"plotly.js" in head and PLOTLY_JS_VERSION.encode() in head
    assert client.get(reverse("console:plotly-js", args=["0.0.1"])).status_code == 404


def test_empty_list(merchant_client: Client, room: Any) -> None:
    html = merchant_client.get(reverse("console:latency-list", args=[room.pk])).content.decode()
    assert "No latency reports yet." in html
    assert f"--room {room.pk}" in html
    assert 'id="start-replay"' in html


# --- starting a replay, its progress, cancel and charts ---------------------------------------


def figure(html: str, figure_id: str) -> dict[str, Any]:
    match = re.search(
        rf'<script id="{figure_id}" type="application/json">(.*?)</script>', html, re.S
    )
    assert match, figure_id
    return dict(json.loads(match.group(1)))


def test_the_form_starts_a_replay_on_the_eval_worker(
    operator_client: Client,
    published_room: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    endpoint = ModelEndpoint.objects.create(name="gpu", base_url="http://x:1/v1")
    ModelEndpoint.objects.create(name="off", base_url="http://x:2/v1", is_active=False)
    list_url = reverse("console:latency-list", args=[published_room.pk])
    html = operator_client.get(list_url).content.decode()
    assert f'<option value="{endpoint.pk}"' in html and ">off<" not in html
    with django_capture_on_commit_callbacks() as callbacks:
        response = operator_client.post(
            list_url,
            {
                "endpoint": endpoint.pk,
                "concurrency": "1, 4,8",
                "request_set": "demo",
                "limit": "20",
                "arm": "",
            },
        )
    report = LatencyReport.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse(
        "console:latency-detail", args=[published_room.pk, report.pk]
    )
    assert len(callbacks) == 1  # run_latency_replay, enqueued on commit
    assert report.status == "queued" and report.parameters["concurrency"] == [1, 4, 8]
    assert (report.requests, report.progress_total) == (20, 60)


def test_an_uploaded_jsonl_is_replayed(operator_client: Client, published_room: Any) -> None:
    endpoint = ModelEndpoint.objects.create(name="gpu", base_url="http://x:1/v1")
    upload = SimpleUploadedFile("mine.jsonl", b'{"comment": "a?"}\n{"comment": "b?"}\n')
    response = operator_client.post(
        reverse("console:latency-list", args=[published_room.pk]),
        {"endpoint": endpoint.pk, "concurrency": "2", "request_set": "upload", "upload": upload},
    )
    assert response.status_code == 302
    report = LatencyReport.objects.get()
    assert report.request_file == "upload: mine.jsonl" and report.requests == 2


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"concurrency": "1,x"}, "concurrency", "comma-separated whole numbers"),
        ({"concurrency": " , "}, "concurrency", "at least one level"),
        ({"concurrency": "1,1"}, "concurrency", "Each level may appear once."),
        ({"concurrency": "100"}, "concurrency", "between 1 and 64"),
        ({"request_set": "upload"}, "upload", "Attach the JSONL file"),
        (
            {"request_set": "upload", "upload": ("set.jsonl", b'{"comment": "a"}\nnope\n')},
            "upload",
            "set.jsonl:2: not valid JSON: Expecting value",
        ),
        ({"limit": "0"}, "limit", "greater than or equal to 1"),
        ({"endpoint": "999999"}, "endpoint", "Select a valid choice"),
    ],
)
def test_bad_input_is_shown_on_its_field_and_saves_nothing(
    operator_client: Client, published_room: Any, data: dict[str, Any], field: str, message: str
) -> None:
    endpoint = ModelEndpoint.objects.create(name="gpu", base_url="http://x:1/v1")
    post: dict[str, Any] = {"endpoint": endpoint.pk, "concurrency": "1,4", "request_set": "demo"}
    post |= data
    if isinstance(post.get("upload"), tuple):
        post["upload"] = SimpleUploadedFile(*post["upload"])
    response = operator_client.post(reverse("console:latency-list", args=[published_room.pk]), post)
    assert response.status_code == 400
    html = response.content.decode()
    block = re.search(rf'data-field="{field}">(.*?)</div>', html, re.S)
    assert block and "field-error" in block.group(1), html[:400]
    assert message in block.group(1)
    assert LatencyReport.objects.count() == 0


def test_a_merchant_picks_among_the_rooms_endpoints(
    merchant_client: Client, published_room: Any
) -> None:
    own = ModelEndpoint.objects.create(name="own", base_url="http://x:1/v1")
    ModelEndpoint.objects.create(name="shared-teacher", base_url="http://x:2/v1")
    published_room.reply_endpoint = own
    published_room.save()
    html = merchant_client.get(
        reverse("console:latency-list", args=[published_room.pk])
    ).content.decode()
    assert ">own<" in html and "shared-teacher" not in html
    assert f'<option value="{own.pk}" selected>' in html


def test_a_running_replay_shows_its_progress_bar_and_cancel_button(
    merchant_client: Client, room: Any
) -> None:
    report = make_report(
        room,
        status="running",
        progress_done=6,
        progress_total=8,
        results=make_report(room).results[:1],
    )
    html = merchant_client.get(
        reverse("console:latency-detail", args=[room.pk, report.pk])
    ).content.decode()
    status_url = reverse("console:latency-status", args=[room.pk, report.pk])
    assert f'data-status-url="{status_url}"' in html and 'data-finished="0"' in html
    assert 'data-levels="1"' in html
    assert 'aria-valuenow="75"' in html and 'style="width: 75%"' in html
    assert "6 / 8</span> requests" in html and ">Running</span>" in html
    assert "console/eval_progress.js" in html  # the job pages' polling script
    cancel_url = reverse("console:latency-cancel", args=[room.pk, report.pk])
    assert f'action="{cancel_url}"' in html
    # the polled JSON
    data = merchant_client.get(status_url).json()
    assert data == {
        "status": "running",
        "progress_done": 6,
        "progress_total": 8,
        "percent": 75,
        "finished": False,
        "levels": 1,
        "error": "",
    }
    # cancel: requested, the page says so, the button stays until the job stops
    response = merchant_client.post(cancel_url)
    assert response.status_code == 302
    report.refresh_from_db()
    assert report.cancel_requested and report.status == "running"
    html = merchant_client.get(
        reverse("console:latency-detail", args=[room.pk, report.pk])
    ).content.decode()
    assert "Cancel requested" in html


def test_a_failed_replay_shows_its_error_and_no_cancel(merchant_client: Client, room: Any) -> None:
    report = make_report(
        room, status="failed", progress_done=2, progress_total=8, results=[], error="boom: x"
    )
    html = merchant_client.get(
        reverse("console:latency-detail", args=[room.pk, report.pk])
    ).content.decode()
    assert "data-report-error>boom: x</div>" in html and "Cancel replay" not in html
    assert 'data-finished="1"' in html and "This report has no results." in html


def test_the_report_plots_percentiles_deadline_share_and_ttft(
    merchant_client: Client, room: Any
) -> None:
    report = make_report(room, status="succeeded", progress_done=8, progress_total=8)
    html = merchant_client.get(
        reverse("console:latency-detail", args=[room.pk, report.pk])
    ).content.decode()
    # plotly from this server, every chart's figure embedded
    src = reverse("console:plotly-js", args=[PLOTLY_JS_VERSION])
    assert f'<script src="{src}" defer></script>' in html
    sources = re.findall(r'<(?:script|link)[^>]+(?:src|href)="([^"]+)"', html)
    assert all(s.startswith("/") and not s.startswith("//") for s in sources)
    percentiles = figure(html, "latency-by-concurrency")
    assert [t["name"] for t in percentiles["data"]] == ["P50", "P95", "max"]
    assert percentiles["data"][0]["y"] == [3.2, 7.0]  # seconds
    assert percentiles["data"][2]["y"] == [8.0, 16.0]
    share = figure(html, "latency-share-under")
    assert share["data"][0]["x"] == ["1", "4"] and share["data"][0]["y"] == [100.0, 75.0]
    ttft = figure(html, "latency-ttft")
    assert [t["name"] for t in ttft["data"]] == ["TTFT P50", "TTFT P95"]
    assert ttft["data"][0]["y"] == [250.0, 900.0]  # (200 + 300) / 2; the one 900 ms
    assert figure(html, "latency-histogram")["data"]
    for figure_id in ("latency-by-concurrency", "latency-share-under", "latency-ttft"):
        assert f'data-plotly-figure="{figure_id}"' in html


def test_share_chart_floors_and_marks_partial_levels() -> None:
    levels = [
        {"concurrency": 1, "share_under_15s": 0.9996, "ttft_p50_ms": None, "ttft_p95_ms": None},
        {"concurrency": 8, "share_under_15s": None, "partial": True},
    ]
    share = latency_share_under_deadline(levels)["data"][0]
    assert share["x"] == ["1", "8 (partial)"] and share["y"] == [99.9, None]
    assert share["text"] == ["99.9%", None]
    ttft = latency_ttft_by_concurrency(levels)["data"]
    assert ttft[0]["y"] == [None, None]


def test_other_merchant_gets_404_on_status_and_cancel(
    other_merchant_client: Client, room: Any
) -> None:
    report = make_report(room, status="running", progress_total=8)
    for method, name in (("get", "latency-status"), ("post", "latency-cancel")):
        response = getattr(other_merchant_client, method)(
            reverse(f"console:{name}", args=[room.pk, report.pk])
        )
        assert response.status_code == 404, name
    response = other_merchant_client.post(
        reverse("console:latency-list", args=[room.pk]), {"concurrency": "1"}
    )
    assert response.status_code == 404
    report.refresh_from_db()
    assert not report.cancel_requested and LatencyReport.objects.count() == 1
