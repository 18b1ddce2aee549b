"""Every paginated API list: limit 1..500 and offset 0..1,000,000, anything else a 400
naming the parameter (a huge limit used to overflow PostgreSQL's bigint: a 500)."""

from __future__ import annotations

import inspect

import pytest
from rest_framework.test import APIClient

from console import api_urls
from console.api_pagination import MAX_LIMIT, MAX_OFFSET
from harness_app.models import Room
from tests.factories import ProductFactory
from training_app.models import EvalRun, EvalSet, Judge, ModelEndpoint

pytestmark = pytest.mark.django_db


def _eval_run() -> EvalRun:
    eval_set = EvalSet.objects.create(
        name="IFEval", kind=EvalSet.Kind.IFEVAL, file="eval_sets/x.jsonl", content_hash="x"
    )
    endpoint = ModelEndpoint.objects.create(name="base", base_url="http://127.0.0.1:9/v1")
    return EvalRun.objects.create(eval_set=eval_set, endpoint=endpoint, model_label="Base")


def _judge(run: EvalRun) -> Judge:
    from training_app.services.judges import judge_create

    endpoint = run.endpoint
    assert endpoint is not None
    return Judge.objects.first() or judge_create(name="judge", endpoint=endpoint)


def list_urls(room: Room) -> list[str]:
    harness_id = room.harness.pk
    run = EvalRun.objects.first() or _eval_run()
    return [
        "/api/v1/rooms/",
        f"/api/v1/rooms/{room.pk}/products/",
        f"/api/v1/rooms/{room.pk}/api-keys/",
        f"/api/v1/rooms/{room.pk}/webhook-secrets/",
        f"/api/v1/rooms/{room.pk}/latency-replays/",
        "/api/v1/harnesses/",
        f"/api/v1/harnesses/{harness_id}/versions/",
        "/api/v1/experiments/",
        "/api/v1/blind-tests/",
        "/api/v1/labeling/tests/",
        "/api/v1/endpoints/",
        "/api/v1/datasets/",
        "/api/v1/augmentation-jobs/",
        "/api/v1/training-runs/",
        "/api/v1/eval-sets/",
        "/api/v1/eval-runs/",
        f"/api/v1/eval-runs/{run.pk}/items/",
        "/api/v1/judges/",
        f"/api/v1/judges/{_judge(run).pk}/versions/",
        "/api/v1/judge-calibrations/",
        "/api/v1/people/",
        "/api/v1/people/audit/",
    ]


def test_the_list_above_is_every_paginated_api_list(room: Room) -> None:
    # every API view whose GET paginates, found through the URL conf
    paginated = []
    for include in api_urls.urlpatterns:
        for pattern in include.url_patterns:  # type: ignore[union-attr]
            view = getattr(pattern.callback, "view_class", None)
            get = getattr(view, "get", None)
            if get is not None and "paginate_queryset" in inspect.getsource(get):
                paginated.append(f"/api/v1/{pattern.pattern}")
    assert len(paginated) == len(list_urls(room)) == 22


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("limit=9223372036854775808", "limit"),
        (f"limit={MAX_LIMIT + 1}", "limit"),
        ("limit=0", "limit"),
        ("limit=-1", "limit"),
        ("limit=abc", "limit"),
        ("limit=%C2%B2", "limit"),  # "²": str.isdigit() says yes, int() says no
        ("offset=9223372036854775808", "offset"),
        (f"offset={MAX_OFFSET + 1}", "offset"),
        ("offset=-1", "offset"),
        ("offset=1.5", "offset"),
    ],
)
def test_bad_limit_or_offset_is_a_400_naming_it(
    operator_api: APIClient, published_room: Room, query: str, param: str
) -> None:
    for url in list_urls(published_room):
        response = operator_api.get(f"{url}?{query}")
        assert response.status_code == 400, (url, response.content[:200])
        (error,) = response.json()["errors"]
        assert error["field"] == param, url
        low = 1 if param == "limit" else 0
        high = MAX_LIMIT if param == "limit" else MAX_OFFSET
        assert error["message"].startswith(f"must be a whole number from {low} to {high}")


def test_limits_in_range_page_as_before(operator_api: APIClient, room: Room) -> None:
    for i in range(3):
        ProductFactory(room=room, sku=f"P-{i}")
    url = f"/api/v1/rooms/{room.pk}/products/"
    body = operator_api.get(f"{url}?limit={MAX_LIMIT}&offset=1").json()
    assert (body["count"], len(body["results"])) == (3, 2)
    body = operator_api.get(f"{url}?limit=1&offset={MAX_OFFSET}").json()
    assert (body["count"], body["results"]) == (3, [])
    assert len(operator_api.get(f"{url}?limit=&offset=").json()["results"]) == 3


def test_the_schema_states_the_bounds(operator_api: APIClient) -> None:
    schema = operator_api.get("/api/v1/schema/?format=json").json()
    params = {
        p["name"]: p["schema"] for p in schema["paths"]["/api/v1/rooms/"]["get"]["parameters"]
    }
    assert params["limit"] == {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}
    assert params["offset"] == {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET}
