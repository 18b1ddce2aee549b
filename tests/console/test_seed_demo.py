"""seed_demo: the demo's users, room and A/B experiment, and a readout that shows a typical
draw of the published lifts (see DEMO_SEED in the command)."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from console import charts
from console.management.commands import seed_demo
from experiments_app.models import Experiment
from experiments_app.readouts import experiment_readout

pytestmark = pytest.mark.django_db


def test_demo_readout_sits_near_the_published_lifts() -> None:
    # when the demo is seeded
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    assert "demo ready" in out.getvalue()
    # then its readout is the same draw every time, near the true lifts, intervals covering them
    experiment = Experiment.objects.get(name=seed_demo.DEMO_EXPERIMENT)
    assert experiment.arm_salt == seed_demo.DEMO_ARM_SALT
    readout = experiment_readout(experiment=experiment)
    assert [c.units for c in readout.counts] == [9496, 2504]
    gmv, views, capped = (m.comparisons[0].readout for m in readout.metrics)
    for result, truth in ((gmv, seed_demo.DEMO_GMV_LIFT), (views, seed_demo.DEMO_VIEWS_LIFT)):
        for effect in (result.relative, result.headline_relative):
            assert effect.ci_low < truth < effect.ci_high
            assert not effect.significant
    assert gmv.relative.estimate == pytest.approx(0.0221, abs=5e-4)
    assert gmv.headline_relative.estimate == pytest.approx(0.0258, abs=5e-4)
    assert views.headline_relative.estimate == pytest.approx(0.0021, abs=5e-4)
    assert gmv.mde is not None and gmv.mde.mde_relative == pytest.approx(0.765, abs=5e-3)
    # and capped GMV, beside it, has the narrower interval the heavy tail denied GMV
    width = {r: r.relative.ci_high - r.relative.ci_low for r in (gmv, capped)}
    assert width[capped] < 0.85 * width[gmv]
    assert any(
        note.startswith("Capped GMV: each UV's GMV counts at most") for note in readout.notes
    )
    # and its per-day GMV chart is cut where near-zero days' intervals run to +10^17%,
    # saying so, while views (light-tailed) fit as drawn
    gmv_days = charts.daily_effects(readout, "gmv")["layout"]
    assert gmv_days["yaxis"]["range"][1] < 1000
    assert any(a["text"].startswith("axis cut at") for a in gmv_days["annotations"])
    assert "range" not in charts.daily_effects(readout, "views")["layout"].get("yaxis", {})
    _assert_demo_blind_test_and_judge()


def _assert_demo_blind_test_and_judge() -> None:
    """The demo's blind test (both arms of the demo experiment, for the demo labeler) and its
    judge on the local model, with a gold-pair calibration queued."""
    from experiments_app.models import BlindTest
    from training_app.models import Judge, JudgeCalibration

    test = BlindTest.objects.get(name=seed_demo.DEMO_BLIND_TEST)
    assert test.status == BlindTest.Status.GENERATING  # the eval worker writes the replies
    sides = {side.side: side for side in test.sides.select_related("experiment_arm")}
    assert {sides["one"].experiment_arm.name, sides["two"].experiment_arm.name} == {
        "harness",
        "react",
    }
    assert list(test.labelers.values_list("username", flat=True)) == ["labeler"]
    regular = test.pairs.filter(is_gold=False)
    assert regular.count() == seed_demo.DEMO_BLIND_REQUESTS
    assert not regular.filter(ready=True).exists()
    assert test.pairs.filter(is_gold=True, ready=True).count() == seed_demo.DEMO_BLIND_GOLD_PAIRS
    judge = Judge.objects.get(name=seed_demo.DEMO_JUDGE)
    assert "small local model" in judge.name
    calibration = JudgeCalibration.objects.get(version__judge=judge)
    assert (calibration.reference, calibration.status, calibration.blind_test_id) == (
        "gold",
        "queued",
        test.pk,
    )


def test_the_demo_has_a_small_qa_set_ready_to_run(tmp_path, settings) -> None:
    from training_app.models import EvalSet

    settings.MEDIA_ROOT = tmp_path / "artifacts"
    call_command("seed_demo", "--no-experiment", stdout=io.StringIO())
    call_command("seed_demo", "--no-experiment", stdout=io.StringIO())  # idempotent
    eval_set = EvalSet.objects.get()
    assert eval_set.name == seed_demo.DEMO_EVAL_SET and eval_set.kind == "live_stream_qa"
    # one item per supported question type of the compact harness's catalog
    assert 5 <= eval_set.items <= 9
