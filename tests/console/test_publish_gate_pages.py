"""The publish gate in the console: the room's Publish gate tab (operators set it, errors on
the field; the merchant reads it; other merchants get a 404), and the publish page: start
the check, see it running, then the deltas; a block shows the override form to operators
only, and the override publishes with its reason kept."""

from __future__ import annotations

import re

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


def test_the_gate_tab(
    compact_room, operator, operator_client, merchant_client, other_merchant_client
) -> None:
    gate_set = edits.build_gate_set(compact_room, operator)
    endpoint = ModelEndpoint.objects.create(name="fixed", base_url="http://127.0.0.1:9/v1")
    url = f"/rooms/{compact_room.pk}/publish-gate/"
    page = operator_client.get(url)
    assert page.status_code == 200 and b"No gate yet" in page.content
    assert gate_set.name.encode() in page.content
    form = {
        "enabled": "on",
        "eval_set": gate_set.pk,
        "endpoint": endpoint.pk,
        "item_limit": 8,
        "warn_drop_points": 20,
        "block_drop_points": 10,
    }
    refused = operator_client.post(url, form)
    assert refused.status_code == 400
    assert refused.context["form"].errors.keys() == {"block_drop_points"}
    assert not PublishGate.objects.exists()
    saved = operator_client.post(url, {**form, "warn_drop_points": 5, "variant_sets": ["t1"]})
    assert saved.status_code == 302
    gate = PublishGate.objects.get(room=compact_room)
    assert (gate.warn_drop_points, gate.variant_sets, gate.updated_by) == (5.0, ["t1"], operator)
    # the merchant reads it and cannot change it; another merchant does not see the room
    read = merchant_client.get(url)
    assert read.status_code == 200 and b"Operators change these" in read.content
    forbidden = merchant_client.post(url, {**form, "item_limit": 3, "warn_drop_points": 1})
    assert forbidden.status_code == 403
    gate.refresh_from_db()
    assert gate.item_limit == 8
    assert other_merchant_client.get(url).status_code == 404


def test_the_publish_page_runs_the_check_and_a_block_needs_an_operators_reason(
    compact_room, operator, operator_client, merchant_client
) -> None:
    gate_set = edits.build_gate_set(compact_room, operator)
    published = compact_room.harness.published_version
    qa = edits.document(gate_set)
    harness_id = compact_room.harness.pk
    with GoldModelServer(qa.items) as server:
        edits.configure_gate(compact_room, gate_set, server.base_url)
        broken = edits.draft(
            compact_room, edits.renamed(published.content, "get_product", "product_facts"), operator
        )
        url = f"/harnesses/{harness_id}/versions/{broken.number}/publish/"
        page = merchant_client.get(url)
        assert b"Run the safety check" in page.content
        assert b"Publish v2</button>" not in page.content
        # publishing without a check changes nothing and says why
        refused = merchant_client.post(url, follow=True)
        assert b"needs a safety check" in refused.content
        started = merchant_client.post(f"{url}check/")
        assert started.status_code == 302
        running = merchant_client.get(url)
        assert b'data-decided="0"' in running.content and b"0 / 16" in running.content
        status = merchant_client.get(f"{url}check/status/").json()
        assert status["decided"] is False and status["total"] == 16
        edits.finish_check(PublishCheck.objects.get(candidate=broken))
    blocked = merchant_client.get(url)
    text = blocked.content.decode()
    assert "Verdict: Block" in text and "-" in re.search(r"Δ points.*?</table>", text, re.S)[0]
    assert "override_reason" not in text  # merchants cannot override
    assert merchant_client.get(f"{url}check/status/").json()["decision"] == "block"
    operator_page = operator_client.get(url).content.decode()
    assert 'name="override_reason"' in operator_page
    # an empty reason is refused; a reason publishes and is kept
    operator_client.post(url, {"override_reason": "  "})
    broken.refresh_from_db()
    assert broken.status == HarnessVersion.Status.DRAFT
    done = operator_client.post(url, {"override_reason": "Model retrained for it"}, follow=True)
    assert b"Published version 2" in done.content
    check = PublishCheck.objects.get(candidate=broken)
    assert check.override_reason == "Model retrained for it" and check.overridden_by == operator
    tab = operator_client.get(f"/rooms/{compact_room.pk}/publish-gate/").content
    assert b"Model retrained for it" in tab


def test_a_room_without_a_gate_publishes_as_before(compact_room, operator, merchant_client):  # type: ignore[no-untyped-def]
    published = compact_room.harness.published_version
    version = edits.draft(compact_room, edits.reworded(published.content), operator)
    url = f"/harnesses/{compact_room.harness.pk}/versions/{version.number}/publish/"
    assert b"Safety check" not in merchant_client.get(url).content
    merchant_client.post(url)
    version.refresh_from_db()
    assert version.status == HarnessVersion.Status.PUBLISHED
