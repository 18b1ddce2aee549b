"""The promotion gate: a trained checkpoint backs an experiment arm only when its IFEval
lower bound against its base model is within the margin, its T1/T2 gap within the
threshold and its latency replay within the room's deadline; each failed condition is a
start error naming the arm's endpoint and saying what failed. Endpoints no training run
produced are not gated."""

from __future__ import annotations

from typing import Any

import pytest

from experiments_app import services
from experiments_app.models import LatencyReport
from experiments_app.selectors.promotion import promotion_report
from training_app.evals.promotion_gate import (
    PromotionThresholds,
    ifeval_condition,
    latency_condition,
    t1_t2_condition,
)
from training_app.models import EvalItemResult, EvalRun, EvalSet, ModelEndpoint, TrainingRun

pytestmark = pytest.mark.django_db
BASE_DIR = "/models/smollm2-base"


# --- pure -------------------------------------------------------------------------------------


def _prompts(n: int, failing: int) -> dict[str, bool]:
    return {f"p{k}": k >= failing for k in range(n)}


def test_ifeval_passes_within_the_margin_at_the_lower_bound() -> None:
    t = PromotionThresholds()
    base = _prompts(541, 120)  # IFEval's 541 prompts, 77.8% followed
    assert ifeval_condition(base, base, t).passed  # no change: lower bound 0
    # 3 more prompts failed (-0.6 points): the lower bound stays above -2
    slightly = {**base, **{f"p{k}": False for k in range(120, 123)}}
    assert ifeval_condition(base, slightly, t).passed
    # 27 more failed (-5 points): refused, and the detail says by how much
    worse = {**base, **{f"p{k}": False for k in range(120, 147)}}
    condition = ifeval_condition(base, worse, t)
    assert not condition.passed
    assert "-5.0 points" in condition.detail and "< -2" in condition.detail
    # on 200 prompts even 2 losses (-1 point) are not enough evidence: the bound is -2.5
    small = _prompts(200, 40)
    assert not ifeval_condition(small, {**small, "p40": False, "p41": False}, t).passed
    # a wider margin lets it through
    assert ifeval_condition(base, worse, PromotionThresholds(ifeval_margin_points=10)).passed
    assert "no finished IFEval run of its base" in ifeval_condition(None, base, t).detail
    assert "of this checkpoint" in ifeval_condition(base, None, t).detail


def test_t1_t2_gap_and_latency() -> None:
    t = PromotionThresholds(t1_t2_gap_points=2.0)
    assert t1_t2_condition(80.0, 79.8, t).passed  # the report's HAT: 0.2
    base_like = t1_t2_condition(80.0, 75.1, t)  # the report's base: 4.9
    assert not base_like.passed and "gap 4.9 points" in base_like.detail
    assert "T2" in t1_t2_condition(80.0, None, t).detail
    levels = [{"concurrency": 1, "p95_ms": 900.0}, {"concurrency": 8, "p95_ms": 16_000.0}]
    slow = latency_condition("Room A", levels, 15_000)
    assert not slow.passed and "concurrency 8" in slow.detail
    assert latency_condition("Room A", levels[:1], 15_000).passed
    assert not latency_condition("Room A", None, 15_000).passed
    assert not latency_condition("Room A", [{"concurrency": 1, "p95_ms": None}], 15_000).passed


# --- evidence and enforcement -----------------------------------------------------------------


def _set(kind: str, variant: str = "", name: str = "") -> EvalSet:
    return EvalSet.objects.create(
        name=name or f"{kind} {variant}",
        kind=kind,
        variant_set=variant,
        file=f"eval_sets/{kind}{variant}.jsonl",
        content_hash=f"{kind}{variant}{name}",
    )


def _run(eval_set: EvalSet, results: dict[str, bool], **source: Any) -> EvalRun:
    run = EvalRun.objects.create(
        eval_set=eval_set,
        model_label="x",
        status=EvalRun.Status.SUCCEEDED,
        progress_total=len(results),
        progress_done=len(results),
        **source,
    )
    EvalItemResult.objects.bulk_create(
        EvalItemResult(run=run, position=i, item_id=key, base_id=key, passed=ok, score=float(ok))
        for i, (key, ok) in enumerate(results.items())
    )
    from django.utils import timezone

    EvalRun.objects.filter(pk=run.pk).update(finished_at=timezone.now())
    return run


@pytest.fixture
def trained(db) -> ModelEndpoint:  # type: ignore[no-untyped-def]
    endpoint = ModelEndpoint.objects.create(name="run-7", base_url="http://127.0.0.1:9/v1")
    TrainingRun.objects.create(
        name="hat", base_model_dir=BASE_DIR, stages=["hsa_sft"], result_endpoint=endpoint
    )
    return endpoint


