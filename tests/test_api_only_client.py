"""An API-only operator, end to end over HTTP (issue #14: everything an operator does in the
console, a machine can do through the API).

The ORM only makes the operator's account (there is no API for users). Everything else goes
through /api/v1/ with a token from POST /api/v1/auth/token/ (and, for the live-room side, a
room key the operator creates through the API): a room with its harness, two versions
published, a model endpoint registered and tested, an experiment whose arms pin the two
versions by id, started; live replies whose answers come from the pinned versions; view and
receipt events; the rollup; the readout, whose units and GMV means are checked against what
this test sent.

The rollup is the one step with no HTTP trigger: neither the console nor the API starts one.
Celery beat runs ``experiments_app.tasks.update_rollups`` every HAT_ROLLUP_INTERVAL_S (60 s by
default); this test calls that same task in-process instead of waiting for beat.
"""

from __future__ import annotations

import copy
import json
from collections import defaultdict
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from rest_framework.test import APIClient

from console.roles import Role
from tests.conftest import DEMO_HARNESS
from tests.factories import UserFactory
from tests.inference.scripted_server import ScriptedServer, SseReply, chunk

pytestmark = pytest.mark.django_db
API = "/api/v1"
PASSWORD = "pw-for-tests-1"  # UserFactory's
MIN_UNITS_PER_ARM = 3
MAX_VIEWERS = 60


def say(text: str) -> SseReply:
    return SseReply(
        [
            chunk(role="assistant", content=text),
            chunk(
                finish_reason="stop",
                usage={"prompt_tokens": 40, "completion_tokens": 6, "total_tokens": 46},
            ),
        ]
    )


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, (response.status_code, response.content[:2000])
    return json.loads(response.content)  # strict JSON: no NaN anywhere


