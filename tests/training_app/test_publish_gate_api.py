"""The publish gate over the API: who reads and who sets a room's gate (tenants apart),
settings refused with a 400 naming the field, a check started and read, and the publish API
obeying it (409 while unchecked or blocked; an operator's override reason lets it through)."""

from __future__ import annotations

from typing import Any

import pytest

from bench.gold_model import GoldModelServer
from harness_app.models import HarnessVersion
from tests import publish_gate_edits as edits
from training_app.models import ModelEndpoint, PublishCheck, PublishGate

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def artifacts(tmp_path, settings, monkeypatch):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "artifacts"
    from training_app.tasks import run_eval

    monkeypatch.setattr(run_eval, "delay", lambda run_id: None)


def _fields(response: Any) -> set[str]:
    return {e["field"] for e in response.json()["errors"]}


def test_gate_settings_operators_set_merchants_read_tenants_apart(
    compact_room, operator, operator_api, merchant_api, client, other_merchant
) -> None:
    from rest_framework.test import APIClient

    gate_set = edits.build_gate_set(compact_room, operator)
    ModelEndpoint.objects.create(name="fixed", base_url="http://127.0.0.1:9/v1")
    url = f"/api/v1/rooms/{compact_room.pk}/publish-gate/"
    body = {"eval_set_id": gate_set.pk, "endpoint": "fixed", "item_limit": 8}
    assert operator_api.get(url).status_code == 404  # no gate yet
    assert merchant_api.put(url, body, format="json").status_code == 403
    assert client.get(url).status_code in (401, 403)
    bad_cases: list[tuple[dict[str, Any], str]] = [
        ({"warn_drop_points": 20, "block_drop_points": 10}, "block_drop_points"),
        ({"eval_set_id": 999_999}, "eval_set_id"),
        ({"eval_set_id": 2**40}, "eval_set_id"),
        ({"endpoint": "nope\u0000"}, "endpoint"),
        ({"variant_sets": ["t9"]}, "variant_sets"),
        ({"item_limit": 10**30}, "item_limit"),
        ({"warn_drop_points": "NaN"}, "warn_drop_points"),
    ]
    for change, field in bad_cases:
        response = operator_api.put(url, {**body, **change}, format="json")
        assert response.status_code == 400, (change, response.content[:300])
        assert field in {f.split(".")[0] for f in _fields(response)}, (change, response.json())
    assert not PublishGate.objects.exists()
    saved = operator_api.put(url, {**body, "variant_sets": ["t1"]}, format="json")
    assert saved.status_code == 200, saved.json()
    assert saved.json()["variant_sets"] == ["t1"] and saved.json()["endpoint"] == "fixed"
    assert merchant_api.get(url).json()["item_limit"] == 8
    other = APIClient()
    other.force_authenticate(user=other_merchant)
    assert other.get(url).status_code == 404
    assert other.put(url, body, format="json").status_code in (403, 404)


def test_check_then_publish_obeys_the_gate(compact_room, operator, operator_api, merchant_api):  # type: ignore[no-untyped-def]
    gate_set = edits.build_gate_set(compact_room, operator)
    published = compact_room.harness.published_version
    harness_id = compact_room.harness.pk
    qa = edits.document(gate_set)
    with GoldModelServer(qa.items) as server:
        ModelEndpoint.objects.create(
            name="fixed", base_url=server.base_url, tool_mode="text", max_concurrency=8
        )
        operator_api.put(
            f"/api/v1/rooms/{compact_room.pk}/publish-gate/",
            {"eval_set_id": gate_set.pk, "endpoint": "fixed", "item_limit": 8},
            format="json",
        )
        broken = edits.draft(
            compact_room, edits.renamed(published.content, "get_product", "product_facts"), operator
        )
        publish = f"/api/v1/harnesses/{harness_id}/versions/{broken.number}/publish/"
        check_url = f"/api/v1/harnesses/{harness_id}/versions/{broken.number}/publish-check/"
        assert merchant_api.get(check_url).status_code == 404
        unchecked = merchant_api.post(publish, {}, format="json")
        assert unchecked.status_code == 409 and "safety check" in unchecked.json()["detail"]
        started = merchant_api.post(check_url, format="json")
        assert started.status_code == 201, started.json()
        assert set(started.json()["runs"]) == {"baseline", "candidate"}
        assert started.json()["decision"] == "" and started.json()["progress_done"] == 0
        running = merchant_api.post(publish, {}, format="json")
        assert running.status_code == 409 and "still running" in running.json()["detail"]
        edits.finish_check(PublishCheck.objects.get(pk=started.json()["id"]))
    read = merchant_api.get(check_url).json()
    assert read["decision"] == "block" and read["progress_done"] == read["progress_total"] == 16
    assert read["verdict"]["arms"][0]["newly_failing"]
    blocked = merchant_api.post(publish, {"override_reason": "ship it"}, format="json")
    assert blocked.status_code == 409 and "operator" in blocked.json()["detail"]
    too_long = operator_api.post(publish, {"override_reason": "x" * 2001}, format="json")
    assert too_long.status_code == 400 and _fields(too_long) == {"override_reason"}
    broken.refresh_from_db()
    assert broken.status == HarnessVersion.Status.DRAFT
    overridden = operator_api.post(publish, {"override_reason": "retrained"}, format="json")
    assert overridden.status_code == 200, overridden.json()
    assert PublishCheck.objects.get(pk=read["id"]).override_reason == "retrained"
    # the live version has no check against itself
    again = operator_api.post(check_url, format="json")
    assert again.status_code == 400 and _fields(again) == {"version"}