def _arms(room, production, trained):  # type: ignore[no-untyped-def]
    version = room.harness.published_version
    return [
        services.ArmSpec("control", "react", version, production, 5000),
        services.ArmSpec("hat", "harness", version, trained, 5000),
    ]


def test_a_trained_arm_starts_only_with_the_evidence(
    published_room, endpoint, trained, operator
) -> None:
    spec = services.ExperimentSpec(
        name="HAT vs ReAct", rooms=[published_room], arms=_arms(published_room, endpoint, trained)
    )
    experiment = services.experiment_create(spec=spec, created_by=operator)  # a draft is free
    with pytest.raises(services.ExperimentConfigError) as caught:
        services.experiment_start(experiment=experiment)
    errors = [e for e in caught.value.errors if e[0] == "arms[1].endpoint"]
    assert [m.split("(")[1].split(")")[0] for _, m in errors] == [
        "ifeval",
        "t1_t2_gap",
        "latency",
    ]
    assert all("'run-7'" in m for _, m in errors)
    # the production endpoint (arm 0) is not a training result: never gated
    assert not [e for e in caught.value.errors if e[0] == "arms[0].endpoint"]
    assert not promotion_report(endpoint, [published_room]).applies

    # the evidence: IFEval of the checkpoint and of its base (same set), T1/T2 runs, latency
    ifeval = _set(EvalSet.Kind.IFEVAL)
    base_results = _prompts(100, 30)
    _run(ifeval, base_results, local_model_dir=BASE_DIR)
    worse = {**base_results, **{f"p{k}": False for k in range(30, 40)}}  # -10 points
    trained_ifeval = _run(ifeval, worse, endpoint=trained)
    _run(_set(EvalSet.Kind.HARNESS_VARIANT_QA, "t1"), _prompts(10, 2), endpoint=trained)
    _run(_set(EvalSet.Kind.HARNESS_VARIANT_QA, "t2"), _prompts(10, 5), endpoint=trained)
    LatencyReport.objects.create(
        endpoint=trained,
        room=published_room,
        request_file="replay_100.jsonl",
        requests=100,
        results=[{"concurrency": 4, "p95_ms": 1200.0}],
    )
    report = promotion_report(trained, [published_room])
    assert report.applies
    assert [c.name for c in report.failed] == ["ifeval", "t1_t2_gap"]
    assert "T1 80.0% vs T2 50.0%: gap 30.0 points" in report.failed[1].detail

    # a better checkpoint: the IFEval drop gone and T1/T2 even
    EvalItemResult.objects.filter(run=trained_ifeval).delete()
    trained_ifeval.delete()
    _run(ifeval, base_results, endpoint=trained)
    _run(
        _set(EvalSet.Kind.HARNESS_VARIANT_QA, "t2", name="t2 b"), _prompts(10, 2), endpoint=trained
    )
    assert promotion_report(trained, [published_room]).passed
    services.experiment_start(experiment=experiment)
    experiment.refresh_from_db()
    assert experiment.status == "running"


def test_the_base_model_may_be_served_by_an_endpoint(published_room, trained) -> None:
    from inference.workers.profiles import served_model_id

    ifeval = _set(EvalSet.Kind.IFEVAL)
    base_endpoint = ModelEndpoint.objects.create(
        name="base", base_url="http://127.0.0.1:9/v1", model_name=served_model_id(BASE_DIR)
    )
    _run(ifeval, _prompts(50, 10), endpoint=base_endpoint)
    _run(ifeval, _prompts(50, 10), endpoint=trained)
    (ifeval_result, *_rest) = promotion_report(trained, [published_room]).conditions
    assert ifeval_result.passed, ifeval_result.detail


def test_the_experiment_page_says_which_condition_failed(
    published_room, endpoint, trained, operator, client
) -> None:
    spec = services.ExperimentSpec(
        name="HAT vs ReAct", rooms=[published_room], arms=_arms(published_room, endpoint, trained)
    )
    experiment = services.experiment_create(spec=spec, created_by=operator)
    LatencyReport.objects.create(
        endpoint=trained,
        room=published_room,
        request_file="replay_100.jsonl",
        requests=100,
        results=[{"concurrency": 4, "p95_ms": 20_000.0}],
    )
    client.force_login(operator)
    page = client.get(f"/experiments/{experiment.pk}/").content.decode()
    assert 'id="promotion-gate"' in page
    assert 'data-condition="hat:latency"' in page and "over the 15000 ms reply deadline" in page
    assert 'data-condition="control:' not in page  # the production endpoint is not gated
    start = client.post(f"/experiments/{experiment.pk}/start/")
    text = start.content.decode()
    assert "fails the promotion gate (latency)" in text and "no finished IFEval run" in text
    experiment.refresh_from_db()
    assert experiment.status == "draft"