def token_client() -> APIClient:
    """An operator's client with nothing but an API token (no session, no force-auth)."""
    UserFactory(username="api-operator", role=Role.OPERATOR)
    anonymous = APIClient()
    login = ok(
        anonymous.post(
            f"{API}/auth/token/",
            {"username": "api-operator", "password": PASSWORD},
            format="json",
        ),
        201,
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {login['token']}")
    return client


def key_client(raw_key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    return client


def test_an_api_only_operator_runs_an_experiment_end_to_end() -> None:
    from experiments_app.tasks import update_rollups

    api = token_client()
    assert api.get(f"{API}/rooms/").status_code == 200
    assert APIClient().get(f"{API}/rooms/").status_code == 401  # the token is what lets it in

    # --- a room (it comes with its harness) and a product --------------------------------
    room = ok(
        api.post(
            f"{API}/rooms/",
            {"name": "API room", "owner": "api-operator", "currency": "USD"},
            format="json",
        ),
        201,
    )
    room_id, harness_id = room["id"], room["harness_id"]
    assert room["published_version_id"] is None
    ok(
        api.post(
            f"{API}/rooms/{room_id}/products/",
            {"sku": "SW-1001", "title": "Merino Wool Crew Sweater", "price": "89.00", "stock": 5},
            format="json",
        ),
        201,
    )

    # --- two versions, each published ---------------------------------------------------
    versions = f"{API}/harnesses/{harness_id}/versions/"
    v1 = ok(
        api.post(
            versions,
            {"base_version": None, "message": "v1", "content_yaml": DEMO_HARNESS.read_text()},
            format="json",
        ),
        201,
    )
    assert ok(api.post(f"{versions}1/publish/", {}, format="json"))["id"] == v1["id"]
    content = copy.deepcopy(ok(api.get(f"{versions}1/"))["content"])
    content["skills"][0]["description"] = "Answers product questions. Use when a viewer asks."
    v2 = ok(
        api.post(versions, {"base_version": 1, "message": "v2", "content": content}, format="json"),
        201,
    )
    assert (v2["number"], v2["status"]) == (2, "draft") and v2["id"] != v1["id"]
    assert ok(api.post(f"{versions}2/publish/", {}, format="json"))["status"] == "published"
    room = ok(api.get(f"{API}/rooms/{room_id}/"))
    assert (room["published_version"], room["published_version_id"]) == (2, v2["id"])

    with ScriptedServer(models=["scripted-model"]) as server:
        # --- a model endpoint, registered and tested -------------------------------------
        endpoint = ok(
            api.post(
                f"{API}/endpoints/",
                {
                    "name": "scripted",
                    "base_url": server.base_url,
                    "model_name": "scripted-model",
                    "tool_mode": "native",
                    "timeout_s": 5,
                },
                format="json",
            ),
            201,
        )
        check = ok(api.post(f"{API}/endpoints/{endpoint['id']}/test/"))
        assert (check["ok"], check["models"]) == (True, ["scripted-model"])

        # --- an experiment whose arms pin the versions by id, started ------------------
        experiment = ok(
            api.post(
                f"{API}/experiments/",
                {
                    "name": "v1 vs v2",
                    "rooms": [room_id],
                    "unit": "uv",
                    "primary_metric": "gmv",
                    "secondary_metrics": ["views"],
                    "arms": [
                        {
                            "name": "control",
                            "kind": "harness",
                            "harness_version": v1["id"],
                            "endpoint": endpoint["id"],
                            "weight": 50,
                        },
                        {
                            "name": "treatment",
                            "kind": "harness",
                            "harness_version": v2["id"],
                            "endpoint": endpoint["id"],
                            "weight": 50,
                        },
                    ],
                },
                format="json",
            ),
            201,
        )
        experiment_id = experiment["id"]
        assert [(a["name"], a["harness_version"]) for a in experiment["arms"]] == [
            ("control", v1["id"]),
            ("treatment", v2["id"]),
        ]
        started = ok(api.post(f"{API}/experiments/{experiment_id}/start/"))
        assert started["status"] == "running"

        # --- the live-room backend: a room key, replies (exposures) and events ---------
        key = ok(
            api.post(
                f"{API}/rooms/{room_id}/api-keys/",
                {"name": "backend", "scopes": ["reply", "events"]},
                format="json",
            ),
            201,
        )
        backend = key_client(key["key"])
        arm_of_version = {v1["id"]: "control", v2["id"]: "treatment"}
        viewers: dict[str, list[str]] = defaultdict(list)  # arm -> UV ids
        for i in range(MAX_VIEWERS):
            uv = f"uv-{i}"
            server.enqueue(say(f"Hi {uv}, it is merino wool."))
            reply = ok(
                backend.post(
                    f"{API}/live/reply",
                    {
                        "request_id": f"req-{i}",
                        "room": room_id,
                        "uv_id": uv,
                        "comment": "What is the sweater made of?",
                        "context": {"product_sku": "SW-1001"},
                    },
                    format="json",
                )
            )
            assert (reply["reply"], reply["fallback"]) == (f"Hi {uv}, it is merino wool.", False)
            # the experiment's pinned version answers, not the room's published one
            viewers[arm_of_version[reply["harness_version_id"]]].append(uv)
            if min(len(viewers["control"]), len(viewers["treatment"])) >= MIN_UNITS_PER_ARM:
                break
        assert min(len(viewers["control"]), len(viewers["treatment"])) >= MIN_UNITS_PER_ARM

    now = datetime.now(UTC).isoformat()
    events: list[dict[str, Any]] = []
    gmv: dict[str, Decimal] = {}
    views: dict[str, int] = {}
    for arm, uvs in viewers.items():
        for j, uv in enumerate(uvs):
            views[uv] = 1 + j % 3
            for k in range(views[uv]):
                events.append(_event(f"{uv}-view-{k}", uv, room_id, "item_page_view", now))
            gmv[uv] = Decimal("89.00") * (j % 2) + (Decimal("10.00") if arm == "treatment" else 0)
            if gmv[uv]:
                events.append(_event(f"{uv}-buy", uv, room_id, "confirmed_receipt", now, gmv[uv]))
    ingested = ok(backend.post(f"{API}/events", {"events": events}, format="json"))
    assert (ingested["accepted"], ingested["rejected"]) == (len(events), 0)
    replayed = ok(backend.post(f"{API}/events", {"events": events}, format="json"))
    assert (replayed["accepted"], replayed["duplicate"]) == (0, len(events))  # idempotent

    # --- the rollup: what Celery beat runs (no HTTP trigger exists) ----------------------
    update_rollups(experiment_ids=[experiment_id])

    # --- the readout ---------------------------------------------------------------------
    readout = ok(api.get(f"{API}/experiments/{experiment_id}/readout"))
    assert readout["refreshed_at"] is not None
    assert {a["name"]: a["units"] for a in readout["arms"]} == {
        arm: len(uvs) for arm, uvs in viewers.items()
    }
    metrics = {m["metric"]: m["comparisons"][0] for m in readout["metrics"]}

    def mean(values: list[Any]) -> float:
        return float(sum(values)) / len(values)

    for metric, per_uv in (("gmv", gmv), ("views", views)):
        comparison = metrics[metric]
        assert comparison["arm"] == "treatment"
        assert (comparison["control_n"], comparison["treatment_n"]) == (
            len(viewers["control"]),
            len(viewers["treatment"]),
        )
        assert comparison["control_mean"] == pytest.approx(
            mean([per_uv[uv] for uv in viewers["control"]]), rel=1e-9
        )
        assert comparison["treatment_mean"] == pytest.approx(
            mean([per_uv[uv] for uv in viewers["treatment"]]), rel=1e-9
        )

    # and stopping it is an API call too
    assert ok(api.post(f"{API}/experiments/{experiment_id}/stop/"))["status"] == "stopped"


def _event(
    event_id: str,
    uv: str,
    room_id: int,
    kind: str,
    ts: str,
    amount: Decimal | None = None,
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "event_id": event_id,
        "uv_id": uv,
        "room": room_id,
        "type": kind,
        "ts": ts,
    }
    if amount is not None:
        event |= {"amount": str(amount), "currency": "USD"}
    return event
