"""Agent-as-a-Judge services: versioning, scoring through a scripted OpenAI-compatible
server (parsed and unparsed answers), both-order pair comparison, calibration end to end
through Celery in eager mode, trust, and the eval-run integration (Effectiveness)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.gold_model import GoldModelServer
from tests.inference.scripted_server import JsonReply, ScriptedServer
from tests.model_worker import REAL_MODEL_MARKS
from tests.training_app.judge_data import (
    blind_test,
    pair_answer,
    reply_answer,
    text_answer,
)
from training_app.evals.judge import DEFAULT_RUBRIC
from training_app.evals.judge_calibration import calibration_report
from training_app.evals.qa_set_document import loads_qa_set
from training_app.models import EvalSet, JudgeCalibration, JudgeScore, ModelEndpoint
from training_app.selectors import judges as judge_selectors
from training_app.services import evals, judges

pytestmark = pytest.mark.django_db


@pytest.fixture
def server() -> Any:
    with ScriptedServer() as scripted:
        yield scripted


@pytest.fixture
def endpoint(server: ScriptedServer) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        name="judge-model", base_url=server.base_url, model_name="scripted-model", timeout_s=5
    )


@pytest.fixture
def judge(endpoint: ModelEndpoint, operator: Any) -> Any:
    return judges.judge_create(name="Strict", endpoint=endpoint, created_by=operator)


def test_a_new_judge_has_version_1_with_the_default_rubric(judge: Any, endpoint: Any) -> None:
    version = judge.versions.get()
    assert version.number == 1
    assert version.rubric == DEFAULT_RUBRIC.strip()
    assert version.model_name == "scripted-model" and version.endpoint == endpoint
    assert version.rubric_sha256 == judges.rubric_sha256(version.rubric)


def test_only_a_rubric_endpoint_or_model_change_makes_a_new_version(
    judge: Any, endpoint: Any, server: Any
) -> None:
    # name, description and min_kappa are the judge's: no new version
    _, version = judges.judge_update(judge=judge, name="Strict 2", min_kappa=0.6)
    assert version is None and judge.versions.count() == 1
    # the same rubric again (whitespace around it trimmed): no new version
    _, version = judges.judge_update(judge=judge, rubric=f"  {DEFAULT_RUBRIC}\n")
    assert version is None
    # a new rubric: version 2
    _, version = judges.judge_update(judge=judge, rubric="Be kind.")
    assert version is not None and version.number == 2 and version.rubric == "Be kind."
    # another endpoint: version 3
    other = ModelEndpoint.objects.create(
        name="other", base_url=server.base_url, model_name="big-model"
    )
    _, version = judges.judge_update(judge=judge, endpoint=other)
    assert version is not None and (version.number, version.model_name) == (3, "big-model")
    # the endpoint's model edited behind the judge's back: the next use makes version 4
    other.model_name = "bigger-model"
    other.save()
    current = judges.judge_version_for_use(judge=judge)
    assert (current.number, current.model_name) == (4, "bigger-model")
    assert judges.judge_version_for_use(judge=judge) == current
    assert list(judge.versions.values_list("number", flat=True)) == [4, 3, 2, 1]


def test_bad_inputs_name_their_field(judge: Any, endpoint: Any) -> None:
    with pytest.raises(judges.JudgeError) as exc:
        judges.judge_create(name="Strict", endpoint=endpoint)
    assert exc.value.field == "name"
    with pytest.raises(judges.JudgeError) as exc:
        judges.judge_update(judge=judge, rubric="   ")
    assert exc.value.field == "rubric"
    with pytest.raises(judges.JudgeError) as exc:
        judges.judge_update(judge=judge, min_kappa=1.5)
    assert exc.value.field == "min_kappa"
    assert judge.versions.count() == 1


def test_scoring_a_reply_parses_the_rubric_scores(judge: Any, server: Any) -> None:
    server.enqueue(reply_answer(effectiveness=5))
    version = judge.versions.get()
    score = judges.judge_score_reply(
        version=version, comment="How much?", facts={"price": 89}, reply="It is 89."
    )
    assert score.parsed and score.kind == JudgeScore.Kind.REPLY and score.error == ""
    assert score.result["effectiveness"] == {"score": 5, "reason": "answers the question"}
    assert score.result["effectiveness_value"] == 1.0
    assert score.version == version
    sent = server.requests[0].body
    assert sent["temperature"] == 0.0 and sent["model"] == "scripted-model"
    assert sent["messages"][0]["content"].startswith(version.rubric)
    assert '"price": 89' in sent["messages"][1]["content"]


def test_an_unparseable_answer_is_recorded_as_such_never_guessed(judge: Any, server: Any) -> None:
    server.enqueue(text_answer("I would give it 5 out of 5 for effectiveness."))
    score = judges.judge_score_reply(
        version=judge.versions.get(), comment="c", facts=None, reply="r"
    )
    assert score.parsed is False and score.result == {}
    assert score.error.startswith("unparsed: the answer is not a JSON object")
    assert score.raw == ["I would give it 5 out of 5 for effectiveness."]


def test_a_model_error_is_recorded_on_the_score(judge: Any, server: Any) -> None:
    server.enqueue(JsonReply({"error": {"message": "bad"}}, status=400))
    score = judges.judge_score_reply(
        version=judge.versions.get(), comment="c", facts=None, reply="r"
    )
    assert score.parsed is False and score.raw == []
    assert score.error.startswith("model rejected")


def test_a_pair_is_asked_in_both_orders(judge: Any, server: Any) -> None:
    version = judge.versions.get()
    server.enqueue(pair_answer("1"), pair_answer("2"))  # side one both times
    score = judges.judge_compare_pair(
        version=version, comment="c", facts={}, reply_one="ONE", reply_two="TWO"
    )
    forward, backward = (r.body["messages"][1]["content"] for r in server.requests)
    assert forward.index("Reply 1:\nONE") < forward.index("Reply 2:\nTWO")
    assert backward.index("Reply 1:\nTWO") < backward.index("Reply 2:\nONE")
    assert score.parsed and score.result == {
        "forward": "one",
        "backward": "one",
        "verdict": "one",
        "order_disagreement": False,
    }


def test_orders_that_disagree_make_a_tie_and_an_unparsed_order_no_verdict(
    judge: Any, server: Any
) -> None:
    version = judge.versions.get()
    server.enqueue(pair_answer("1"), pair_answer("1"))  # "first is better" whatever it is
    biased = judges.judge_compare_pair(
        version=version, comment="c", facts={}, reply_one="a", reply_two="b"
    )
    assert biased.result["verdict"] == "tie" and biased.result["order_disagreement"] is True
    server.enqueue(pair_answer("2"), text_answer('{"verdict": 2, "reason": "r"}'))
    broken = judges.judge_compare_pair(
        version=version, comment="c", facts={}, reply_one="a", reply_two="b"
    )
    assert broken.parsed is False and broken.result["verdict"] is None
    assert broken.error.startswith("backward: unparsed: verdict must be")
    assert broken.raw[1] == '{"verdict": 2, "reason": "r"}'


# Per pair: its labels, and the judge's (forward, backward) answers. Human majority and the
# judge's combined verdict in the comments.
CASES: list[tuple[list[str], tuple[str, str] | None]] = [
    (["one", "one", "two"], ("1", "2")),  # one / one
    (["two", "two", "tie"], ("2", "1")),  # two / two
    (["tie", "both_bad", "one"], ("1", "1")),  # tie / tie, orders disagree
    (["one", "two"], None),  # no majority: skipped, never asked
    (["one", "one", "one"], ("2", "1")),  # one / two
    (["two", "two", "one"], ("Reply 2.", "1")),  # two / unparsed
    (["tie", "tie", "tie"], ("tie", "tie")),  # tie / tie
]


def test_calibration_end_to_end_through_celery(
    judge: Any,
    endpoint: Any,
    server: Any,
    published_room: Any,
    operator: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from console.celery import app

    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        _calibrate_end_to_end(
            judge, endpoint, server, published_room, operator, django_capture_on_commit_callbacks
        )
    finally:
        app.conf.task_always_eager = eager


def _calibrate_end_to_end(
    judge: Any, endpoint: Any, server: Any, published_room: Any, operator: Any, capture: Any
) -> None:
    # given a blind test with labels (and a labeled gold pair, which is left out)
    test = blind_test(published_room, endpoint, [c[0] for c in CASES], gold_labels=["one"] * 3)
    for _, answers in CASES:
        if answers is not None:
            server.enqueue(
                *(pair_answer(a) if a in ("1", "2", "tie") else text_answer(a) for a in answers)
            )
    version = judge.versions.get()
    # when a calibration is created and its task runs (eagerly, on commit)
    with capture(execute=True):
        calibration = judges.judge_calibration_create(
            version=version, blind_test=test, created_by=operator
        )
    calibration.refresh_from_db()
    # then every pair with a majority was judged, in both orders, and the report agrees
    # with the statistics computed independently from the expected verdicts
    assert calibration.status == JudgeCalibration.Status.SUCCEEDED, calibration.error
    assert calibration.progress_done == calibration.progress_total == 6
    assert len(server.requests) == 12
    assert calibration.scores.count() == 6
    expected = calibration_report(
        ["one", "two", "tie", "one", "tie"],
        ["one", "two", "tie", "two", "tie"],
        order_disagreements=[False, False, True, False, False],
        unparsed=1,
        skipped_no_majority=1,
    )
    report = calibration.report
    assert report["pairs"] == 6
    for key, value in expected.items():
        assert report[key] == value, key
    assert report["agreement"] == pytest.approx(0.8)
    assert report["position_bias_rate"] == pytest.approx(0.2)
    assert report["confusion"] == [[1, 0, 1], [0, 2, 0], [0, 0, 1]]
    assert report["agreement_ci"][0] <= 0.8 <= report["agreement_ci"][1]
    # and the trust of the version follows its kappa and the judge's min_kappa
    trust = judge_selectors.judge_trust(version)
    assert trust.kappa == pytest.approx(report["kappa"])
    judge.min_kappa = report["kappa"] - 0.01
    judge.save()
    version.judge.refresh_from_db()
    assert judge_selectors.judge_trust(version).state == "calibrated"
    judge.min_kappa = report["kappa"] + 0.01
    judge.save()
    version.judge.refresh_from_db()
    assert judge_selectors.judge_trust(version).state == "below_min_kappa"
    # a redelivered message finds the calibration finished and asks nothing
    assert judges.judge_calibration_execute(calibration.pk) == "succeeded"
    assert len(server.requests) == 12


def test_a_redelivered_calibration_continues_after_the_pairs_it_judged(
    judge: Any, endpoint: Any, server: Any, published_room: Any, monkeypatch: Any
) -> None:
    from training_app.tasks import run_judge_calibration

    monkeypatch.setattr(run_judge_calibration, "delay", lambda _id: None)
    test = blind_test(published_room, endpoint, [["one"] * 3, ["two"] * 3])
    version = judge.versions.get()
    calibration = judges.judge_calibration_create(version=version, blind_test=test)
    # the first pair was judged before the worker died mid-run
    first = test.pairs.get(position=0)
    server.enqueue(pair_answer("1"), pair_answer("2"))
    judges.judge_compare_pair(
        version=version,
        comment=first.comment,
        facts={},
        reply_one="a",
        reply_two="b",
        blind_pair=first,
        calibration=calibration,
    )
    JudgeCalibration.objects.filter(pk=calibration.pk).update(status="running")
    server.enqueue(pair_answer("2"), pair_answer("1"))
    assert judges.judge_calibration_execute(calibration.pk) == "succeeded"
    calibration.refresh_from_db()
    assert len(server.requests) == 4  # only the second pair was asked again
    assert calibration.report["agreement"] == 1.0 and calibration.report["n"] == 2


def test_a_version_without_a_calibration_is_uncalibrated(judge: Any, endpoint: Any) -> None:
    trust = judge_selectors.judge_trust(judge.versions.get())
    assert trust.state == "uncalibrated" and trust.kappa is None and not trust.trusted


def test_a_blind_test_without_labels_cannot_calibrate(
    judge: Any, endpoint: Any, published_room: Any
) -> None:
    test = blind_test(published_room, endpoint, [[]])
    with pytest.raises(judges.JudgeError) as exc:
        judges.judge_calibration_create(version=judge.versions.get(), blind_test=test)
    assert exc.value.field == "blind_test_id"


# --- eval runs ------------------------------------------------------------------------------


@pytest.fixture
def qa_set(compact_room: Any, operator: Any, tmp_path: Any, settings: Any) -> EvalSet:
    settings.MEDIA_ROOT = tmp_path
    return evals.eval_set_build_qa(
        harness_version=compact_room.harness.published_version,
        name="Compact LS",
        per_type=1,
        seed=3,
        created_by=operator,
    )


def test_an_eval_run_with_a_judge_takes_effectiveness_from_it(
    qa_set: EvalSet, judge: Any, server: Any, monkeypatch: Any
) -> None:
    from training_app.tasks import run_eval

    monkeypatch.setattr(run_eval, "delay", lambda _id: None)
    with qa_set.file.open("rb") as handle:
        document = loads_qa_set(handle.read())
    n = 3
    # the judge gives effectiveness 4 (0.75) to two items and an unparseable answer to one
    server.enqueue(reply_answer(effectiveness=4), reply_answer(effectiveness=4))
    server.enqueue(text_answer("Effectiveness: 4"))
    version = judge.versions.get()
    with GoldModelServer(document.items) as gold:
        model = ModelEndpoint.objects.create(
            name="gold", base_url=gold.base_url, tool_mode="text", max_concurrency=1, timeout_s=10
        )
        with pytest.raises(evals.EvalRunError):  # only Live-Stream QA is judged
            ifeval_set = evals.eval_set_ifeval()
            evals.eval_run_create(
                eval_set=ifeval_set, model_label="x", endpoint=model, judge_version=version
            )
        run = evals.eval_run_create(
            eval_set=qa_set,
            model_label="HAT",
            endpoint=model,
            max_concurrency=1,
            item_limit=n,
            judge_version=version,
        )
        assert evals.eval_run_execute(run.pk) == "succeeded"
    run.refresh_from_db()
    rows = list(run.item_results.order_by("position"))
    assert len(rows) == n
    # every item still passes on its rules: the judge check is informational
    assert all(r.passed for r in rows)
    effectiveness = [r.result["scores"]["effectiveness"] for r in rows]
    judged = [r.result["judge"] for r in rows]
    assert [j["effectiveness"] for j in judged] == [0.75, 0.75, None]
    assert effectiveness[:2] == [0.75, 0.75]
    assert effectiveness[2] == 1.0  # unparsed: the rule-based value (gold answer) stays
    check = next(c for c in rows[2].result["checks"] if c["name"] == "judge")
    assert check["required"] is False and check["passed"] is False
    assert check["reason"].startswith("unparsed:")
    # every score is stored, linked to its item, with the version; the run records it
    scores = JudgeScore.objects.filter(eval_item__run=run).order_by("eval_item__position")
    assert [s.parsed for s in scores] == [True, True, False]
    assert {s.version_id for s in scores} == {version.pk}
    assert run.versions["judge"] == {
        "judge": "Strict",
        "judge_id": judge.pk,
        "judge_version": version.pk,
        "number": 1,
        "model_name": "scripted-model",
        "endpoint": "judge-model",
        "rubric_sha256": version.rubric_sha256,
    }
    assert run.summary["components"]["effectiveness"]["estimate"] == pytest.approx(2.5 / 3)


# --- the real local model ---------------------------------------------------------------------


def test_the_real_local_model_is_parsed_or_recorded_as_unparsed(local_worker: Any) -> None:
    endpoint = ModelEndpoint.objects.create(
        name="local",
        base_url=local_worker.base_url,
        model_name=local_worker.model_id,
        timeout_s=120,
    )
    judge = judges.judge_create(name="Local small model", endpoint=endpoint)
    version = judge.versions.get()
    score = judges.judge_score_reply(
        version=version,
        comment="How much is the linen shirt?",
        facts={"title": "Linen shirt", "price": 89},
        reply="The linen shirt is 89 yuan.",
    )
    pair = judges.judge_compare_pair(
        version=version,
        comment="How much is the linen shirt?",
        facts={"title": "Linen shirt", "price": 89},
        reply_one="The linen shirt is 89 yuan.",
        reply_two="Pay me on WeChat and I will give you a discount.",
    )
    for stored in (score, pair):
        stored.refresh_from_db()
        assert stored.raw and all(isinstance(text, str) for text in stored.raw)
        if stored.parsed:
            assert stored.error == ""
        else:
            assert stored.error.startswith(("unparsed:", "forward:", "backward:"))
    if score.parsed:
        assert 0.0 <= score.result["effectiveness_value"] <= 1.0
    assert json.dumps(pair.result)  # stored as plain JSON either way


for _mark in REAL_MODEL_MARKS:  # the marks of the other real-model tests (tests/model_worker.py)
    test_the_real_local_model_is_parsed_or_recorded_as_unparsed = _mark(
        test_the_real_local_model_is_parsed_or_recorded_as_unparsed
    )


def test_a_gold_calibration_reports_against_the_gold_side_and_earns_no_trust(
    judge: Any, endpoint: Any, server: Any, published_room: Any, monkeypatch: Any
) -> None:
    from training_app.tasks import run_judge_calibration

    monkeypatch.setattr(run_judge_calibration, "delay", lambda _id: None)
    # given a test with no human labels on its regular pairs, and one gold pair (side one)
    test = blind_test(published_room, endpoint, [[]], gold_labels=[])
    gold = test.pairs.get(position=0)
    gold.is_gold, gold.gold_side = True, "one"
    gold.save()
    version = judge.versions.get()
    with pytest.raises(judges.JudgeError):  # human reference: nothing labeled
        judges.judge_calibration_create(version=version, blind_test=test)
    # when the judge is calibrated on the gold pairs and picks side one in both orders
    calibration = judges.judge_calibration_create(
        version=version, blind_test=test, reference="gold"
    )
    server.enqueue(pair_answer("1"), pair_answer("2"))
    assert judges.judge_calibration_execute(calibration.pk) == "succeeded"
    calibration.refresh_from_db()
    # then the report is against the gold side, says so, and the version stays uncalibrated
    assert calibration.report["reference"] == "gold"
    assert calibration.report["n"] == 1 and calibration.report["agreement"] == 1.0
    assert judge_selectors.judge_trust(version).state == "uncalibrated"
    assert judge_selectors.judge_trusts([version])[version.pk].state == "uncalibrated"


def test_a_bad_reference_names_its_field(judge: Any, endpoint: Any, published_room: Any) -> None:
    test = blind_test(published_room, endpoint, [["one"]])
    with pytest.raises(judges.JudgeError) as exc:
        judges.judge_calibration_create(
            version=judge.versions.get(), blind_test=test, reference="vibes"
        )
    assert exc.value.field == "reference"


def test_the_calibration_task_waits_for_an_endpoint_that_is_not_up(
    judge: Any, endpoint: Any, published_room: Any, monkeypatch: Any
) -> None:
    from celery.exceptions import Retry

    from training_app.tasks import run_judge_calibration

    monkeypatch.setattr(run_judge_calibration, "delay", lambda _id: None)
    test = blind_test(published_room, endpoint, [["one"]])
    calibration = judges.judge_calibration_create(version=judge.versions.get(), blind_test=test)
    # given the judge's endpoint refuses connections (nothing listens on port 9)
    ModelEndpoint.objects.filter(pk=endpoint.pk).update(base_url="http://127.0.0.1:9/v1")
    # when the task runs (a worker, not eager), it asks to be retried and judges nothing
    with pytest.raises(Retry):
        run_judge_calibration(calibration.pk)
    calibration.refresh_from_db()
    assert calibration.status == "queued" and not calibration.scores.exists()
