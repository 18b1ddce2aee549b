"""Latency report pages (list, detail with plotly figures) and the locally served plotly.js."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from console.charts import latency_histogram
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
    with django_assert_max_num_queries(6):  # session, user, groups, room, count, page
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
