"""The harness-edit safety gate: golds follow a renamed tool; the verdict's thresholds; and
end to end, a publish that renames a tool the QA set needs, answered by a model that still
calls the old name, is blocked (an operator may override, with the reason kept), while a
harmless edit goes through."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from bench.gold_model import GoldModelServer
from harness_app import services as harness_services
from harness_app.harness.serialization import harness_from_dict
from harness_app.hsa.trajectory import trajectory_from_dict
from harness_app.models import HarnessVersion
from tests import publish_gate_edits as edits
from training_app.evals.publish_gate import (
    GateThresholds,
    edit_renames,
    gate_verdict,
    retarget_qa_set,
)
from training_app.models import EvalSet, ModelEndpoint, PublishCheck, PublishGate
from training_app.services import evals
from training_app.services import publish_gate as gate_services

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def artifacts(tmp_path, settings, monkeypatch):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "artifacts"
    from training_app.tasks import run_eval

    monkeypatch.setattr(run_eval, "delay", lambda run_id: None)


@pytest.fixture
def gate_set(compact_room, operator) -> EvalSet:  # type: ignore[no-untyped-def]
    return edits.build_gate_set(compact_room, operator)


# --- pure -------------------------------------------------------------------------------------


def test_a_renamed_tool_is_followed_and_a_removed_one_is_not(gate_set) -> None:
    qa = edits.document(gate_set)
    (original,) = qa.harnesses.values()
    moved_harness = edits.renamed(dict(original), "get_product", "product_facts")
    mapping = edit_renames(harness_from_dict(original), harness_from_dict(moved_harness))
    assert mapping.tool_renames == {"get_product": "product_facts"}
    moved = retarget_qa_set(qa, moved_harness, name="moved")
    uses = [i for i in qa.items if "get_product" in str(i.gold)]
    assert uses, "the set must need the tool"
    for before, after in zip(qa.items, moved.items, strict=True):
        names = [c.name for c in trajectory_from_dict(after.gold).tool_calls]
        assert "get_product" not in names
        assert len(names) == len(trajectory_from_dict(before.gold).tool_calls)
        assert after.base_id == before.base_id and after.facts == before.facts
    # a removed tool stays in the gold (the edit broke those items); two tools with the same
    # operation added for one removed are ambiguous and not paired
    removed = copy.deepcopy(dict(original))
    removed["tools"] = [t for t in removed["tools"] if t["name"] != "get_product"]
    assert edit_renames(harness_from_dict(original), harness_from_dict(removed)).is_identity
    twice = copy.deepcopy(moved_harness)
    twice["tools"].append({**copy.deepcopy(twice["tools"][0]), "name": "product_facts_2"})
    assert edit_renames(harness_from_dict(original), harness_from_dict(twice)).is_identity


@pytest.mark.parametrize(
    ("candidate_fails", "expected"),
    [
        (0, "pass"),
        (1, "warn"),  # 5 points: at the warning threshold
        (3, "warn"),  # 15 points, but a resample without a failure is too likely (3.9%)
        (5, "block"),  # 25 points and the interval excludes no change
    ],
)
def test_the_verdict_follows_the_thresholds(candidate_fails: int, expected: str) -> None:
    baseline = {f"i{k}": True for k in range(20)}
    candidate = {k: int(k[1:]) >= candidate_fails for k in baseline}
    verdict = gate_verdict(baseline, {"candidate": candidate}, GateThresholds(5.0, 10.0))
    assert verdict.decision == expected
    (arm,) = verdict.arms
    assert arm.delta_points == pytest.approx(-5.0 * candidate_fails)
    assert len(arm.newly_failing) == candidate_fails
    assert (verdict.reasons != ()) == (expected != "pass")


def test_a_big_drop_the_interval_cannot_confirm_only_warns_and_variants_never_block() -> None:
    # 1 of 4 items fails: -25 points, but a resample without it is likely: not confirmed
    baseline = {f"i{k}": True for k in range(4)}
    one_fails = {**baseline, "i0": False}
    assert gate_verdict(baseline, {"candidate": one_fails}).decision == "warn"
    many = {f"i{k}": True for k in range(20)}
    broken = dict.fromkeys(many, False)
    verdict = gate_verdict(many, {"candidate": many, "candidate_t1": broken})
    assert [a.decision for a in verdict.arms] == ["pass", "warn"]
    assert verdict.decision == "warn"
    with pytest.raises(ValueError, match="candidate"):
        gate_verdict(many, {"candidate_t1": many})


def test_thresholds_name_their_problem() -> None:
    assert set(GateThresholds(-1, 10).problems()) == {"warn_drop_points"}
    assert set(GateThresholds(20, 10).problems()) == {"block_drop_points"}
    assert GateThresholds().problems() == {}


# --- end to end -------------------------------------------------------------------------------


def test_a_rename_that_breaks_the_models_answers_is_blocked_and_a_harmless_edit_is_not(
    compact_room, gate_set, operator, merchant
) -> None:
    published = compact_room.harness.published_version
    qa = edits.document(gate_set)
    # a model trained on the published harness: it answers every item with its gold, in the
    # published harness's tool names
    with GoldModelServer(qa.items) as server:
        edits.configure_gate(compact_room, gate_set, server.base_url)
        broken = edits.draft(
            compact_room, edits.renamed(published.content, "get_product", "product_facts"), operator
        )
        harmless = edits.draft(compact_room, edits.reworded(published.content), operator)
        # without a check the gate refuses to publish
        with pytest.raises(gate_services.PublishGateStopped, match="safety check"):
            harness_services.harness_version_publish(version=broken, by=operator)
        blocked = edits.run_check(broken, operator)
        passed = edits.run_check(harmless, operator)

    # the rename: the model still calls get_product, so the items needing it fail
    assert blocked.decision == "block", blocked.verdict
    (arm,) = blocked.verdict["arms"]
    assert arm["baseline_rate"] == 100.0 and arm["delta_points"] <= -50.0
    assert arm["ci_high"] < 0
    needs_tool = {i.base_id for i in qa.items[:8] if "get_product" in str(i.gold)}
    assert set(arm["newly_failing"]) == needs_tool
    # the harmless edit changes nothing the model needs
    assert passed.decision == "pass", passed.verdict
    assert passed.verdict["arms"][0]["delta_points"] == 0.0

    # a block refuses the publish, and a merchant cannot override it
    with pytest.raises(gate_services.PublishGateStopped, match="blocked"):
        harness_services.harness_version_publish(version=broken, by=operator)
    with pytest.raises(gate_services.PublishGateStopped, match="operator"):
        harness_services.harness_version_publish(
            version=broken, by=merchant, override_reason="ship it"
        )
    broken.refresh_from_db()
    assert broken.status == HarnessVersion.Status.DRAFT
    # the harmless edit goes live; the rename's check was against the old live version, so
    # it needs a new check before it can be published
    harness_services.harness_version_publish(version=harmless, by=merchant)
    harmless.refresh_from_db()
    assert harmless.status == HarnessVersion.Status.PUBLISHED
    with pytest.raises(gate_services.PublishGateStopped, match="first"):
        harness_services.harness_version_publish(version=broken, by=operator)
    # an operator overrides a block with a reason, which is kept
    again = _run_check_with(broken, operator, qa)
    assert again.decision == "block"
    harness_services.harness_version_publish(
        version=broken, by=operator, override_reason="  Model retrained for product_facts  "
    )
    again.refresh_from_db()
    assert again.override_reason == "Model retrained for product_facts"
    assert again.overridden_by == operator and again.overridden_at is not None
    # a rollback to a version that was live before needs no check
    harness_services.harness_rollback(harness=compact_room.harness, to_number=published.number)


def _run_check_with(version: HarnessVersion, operator: Any, qa: Any) -> PublishCheck:
    with GoldModelServer(qa.items) as server:
        ModelEndpoint.objects.filter(name="fixed").update(base_url=server.base_url)
        return edits.run_check(version, operator)


def test_a_variant_arm_is_run_on_the_candidate_and_only_warns(
    compact_room, gate_set, operator
) -> None:
    published = compact_room.harness.published_version
    qa = edits.document(gate_set)
    with GoldModelServer(qa.items) as server:
        edits.configure_gate(compact_room, gate_set, server.base_url, variant_sets=["t1"])
        harmless = edits.draft(compact_room, edits.reworded(published.content), operator)
        check = edits.run_check(harmless, operator)
    runs = gate_services.check_runs_by_arm(check)
    assert set(runs) == {"baseline", "candidate", "candidate_t1"}
    assert runs["candidate_t1"].versions["harness"]["variant_set"] == "t1"
    assert runs["candidate"].versions["harness"]["harness_version"] == harmless.pk
    arms = {a["arm"]: a for a in check.verdict["arms"]}
    assert arms["candidate"]["decision"] == "pass"
    # the gold-replaying model knows only the published names: HSA's renames break it
    variant = arms["candidate_t1"]
    assert variant["arm_rate"] < arms["candidate"]["arm_rate"]
    # a confirmed block-sized drop (-62.5 points, interval below 0) that only warns, as a
    # variant arm may: the publish goes through
    assert variant["delta_points"] <= -10.0 and variant["ci_high"] < 0
    assert variant["decision"] == "warn" and check.decision == "warn"
    harness_services.harness_version_publish(version=harmless, by=operator)


def test_bad_gate_settings_name_the_field(compact_room, gate_set) -> None:
    endpoint = ModelEndpoint.objects.create(name="m", base_url="http://127.0.0.1:9/v1")
    ifeval = evals.eval_set_ifeval()
    cases: list[tuple[dict[str, Any], str]] = [
        ({"eval_set": ifeval}, "eval_set"),
        ({"warn_drop_points": 30.0, "block_drop_points": 10.0}, "block_drop_points"),
        ({"item_limit": 0}, "item_limit"),
        ({"variant_sets": ["t3"]}, "variant_sets"),
    ]
    for kwargs, field in cases:
        arguments = {"room": compact_room, "eval_set": gate_set, "endpoint": endpoint, **kwargs}
        with pytest.raises(gate_services.PublishGateError) as caught:
            gate_services.publish_gate_configure(**arguments)
        assert caught.value.field == field
    assert not PublishGate.objects.exists()
