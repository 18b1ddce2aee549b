"""Blind tests, the operator's side: creating a test (validation per field), its request
sources (stratified live replies, an eval set, an upload), stored-reply pairing, gold pairs,
and the results selector against ``experiments_app.stats.preference`` (and the report's
35/64/1), with the labels CSV read back."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
from collections import Counter
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

from console.roles import Role
from experiments_app.models import (
    BlindLabel,
    BlindPair,
    BlindTest,
    Experiment,
    LiveReply,
)
from experiments_app.selectors import blind_tests as selectors
from experiments_app.services import blind_tests as services
from experiments_app.stats.preference import Label, preference_result
from harness_app import services as harness_services
from harness_app.models import Product, Room
from tests.factories import RoomFactory, UserFactory
from training_app.models import EvalSet, ModelEndpoint
from training_app.services import evals

pytestmark = pytest.mark.django_db

# --- fixtures shared with the page, API and generation tests ---------------------------------


@pytest.fixture
def arms_experiment(compact_room, make_experiment) -> Experiment:  # type: ignore[no-untyped-def]
    """The compact room with a running ReAct (control) vs Harness (treatment) experiment."""
    return make_experiment([compact_room], weights=(5000, 5000), name="Harness vs ReAct")


def add_reply(
    room: Room,
    *,
    comment: str,
    arm: Any = None,
    sku: str = "",
    skill: str = "",
    reply: str = "stored reply",
    n: list[int] = [0],  # noqa: B006 - a counter for unique request ids
) -> LiveReply:
    n[0] += 1
    return LiveReply.objects.create(
        room=room,
        request_id=f"r-{n[0]}",
        uv_id=f"uv-{n[0]}",
        comment=comment,
        context={"product_sku": sku, "recent_comments": []},
        status=LiveReply.Status.DONE,
        arm=arm.kind if arm else "harness",
        harness_version=arm.harness_version if arm else None,
        endpoint=arm.endpoint if arm else None,
        experiment=arm.experiment if arm else None,
        experiment_arm=arm,
        reply=reply,
        skill=skill,
    )


def arm_spec(source: Experiment, **overrides: Any) -> services.BlindTestSpec:
    control, treatment = list(source.arms.order_by("position"))
    values: dict[str, Any] = {
        "name": "Harness vs ReAct",
        "room": source.rooms.get(),
        "compare": BlindTest.Compare.EXPERIMENT_ARMS,
        "experiment": source,
        "arm_one": treatment,
        "arm_two": control,
        "request_source": BlindTest.RequestSource.LIVE_REPLIES,
        "reply_source": BlindTest.ReplySource.STORED,
        "size": 10,
        "labels_per_pair": 1,
    }
    values.update(overrides)
    return services.BlindTestSpec(**values)


def stored_arms_test(
    experiment: Experiment, operator: Any, pairs: int = 5, **overrides: Any
) -> BlindTest:
    """A ready-to-label test: ``pairs`` comments each answered by both arms (stored)."""
    control, treatment = list(experiment.arms.order_by("position"))
    room = experiment.rooms.get()
    for i in range(pairs):
        add_reply(
            room,
            comment=f"Is the sweater warm? #{i}",
            arm=treatment,
            sku="SW-1001",
            reply=f"Harness says yes #{i}",
        )
        add_reply(
            room,
            comment=f"Is the sweater warm? #{i}",
            arm=control,
            sku="SW-1001",
            reply=f"ReAct says maybe #{i}",
        )
    spec = arm_spec(experiment, size=2 * pairs, **overrides)
    return services.blind_test_create(spec=spec, created_by=operator)


def errors_of(excinfo: pytest.ExceptionInfo[ValidationError]) -> dict[str, list[str]]:
    return excinfo.value.message_dict


# --- create: validation ------------------------------------------------------------------------


def test_two_arms_must_differ_and_belong_to_the_experiment(
    arms_experiment, make_experiment, compact_room, operator
) -> None:
    control, _ = list(arms_experiment.arms.order_by("position"))
    with pytest.raises(ValidationError) as same:
        services.blind_test_create(
            spec=arm_spec(arms_experiment, arm_one=control, arm_two=control), created_by=operator
        )
    assert list(errors_of(same)) == ["arm_two"]
    assert "different" in errors_of(same)["arm_two"][0]

    other = make_experiment([compact_room], start=False, name="Other", layer="other")
    foreign = other.arms.first()
    with pytest.raises(ValidationError) as wrong:
        services.blind_test_create(
            spec=arm_spec(arms_experiment, arm_one=foreign), created_by=operator
        )
    assert "not an arm of" in errors_of(wrong)["arm_one"][0]
    with pytest.raises(ValidationError) as missing:
        services.blind_test_create(
            spec=arm_spec(arms_experiment, experiment=None), created_by=operator
        )
    assert list(errors_of(missing)) == ["experiment"]
    assert not BlindTest.objects.exists()


def test_versions_must_be_of_the_rooms_harness_and_differ(
    compact_room, other_room, operator, demo_harness
) -> None:
    endpoint = ModelEndpoint.objects.create(name="m1", base_url="http://127.0.0.1:9/v1")
    mine = compact_room.harness.published_version
    theirs = harness_services.harness_version_create(
        harness=other_room.harness, content=demo_harness, base_version=None, author=operator
    )
    base = {
        "name": "v vs v",
        "room": compact_room,
        "compare": BlindTest.Compare.HARNESS_VERSIONS,
        "request_source": BlindTest.RequestSource.UPLOAD,
        "reply_source": BlindTest.ReplySource.GENERATED,
        "upload": b'{"comment": "hi"}\n',
    }
    with pytest.raises(ValidationError) as foreign:
        services.blind_test_create(
            spec=services.BlindTestSpec(
                **base, version_one=mine, version_two=theirs, endpoint=endpoint
            ),
            created_by=operator,
        )
    assert list(errors_of(foreign)) == ["version_two"]
    assert "not a version of Room A's harness" in errors_of(foreign)["version_two"][0]
    with pytest.raises(ValidationError) as same:
        services.blind_test_create(
            spec=services.BlindTestSpec(**base, version_one=mine, version_two=mine),
            created_by=operator,
        )
    assert set(errors_of(same)) == {"version_two", "endpoint"}


def test_endpoints_must_differ_and_be_active_for_generation(compact_room, operator) -> None:
    e1 = ModelEndpoint.objects.create(name="m1", base_url="http://127.0.0.1:9/v1")
    e2 = ModelEndpoint.objects.create(name="m2", base_url="http://127.0.0.1:9/v1", is_active=False)
    base = {
        "name": "m vs m",
        "room": compact_room,
        "compare": BlindTest.Compare.ENDPOINTS,
        "request_source": BlindTest.RequestSource.UPLOAD,
        "reply_source": BlindTest.ReplySource.GENERATED,
        "upload": b'{"comment": "hi"}\n',
    }
    with pytest.raises(ValidationError) as same:
        services.blind_test_create(
            spec=services.BlindTestSpec(**base, endpoint_one=e1, endpoint_two=e1),
            created_by=operator,
        )
    assert list(errors_of(same)) == ["endpoint_two"]
    with pytest.raises(ValidationError) as inactive:
        services.blind_test_create(
            spec=services.BlindTestSpec(**base, endpoint_one=e1, endpoint_two=e2),
            created_by=operator,
        )
    assert "inactive" in errors_of(inactive)["endpoint_two"][0]
    bare = RoomFactory(name="No harness yet")
    with pytest.raises(ValidationError) as unpublished:
        services.blind_test_create(
            spec=services.BlindTestSpec(**{**base, "room": bare}, endpoint_one=e1, endpoint_two=e1),
            created_by=operator,
        )
    assert "no published harness" in errors_of(unpublished)["room"][0]


def test_numbers_are_checked_per_field(arms_experiment, operator) -> None:
    with pytest.raises(ValidationError) as excinfo:
        services.blind_test_create(
            spec=arm_spec(
                arms_experiment, name=" ", labels_per_pair=16, gold_pairs=201, gold_min_accuracy=1.5
            ),
            created_by=operator,
        )
    assert set(errors_of(excinfo)) == {"name", "labels_per_pair", "gold_pairs", "gold_min_accuracy"}


# --- request sources ---------------------------------------------------------------------------


def test_proportional_allocation_uses_largest_remainders() -> None:
    assert services.proportional_allocation({"a": 60, "b": 30, "c": 10}, 20) == {
        "a": 12,
        "b": 6,
        "c": 2,
    }
    # quotas 1.67 / 1.0 / 0.33 for size 3 of (5, 3, 1): floors 1, 1, 0 and the largest
    # remainder (a: 0.67) gets the last one
    assert services.proportional_allocation({"a": 5, "b": 3, "c": 1}, 3) == {"a": 2, "b": 1, "c": 0}
    assert services.proportional_allocation({"a": 1, "b": 1}, 5) == {"a": 1, "b": 1}
    assert sum(services.proportional_allocation({"x": 7, "y": 6, "z": 2}, 9).values()) == 9


def test_stratified_sampling_by_skill_is_proportional_and_seeded(compact_room) -> None:
    for skill, count in (("price", 60), ("size", 30), ("shipping", 10)):
        for i in range(count):
            add_reply(compact_room, comment=f"{skill} {i}", skill=skill)
    items = services.sample_live_replies(room=compact_room, size=20, stratify_by="skill", seed=7)
    assert Counter(i.stratum for i in items) == {"price": 12, "size": 6, "shipping": 2}
    again = services.sample_live_replies(room=compact_room, size=20, stratify_by="skill", seed=7)
    assert [i.comment for i in again] == [i.comment for i in items]
    other = services.sample_live_replies(room=compact_room, size=20, stratify_by="skill", seed=8)
    assert [i.comment for i in other] != [i.comment for i in items]


def test_stratified_sampling_by_product_reads_the_context_sku(compact_room) -> None:
    for sku, count in (("SW-1001", 8), ("JK-2001", 4), ("", 4)):
        for i in range(count):
            add_reply(compact_room, comment=f"{sku} {i}", sku=sku)
    items = services.sample_live_replies(room=compact_room, size=8, stratify_by="product")
    assert Counter(i.stratum for i in items) == {"SW-1001": 4, "JK-2001": 2, "(none)": 2}
    assert {i.product_sku for i in items} == {"SW-1001", "JK-2001", ""}


def test_eval_set_source_takes_comment_and_product(compact_room, operator) -> None:
    qa_set = evals.eval_set_build_qa(
        harness_version=compact_room.harness.published_version,
        name="LS",
        per_type=1,
        seed=3,
        created_by=operator,
    )
    items = services.eval_set_requests(eval_set=qa_set, size=3)
    assert len(items) == 3
    assert all(i.comment for i in items)
    assert any(i.product_sku for i in items)
    ifeval = EvalSet.objects.create(name="IF", kind=EvalSet.Kind.IFEVAL, file="x", content_hash="h")
    e1 = ModelEndpoint.objects.create(name="m1", base_url="http://127.0.0.1:9/v1")
    e2 = ModelEndpoint.objects.create(name="m2", base_url="http://127.0.0.1:9/v1")
    spec = services.BlindTestSpec(
        name="from QA",
        room=compact_room,
        compare=BlindTest.Compare.ENDPOINTS,
        endpoint_one=e1,
        endpoint_two=e2,
        request_source=BlindTest.RequestSource.EVAL_SET,
        reply_source=BlindTest.ReplySource.GENERATED,
        eval_set=ifeval,
    )
    with pytest.raises(ValidationError) as excinfo:
        services.blind_test_create(spec=spec, created_by=operator)
    assert "not a Live-Stream QA set" in errors_of(excinfo)["eval_set"][0]


def test_upload_rows_are_parsed_from_jsonl_and_csv() -> None:
    jsonl = (
        b'{"comment": "How much?", "product_sku": "SW-1001"}\n\n'
        + json.dumps(
            {"comment": "Warm?", "context": {"product_sku": "JK-2001", "recent_comments": ["hi"]}}
        ).encode()
    )
    items = services.parse_request_upload(jsonl, file_name="r.jsonl")
    assert [(i.comment, i.product_sku, i.recent_comments) for i in items] == [
        ("How much?", "SW-1001", []),
        ("Warm?", "JK-2001", ["hi"]),
    ]
    rows = b"comment,product_sku\nHow much?,SW-1001\nAny sizes?,\n"
    assert [
        (i.comment, i.product_sku) for i in services.parse_request_upload(rows, file_name="r.csv")
    ] == [
        ("How much?", "SW-1001"),
        ("Any sizes?", ""),
    ]


def test_upload_errors_name_the_line_and_field(settings) -> None:
    bad = b'{"comment": "ok"}\n{"comment": ""}\nnot json\n{"comment": "x", "context": []}\n' + (
        b'{"comment": "' + b"y" * 600 + b'"}\n'
    )
    with pytest.raises(ValidationError) as excinfo:
        services.parse_request_upload(bad, file_name="r.jsonl")
    problems = errors_of(excinfo)["upload"]
    assert problems[0] == "line 2, comment: required (a non-empty string)"
    assert problems[1].startswith("line 3: not valid JSON")
    assert problems[2] == "line 4, context: must be a JSON object"
    assert problems[3] == "line 5, comment: 600 characters; at most 500"
    with pytest.raises(ValidationError) as header:
        services.parse_request_upload(b"text,sku\nhi,1\n", file_name="r.csv")
    assert "'comment' column" in errors_of(header)["upload"][0]
    settings.HAT_MAX_UPLOAD_BYTES = 10
    with pytest.raises(ValidationError) as big:
        services.parse_request_upload(b'{"comment": "hello there"}', file_name="r.jsonl")
    assert "at most 10" in errors_of(big)["upload"][0]


def test_an_upload_naming_an_unknown_product_is_refused(compact_room, operator) -> None:
    e1 = ModelEndpoint.objects.create(name="m1", base_url="http://127.0.0.1:9/v1")
    e2 = ModelEndpoint.objects.create(name="m2", base_url="http://127.0.0.1:9/v1")
    spec = services.BlindTestSpec(
        name="up",
        room=compact_room,
        compare=BlindTest.Compare.ENDPOINTS,
        endpoint_one=e1,
        endpoint_two=e2,
        request_source=BlindTest.RequestSource.UPLOAD,
        reply_source=BlindTest.ReplySource.GENERATED,
        upload=b"comment,product_sku\nhi,NOPE-1\n",
        upload_name="r.csv",
    )
    with pytest.raises(ValidationError) as excinfo:
        services.blind_test_create(spec=spec, created_by=operator)
    assert "NOPE-1" in errors_of(excinfo)["upload"][0]
    assert not BlindTest.objects.exists()


# --- stored replies and gold pairs -------------------------------------------------------------


def test_stored_replies_pair_both_arms_and_open_the_test(arms_experiment, operator) -> None:
    test = stored_arms_test(arms_experiment, operator, pairs=4)
    treatment_id = arms_experiment.arms.get(name="treatment").pk
    assert test.status == BlindTest.Status.OPEN
    pairs = list(test.pairs.order_by("position"))
    assert len(pairs) == 4
    for pair in pairs:
        assert pair.ready
        number = pair.comment.split("#")[1]
        # side one is the treatment (Harness) arm, side two the control (ReAct)
        assert pair.reply_one == f"Harness says yes #{number}"
        assert pair.reply_two == f"ReAct says maybe #{number}"
        assert pair.live_reply_one is not None
        assert pair.live_reply_one.experiment_arm_id == treatment_id
        assert pair.context["product"]["title"] == "Merino Wool Crew Sweater"
        assert pair.labels_needed == 1
    assert (test.progress_done, test.progress_total) == (8, 8)
    assert [s.label for s in test.sides.order_by("side")] == [
        "treatment (Harness agent)",
        "control (ReAct agent)",
    ]


def test_a_request_only_one_arm_answered_is_left_for_generation(
    arms_experiment, operator, django_capture_on_commit_callbacks, monkeypatch
) -> None:
    from experiments_app import tasks

    queued: list[int] = []
    monkeypatch.setattr(tasks.generate_blind_replies, "delay", queued.append)
    _control, treatment = list(arms_experiment.arms.order_by("position"))
    room = arms_experiment.rooms.get()
    add_reply(room, comment="Only harness saw this", arm=treatment, reply="H")
    with django_capture_on_commit_callbacks(execute=True):
        test = services.blind_test_create(spec=arm_spec(arms_experiment), created_by=operator)
    pair = test.pairs.get()
    assert (pair.reply_one, pair.reply_two, pair.ready) == ("H", "", False)
    assert test.status == BlindTest.Status.GENERATING
    assert (test.progress_done, test.progress_total) == (1, 2)
    assert queued == [test.pk]


def test_a_fallback_reply_is_not_a_stored_reply(arms_experiment, operator, monkeypatch) -> None:
    from experiments_app import tasks

    monkeypatch.setattr(tasks.generate_blind_replies, "delay", lambda _id: None)
    control, treatment = list(arms_experiment.arms.order_by("position"))
    room = arms_experiment.rooms.get()
    add_reply(room, comment="q", arm=treatment, reply="H")
    fell = add_reply(room, comment="q", arm=control, reply="Our team will get back to you")
    LiveReply.objects.filter(pk=fell.pk).update(fallback=True, fallback_reason="model_timeout")
    test = services.blind_test_create(spec=arm_spec(arms_experiment, size=1), created_by=operator)
    pair = test.pairs.get()
    assert pair.reply_two == ""


def test_gold_pairs_are_compliant_vs_violating_and_interleaved(arms_experiment, operator) -> None:
    test = stored_arms_test(arms_experiment, operator, pairs=12, gold_pairs=6, seed=5)
    pairs = list(test.pairs.order_by("position"))
    gold = [p for p in pairs if p.is_gold]
    assert len(pairs) == 18 and len(gold) == 6
    catalog = {p.sku: p for p in Product.objects.filter(room=test.room)}
    for pair in gold:
        product = catalog[pair.context["product_sku"]]
        right = pair.reply_one if pair.gold_side == "one" else pair.reply_two
        wrong = pair.reply_two if pair.gold_side == "one" else pair.reply_one
        assert f"{product.price:.2f} USD" in right
        assert f"{product.price:.2f} USD" not in wrong  # a wrong catalog price
        assert "guaranteed 100%" in wrong and "did anyone watch the game" in wrong
        assert pair.ready and pair.labels_needed == test.labels_per_pair
    # the compliant side is drawn at random, and gold is not clustered at the end
    assert {p.gold_side for p in gold} == {"one", "two"}
    positions = [p.position for p in gold]
    assert positions != list(range(12, 18))
    assert min(positions) < 12
    # deterministic: the same seed gives the same replies
    assert (
        services.gold_replies(
            catalog["SW-1001"], [catalog["JK-2001"]], "USD", "How much?"
        ).violating.count("199.00 USD")
        == 1
    )


def test_gold_pairs_need_a_catalog(room, operator) -> None:
    e1 = ModelEndpoint.objects.create(name="m1", base_url="http://127.0.0.1:9/v1")
    e2 = ModelEndpoint.objects.create(name="m2", base_url="http://127.0.0.1:9/v1")
    harness_services.harness_version_publish(
        version=harness_services.harness_version_create(
            harness=room.harness,
            content=__import__("tests.conftest", fromlist=["x"]).harness_from_yaml(
                __import__("tests.conftest", fromlist=["x"]).DEMO_HARNESS.read_text("utf-8")
            ),
            base_version=None,
            author=operator,
        )
    )
    room.harness.refresh_from_db()
    spec = services.BlindTestSpec(
        name="g",
        room=room,
        compare=BlindTest.Compare.ENDPOINTS,
        endpoint_one=e1,
        endpoint_two=e2,
        request_source=BlindTest.RequestSource.UPLOAD,
        reply_source=BlindTest.ReplySource.GENERATED,
        upload=b'{"comment": "hi"}',
        gold_pairs=2,
    )
    with pytest.raises(ValidationError) as excinfo:
        services.blind_test_create(spec=spec, created_by=operator)
    assert "no products" in errors_of(excinfo)["gold_pairs"][0]


def test_close_and_reopen(arms_experiment, operator) -> None:
    test = stored_arms_test(arms_experiment, operator, pairs=2)
    services.blind_test_close(test=test)
    assert test.status == BlindTest.Status.CLOSED
    with pytest.raises(ValidationError) as excinfo:
        services.blind_test_close(test=test)
    assert list(errors_of(excinfo)) == ["status"]
    services.blind_test_open(test=test)
    assert BlindTest.objects.get(pk=test.pk).status == BlindTest.Status.OPEN


# --- labelers ----------------------------------------------------------------------------------


def test_a_set_password_link_issued_before_the_people_invite_still_works_once(
    client, operator
) -> None:
    # given a labeler invited the old way (POST /api/v1/labelers/ before it moved to People):
    # no usable password and a Django password-reset link
    from django.contrib.auth.tokens import PasswordResetTokenGenerator
    from django.urls import reverse
    from django.utils.encoding import force_bytes
    from django.utils.http import urlsafe_base64_encode

    from tests.factories import UserFactory

    user = UserFactory(username="lena", role=Role.LABELER)
    user.set_unusable_password()
    user.save()
    path = reverse(
        "console:set-password",
        kwargs={
            "uidb64": urlsafe_base64_encode(force_bytes(user.pk)),
            "token": PasswordResetTokenGenerator().make_token(user),
        },
    )
    # Django's confirm view: the first GET swaps the token into the session
    response = client.get(path, follow=True)
    assert response.status_code == 200 and b"Choose a password" in response.content
    form_url = response.redirect_chain[-1][0]
    done = client.post(
        form_url, {"new_password1": "a-long-pass-phrase-9", "new_password2": "a-long-pass-phrase-9"}
    )
    assert done.status_code == 302
    user.refresh_from_db()
    assert user.check_password("a-long-pass-phrase-9")
    again = client.get(path, follow=True)
    assert b"This link has expired" in again.content


def test_assign_only_labelers_and_unassign(arms_experiment, operator, labeler) -> None:
    test = stored_arms_test(arms_experiment, operator, pairs=1)
    assert (
        services.blind_test_assign_labelers(test=test, labelers=[labeler], assigned_by=operator)
        == 1
    )
    assert (
        services.blind_test_assign_labelers(test=test, labelers=[labeler], assigned_by=operator)
        == 0
    )
    with pytest.raises(ValidationError) as excinfo:
        services.blind_test_assign_labelers(test=test, labelers=[operator], assigned_by=operator)
    assert "Not a labeler: op" in errors_of(excinfo)["labelers"][0]
    services.blind_test_unassign_labeler(test=test, labeler=labeler)
    assert not test.assignments.exists()


# --- results -----------------------------------------------------------------------------------


def make_labelers(count: int) -> list[Any]:
    return [UserFactory(username=f"lab{i}", role=Role.LABELER) for i in range(count)]


def put_labels(
    test: BlindTest, plan: dict[int, list[str]], labelers: list[Any], left: str = "one"
) -> None:
    """``plan``: pair position -> choices, one per labeler in order."""
    pairs = {p.position: p for p in test.pairs.all()}
    rows = []
    for position, choices in plan.items():
        for labeler, choice in zip(labelers, choices, strict=False):
            rows.append(
                BlindLabel(
                    pair=pairs[position],
                    test=test,
                    labeler=labeler,
                    choice=choice,
                    left_side=left,
                    reason=f"r{position}",
                    seconds=1.5,
                )
            )
    BlindLabel.objects.bulk_create(rows)
    for position, choices in plan.items():
        BlindPair.objects.filter(pk=pairs[position].pk).update(label_count=len(choices))


def test_the_reports_35_64_1_through_the_selector(arms_experiment, operator) -> None:
    test = stored_arms_test(arms_experiment, operator, pairs=100)
    [labeler] = make_labelers(1)
    choices = ["one"] * 35 + ["tie"] * 64 + ["two"]
    put_labels(test, {i: [c] for i, c in enumerate(choices)}, [labeler])
    results = selectors.blind_test_results(test)
    p = results.preference
    assert p is not None
    assert (p.pairs, p.wins, p.ties, p.losses) == (100, 35, 64, 1)
    assert p.win_rate.estimate == pytest.approx(35 / 36)
    assert round(100 * p.win_rate.estimate, 1) == 97.2
    assert (round(100 * p.win_rate.low, 1), round(100 * p.win_rate.high, 1)) == (85.8, 99.5)
    assert p.sign_test_p == pytest.approx(binomtest(35, 36, 0.5).pvalue)
    assert 1e-10 < p.sign_test_p < 1e-8
    assert p.tie_rate == pytest.approx(0.64)
    assert p.score.estimate == pytest.approx((35 + 32) / 100)
    assert results.headline() == (
        "treatment (Harness agent) wins 35 · ties 64 · control (ReAct agent) wins 1 over 100 pairs"
    )


def test_results_match_the_preference_module_on_a_hand_built_set(arms_experiment, operator) -> None:
    test = stored_arms_test(
        arms_experiment,
        operator,
        pairs=6,
        gold_pairs=3,
        seed=1,
        labels_per_pair=3,
        gold_min_accuracy=0.75,
    )
    a, b, c = make_labelers(3)
    regular = sorted(p.position for p in test.pairs.filter(is_gold=False))
    gold = list(test.pairs.filter(is_gold=True).order_by("position"))
    plan = {
        regular[0]: ["one", "one", "two"],
        regular[1]: ["one", "tie", "one"],
        regular[2]: ["two", "two", "two"],
        regular[3]: ["both_bad", "tie", "one"],
        regular[4]: ["one", "one", "one"],
        regular[5]: ["one", "two", "tie"],
    }
    put_labels(test, plan, [a, b, c], left="two")
    # gold: a and b right every time, c wrong every time
    wrong = {"one": "two", "two": "one"}
    put_labels(
        test,
        {g.position: [g.gold_side, g.gold_side, wrong[g.gold_side]] for g in gold},
        [a, b, c],
    )
    results = selectors.blind_test_results(test, resamples=500)
    mapping = {"one": "a", "two": "b", "tie": "tie", "both_bad": "both_bad"}
    pair_ids = {p.position: str(p.pk) for p in test.pairs.all()}
    expected = preference_result(
        [
            Label(pair_ids[pos], str(user.pk), mapping[choice], False)  # type: ignore[arg-type]
            for pos, choices in plan.items()
            for user, choice in zip([a, b, c], choices, strict=True)
        ],
        resamples=500,
        seed=test.pk,
    )
    assert results.preference == expected
    p = results.preference
    # by majority: one, one, two, tie (split both_bad/tie/one), one, tie (split)
    assert (p.wins, p.ties, p.losses) == (3, 2, 1)
    lo, hi = proportion_confint(3, 4, alpha=0.05, method="wilson")
    assert (p.win_rate.low, p.win_rate.high) == (pytest.approx(lo), pytest.approx(hi))
    # left was side two on every label: 4 of the 10 decisive chose side two (the left)
    decisive = [c for cs in plan.values() for c in cs if c in ("one", "two")]
    assert p.left_share == pytest.approx(decisive.count("two") / len(decisive))
    assert results.both_bad_rate == pytest.approx(1 / 18)
    assert (results.labels, results.gold_labels) == (18, 9)
    stats = {s.username: s for s in results.labelers}
    assert [s.username for s in results.labelers] == ["lab0", "lab1", "lab2"]
    assert (stats["lab0"].labels, stats["lab0"].gold_correct, stats["lab0"].gold_labels) == (
        9,
        3,
        3,
    )
    assert stats["lab2"].gold_correct == 0 and stats["lab2"].flagged
    assert not stats["lab0"].flagged and not stats["lab1"].flagged
    # agreement with the pair outcome: lab0 chose one,one,two,both_bad(tie),one,one
    # against majorities win,win,loss,tie,win,tie -> 5 of 6
    assert stats["lab0"].agreement == pytest.approx(5 / 6)
    assert stats["lab0"].agreement_n == 6


def test_a_labeler_with_too_few_gold_labels_is_not_flagged(arms_experiment, operator) -> None:
    test = stored_arms_test(arms_experiment, operator, pairs=2, gold_pairs=2, seed=2)
    [lab] = make_labelers(1)
    gold = list(test.pairs.filter(is_gold=True))
    wrong = {"one": "two", "two": "one"}
    put_labels(test, {g.position: [wrong[g.gold_side]] for g in gold}, [lab])
    [stats] = selectors.blind_test_results(test).labelers
    assert stats.gold_labels == 2 and stats.gold_correct == 0
    assert not stats.flagged  # under MIN_GOLD_LABELS
    assert selectors.blind_test_results(test).preference is None


def test_results_cost_a_fixed_number_of_queries(
    arms_experiment, operator, django_assert_max_num_queries
) -> None:
    test = stored_arms_test(arms_experiment, operator, pairs=30, gold_pairs=5, labels_per_pair=3)
    labelers = make_labelers(3)
    put_labels(test, {p.position: ["one", "tie", "two"] for p in test.pairs.all()}, labelers)
    with django_assert_max_num_queries(4):
        results = selectors.blind_test_results(test, resamples=200)
    assert results.labels == 90


def test_labels_csv_round_trip(arms_experiment, operator) -> None:
    test = stored_arms_test(
        arms_experiment, operator, pairs=3, gold_pairs=1, seed=4, labels_per_pair=2
    )
    a, b = make_labelers(2)
    plan = {p.position: ["one", "both_bad"] for p in test.pairs.all()}
    put_labels(test, plan, [a, b], left="two")
    text = "".join(selectors.blind_test_labels_csv(test))
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == list(selectors.CSV_COLUMNS)
    assert len(rows) == BlindLabel.objects.filter(test=test).count() == 8
    by_key = {(r["pair"], r["labeler"]): r for r in rows}
    for label in BlindLabel.objects.filter(test=test).select_related("pair", "labeler"):
        row = by_key[(label.pair.token, label.labeler.username)]
        assert row["choice"] == label.choice
        assert row["reply_one"] == label.pair.reply_one
        assert row["comment"] == label.pair.comment
        assert row["side_one"] == "treatment (Harness agent)"
        assert row["left_side"] == "control (ReAct agent)"
        assert row["preferred"] == (
            "treatment (Harness agent)" if label.choice == "one" else "both bad"
        )
        assert row["gold"] == ("yes" if label.pair.is_gold else "no")
        assert row["reason"] == label.reason and row["seconds"] == "1.50"
    assert sum(r["gold"] == "yes" for r in rows) == 2
    assert not math.isnan(float(rows[0]["position"]))
    assert len(set(itertools.chain(r["pair"] for r in rows))) == 4


@pytest.mark.parametrize(
    ("reason", "hook_blocked", "answer"),
    [
        ("hook:no_price_guess", False, True),  # a hook's fallback reply: what the viewer got
        ("", True, True),
        ("max_steps", False, True),  # the agent ran out of steps: its own behaviour
        ("model_timeout", False, False),  # the infrastructure failing, not the side
        ("model_unavailable", False, False),
        ("deadline", False, False),
    ],
)
def test_which_fallbacks_count_as_the_sides_answer(
    reason: str, hook_blocked: bool, answer: bool
) -> None:
    assert services.fallback_is_the_agents_answer(reason, hook_blocked) is answer
