"""The latency replays API: queue (demo set, rows, a multipart JSONL upload), list, detail
with status / progress / results, cancel; bad input is a 400 naming the field and saves
nothing; another merchant's room is a 404 everywhere; labelers, room keys and anonymous
callers are refused; a replay run end to end through the eager eval task."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from experiments_app.models import LatencyReport
from tests.conftest import _client_for
from tests.experiments_app.test_latency_replay import EndlessServer, eager, jsonl  # noqa: F401
from training_app.models import ModelEndpoint

pytestmark = pytest.mark.django_db
Status = LatencyReport.Status


def url(room: Any, *tail: Any) -> str:
    return "/".join([f"/api/v1/rooms/{room.pk}/latency-replays", *map(str, tail)]) + "/"


@pytest.fixture
def endpoint(db: Any) -> ModelEndpoint:
    return ModelEndpoint.objects.create(name="gpu", base_url="http://127.0.0.1:9/v1")


def body(target: ModelEndpoint, **overrides: Any) -> dict[str, Any]:
    return {"endpoint": target.pk, "concurrency": [1, 4], "request_set": "demo"} | overrides


def test_queue_read_list_and_cancel(
    operator_api: APIClient,
    published_room: Any,
    endpoint: ModelEndpoint,
    operator: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks() as callbacks:
        created = operator_api.post(url(published_room), body(endpoint, limit=10), format="json")
    assert created.status_code == 201, created.content
    assert len(callbacks) == 1  # the eval task, enqueued on commit
    data = created.json()
    expected = {
        "room": published_room.pk,
        "endpoint": endpoint.pk,
        "endpoint_name": "gpu",
        "harness_version": 1,
        "arm": published_room.serving_arm,
        "request_set": "demo",
        "request_file": "experiments_app/demo_data/replay_100.jsonl",
        "requests": 10,
        "concurrency": [1, 4],
        "limit": 10,
        "status": "queued",
        "progress_done": 0,
        "progress_total": 20,
        "percent": 0,
        "finished": False,
        "cancel_requested": False,
        "error": "",
        "results": [],
        "created_by": operator.pk,
        "started_at": None,
        "finished_at": None,
    }
    assert {k: data[k] for k in expected} == expected
    detail = operator_api.get(url(published_room, data["id"]))
    assert detail.status_code == 200 and detail.json() == data
    listed = operator_api.get(url(published_room)).json()
    assert [r["id"] for r in listed["results"]] == [data["id"]] and listed["count"] == 1
    cancelled = operator_api.post(url(published_room, data["id"], "cancel"))
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled" and cancelled.json()["finished"] is True
    assert cancelled.json()["finished_at"] is not None


def test_rows_and_a_multipart_upload(
    operator_api: APIClient, published_room: Any, endpoint: ModelEndpoint
) -> None:
    rows = [
        {"comment": "How much?", "product_sku": "SW-1001", "recent_comments": ["hi"]},
        {"comment": "Ships when?"},
    ]
    created = operator_api.post(
        url(published_room), body(endpoint, request_set="upload", rows=rows), format="json"
    )
    assert created.status_code == 201, created.content
    report = LatencyReport.objects.get(pk=created.json()["id"])
    assert report.requests == 2 and report.request_file == "upload: rows"
    assert report.request_items[0]["recent_comments"] == ["hi"]
    assert report.request_items[1]["uv_id"] == "replay-uv-2"  # one per line, as in a file
    upload = SimpleUploadedFile("set.jsonl", jsonl(3), content_type="application/jsonl")
    created = operator_api.post(
        url(published_room),
        {"endpoint": endpoint.pk, "concurrency": [2], "request_set": "upload", "upload": upload},
        format="multipart",
    )
    assert created.status_code == 201, created.content
    assert created.json()["requests"] == 3 and created.json()["request_file"] == "upload: set.jsonl"


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"concurrency": []}, "concurrency", ""),
        ({"concurrency": [0]}, "concurrency.0", "greater than or equal to 1"),
        ({"concurrency": [1, 65]}, "concurrency.1", "less than or equal to 64"),
        ({"concurrency": ["x"]}, "concurrency.0", "valid integer"),
        ({"concurrency": [1, 1]}, "concurrency", "Each level may appear once"),
        ({"concurrency": list(range(1, 10))}, "concurrency", "no more than 8"),
        ({"concurrency": "1,4"}, "concurrency", "list"),
        ({"endpoint": 999_999}, "endpoint", "No model endpoint with id 999999"),
        ({"endpoint": "gpu"}, "endpoint", "valid integer"),
        ({"request_set": "file"}, "request_set", "not a valid choice"),
        ({"limit": 0}, "limit", "greater than or equal to 1"),
        ({"limit": 2001}, "limit", "less than or equal to 2000"),
        ({"arm": "gpt"}, "arm", "not a valid choice"),
        ({"request_set": "upload"}, "rows", "needs rows"),
        ({"request_set": "upload", "rows": [{"comment": " "}]}, "rows.0.comment", "blank"),
        ({"request_set": "upload", "rows": [{"sku": "x"}]}, "rows.0.comment", "required"),
        (
            {"request_set": "upload", "rows": [{"comment": "a", "recent_comments": "x"}]},
            "rows.0.recent_comments",
            "list",
        ),
    ],
)
def test_bad_input_is_a_400_naming_the_field(
    operator_api: APIClient,
    published_room: Any,
    endpoint: ModelEndpoint,
    overrides: dict[str, Any],
    field: str,
    message: str,
) -> None:
    response = operator_api.post(url(published_room), body(endpoint, **overrides), format="json")
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert [e["field"] for e in errors] == [field], errors
    assert message in errors[0]["message"]
    assert LatencyReport.objects.count() == 0


def test_service_refusals_are_400s_too(
    operator_api: APIClient, room: Any, published_room: Any, endpoint: ModelEndpoint
) -> None:
    endpoint.is_active = False
    endpoint.save()
    response = operator_api.post(url(published_room), body(endpoint), format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "endpoint", "message": "Model endpoint 'gpu' is inactive; pick an active one."}
    ]
    upload = SimpleUploadedFile("set.jsonl", b'{"comment": "ok"}\nnot json\n')
    response = operator_api.post(
        url(published_room),
        {"endpoint": endpoint.pk, "concurrency": [1], "request_set": "upload", "upload": upload},
        format="multipart",
    )
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert [e["field"] for e in errors] == ["endpoint", "upload"]
    assert errors[1]["message"] == "set.jsonl:2: not valid JSON: Expecting value"
    assert LatencyReport.objects.count() == 0


def test_merchant_replays_own_room_on_its_endpoints_only(
    merchant_api: APIClient, published_room: Any, endpoint: ModelEndpoint
) -> None:
    other = ModelEndpoint.objects.create(name="teacher", base_url="http://127.0.0.1:9/v1")
    published_room.reply_endpoint = endpoint
    published_room.save()
    response = merchant_api.post(url(published_room), body(other), format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "endpoint"
    assert "not one this room replies through" in response.json()["errors"][0]["message"]
    response = merchant_api.post(url(published_room), body(endpoint), format="json")
    assert response.status_code == 201, response.content


def test_another_merchants_room_is_a_404_everywhere(
    published_room: Any, other_room: Any, other_merchant: Any, endpoint: ModelEndpoint
) -> None:
    report = LatencyReport.objects.create(
        endpoint=endpoint, room=published_room, request_file="x", requests=1, results=[]
    )
    client = _client_for(other_merchant)
    for method, path in [
        ("get", url(published_room)),
        ("post", url(published_room)),
        ("get", url(published_room, report.pk)),
        ("post", url(published_room, report.pk, "cancel")),
        # the report through a room the caller owns: still not theirs
        ("get", url(other_room, report.pk)),
        ("post", url(other_room, report.pk, "cancel")),
    ]:
        response = getattr(client, method)(path, body(endpoint), format="json")
        assert response.status_code == 404, (method, path, response.status_code)
    report.refresh_from_db()
    assert not report.cancel_requested and LatencyReport.objects.count() == 1


def test_labelers_room_keys_and_anonymous_are_refused(
    published_room: Any, labeler: Any, endpoint: ModelEndpoint
) -> None:
    from harness_app import services as harness_services

    _key, raw = harness_services.api_key_create(
        room=published_room, name="backend", scopes=["reply", "events"], created_by=None
    )
    keyed = APIClient()
    keyed.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    clients = {"anonymous": APIClient(), "labeler": _client_for(labeler), "room key": keyed}
    for who, client in clients.items():
        for method in ("get", "post"):
            response = getattr(client, method)(url(published_room), body(endpoint), format="json")
            assert response.status_code in (401, 403), (who, method, response.status_code)
    assert LatencyReport.objects.count() == 0


def test_list_query_count_is_bounded(
    operator_api: APIClient,
    published_room: Any,
    endpoint: ModelEndpoint,
    operator: Any,
    django_assert_max_num_queries: Any,
) -> None:
    for _ in range(12):
        LatencyReport.objects.create(
            endpoint=endpoint,
            room=published_room,
            harness_version=published_room.harness.published_version,
            created_by=operator,
            request_file="x",
            requests=1,
            results=[{"concurrency": 1, "p50_ms": 1.0, "latencies_ms": [1.0]}],
        )
    with django_assert_max_num_queries(6):
        response = operator_api.get(url(published_room))
    results = response.json()["results"]
    assert len(results) == 12 and results[0]["harness_version"] == 1
    # the list carries the summaries, the detail the raw numbers too
    assert "latencies_ms" not in results[0]["results"][0]
    assert (
        results[0]["results"][0]["p95_ms"] is None and results[0]["results"][0]["partial"] is False
    )
    detail = operator_api.get(url(published_room, results[0]["id"])).json()
    assert detail["results"][0]["latencies_ms"] == [1.0]


def test_every_route_is_in_the_schema(operator_api: APIClient) -> None:
    paths = operator_api.get("/api/v1/schema/?format=json").json()["paths"]
    base = "/api/v1/rooms/{room_id}/latency-replays/"
    assert set(paths[base]) >= {"get", "post"}
    assert "get" in paths[base + "{report_id}/"]
    assert "post" in paths[base + "{report_id}/cancel/"]


@pytest.mark.django_db(transaction=True)
def test_a_replay_queued_over_the_api_runs_and_reports(
    operator_api: APIClient,
    published_room: Any,
    eager: None,  # noqa: F811
) -> None:
    with EndlessServer() as server:
        server.delay_s = 0.01
        scripted = ModelEndpoint.objects.create(
            name="scripted", base_url=server.base_url, model_name="scripted-model", timeout_s=5
        )
        created = operator_api.post(
            url(published_room),
            body(scripted, concurrency=[1, 2], limit=3),
            format="json",
        )
    assert created.status_code == 201, created.content
    data = operator_api.get(url(published_room, created.json()["id"])).json()
    assert data["status"] == "succeeded", data["error"]
    assert (data["progress_done"], data["progress_total"], data["percent"]) == (6, 6, 100)
    assert [level["concurrency"] for level in data["results"]] == [1, 2]
    assert all(len(level["latencies_ms"]) == 3 for level in data["results"])
    assert data["finished"] is True and data["started_at"] and data["finished_at"]
