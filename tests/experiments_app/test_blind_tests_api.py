"""The operators' blind tests API: create (field errors as 400s), list, detail with results,
the labels CSV, open / close, assign labelers, invite a labeler; merchants and labelers 403."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from console.models import PeopleAuditEvent
from console.roles import Role, user_roles
from experiments_app.models import BlindTest
from tests.experiments_app import test_blind_tests as base
from tests.experiments_app.test_blind_tests import (
    add_reply,
    make_labelers,
    put_labels,
    stored_arms_test,
)
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
arms_experiment = base.arms_experiment
URL = "/api/v1/blind-tests/"


def _body(experiment, **overrides):  # type: ignore[no-untyped-def]
    control, treatment = list(experiment.arms.order_by("position"))
    body = {
        "name": "API test",
        "room": experiment.rooms.get().pk,
        "compare": "experiment_arms",
        "experiment": experiment.pk,
        "arm_one": treatment.pk,
        "arm_two": control.pk,
        "request_source": "live_replies",
        "reply_source": "stored",
        "size": 10,
        "labels_per_pair": 1,
    }
    body.update(overrides)
    return body


def test_create_list_and_detail(operator_api: APIClient, arms_experiment) -> None:  # type: ignore[no-untyped-def]
    control, treatment = list(arms_experiment.arms.order_by("position"))
    room = arms_experiment.rooms.get()
    for i in range(3):
        add_reply(room, comment=f"q{i}", arm=treatment, reply=f"h{i}")
        add_reply(room, comment=f"q{i}", arm=control, reply=f"r{i}")
    created = operator_api.post(URL, _body(arms_experiment), format="json")
    assert created.status_code == 201, created.content
    data = created.json()
    assert (data["status"], data["pairs"], data["pairs_ready"]) == ("open", 3, 3)
    assert [s["label"] for s in data["sides"]] == [
        "treatment (Harness agent)",
        "control (ReAct agent)",
    ]
    assert data["results"]["preference"] is None
    listed = operator_api.get(URL)
    assert listed.status_code == 200
    assert [t["id"] for t in listed.json()["results"]] == [data["id"]]
    test = BlindTest.objects.get(pk=data["id"])
    [lab] = make_labelers(1)
    put_labels(
        test,
        {
            p.position: [c]
            for p, c in zip(test.pairs.order_by("position"), ["one", "one", "tie"], strict=True)
        },
        [lab],
    )
    detail = operator_api.get(f"{URL}{test.pk}/").json()
    pref = detail["results"]["preference"]
    assert (pref["wins"], pref["ties"], pref["losses"]) == (2, 1, 0)
    assert pref["win_rate"]["estimate"] == 1.0
    assert pref["fleiss_kappa"] is None  # one label per pair: no agreement to measure
    assert detail["results"]["headline"].startswith("treatment (Harness agent) wins 2 · ties 1")


def test_field_errors_are_400s_naming_the_field(operator_api: APIClient, arms_experiment) -> None:  # type: ignore[no-untyped-def]
    control = arms_experiment.arms.get(position=0)
    same = operator_api.post(
        URL, _body(arms_experiment, arm_one=control.pk, arm_two=control.pk), format="json"
    )
    assert same.status_code == 400
    assert [e["field"] for e in same.json()["errors"]] == ["arm_two"]
    rows = operator_api.post(
        URL,
        _body(arms_experiment, request_source="upload", rows=[{"comment": "ok"}, {"comment": ""}]),
        format="json",
    )
    assert rows.status_code == 400
    assert rows.json()["errors"] == [
        {"field": "upload", "message": "line 2, comment: required (a non-empty string)"}
    ]
    assert not BlindTest.objects.exists()


def test_upload_rows_create_a_generating_test(
    operator_api: APIClient, arms_experiment, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from experiments_app import tasks

    monkeypatch.setattr(tasks.generate_blind_replies, "delay", lambda _id: None)
    response = operator_api.post(
        URL,
        _body(
            arms_experiment,
            request_source="upload",
            reply_source="generated",
            rows=[{"comment": "How much?", "product_sku": "SW-1001"}, {"comment": "Sizes?"}],
        ),
        format="json",
    )
    assert response.status_code == 201, response.content
    assert (response.json()["status"], response.json()["progress_total"]) == ("generating", 4)


def test_labels_csv_open_close_and_labelers(
    operator_api: APIClient, arms_experiment, operator
) -> None:  # type: ignore[no-untyped-def]
    test = stored_arms_test(arms_experiment, operator, pairs=2)
    lab, other = make_labelers(2)
    put_labels(test, {p.position: ["two"] for p in test.pairs.all()}, [lab])
    csv_response = operator_api.get(f"{URL}{test.pk}/labels.csv")
    assert csv_response.status_code == 200
    assert (
        csv_response["Content-Disposition"]
        == f'attachment; filename="blind-test-{test.pk}-labels.csv"'
    )
    body = b"".join(csv_response.streaming_content)  # type: ignore[attr-defined]
    rows = list(csv.DictReader(io.StringIO(body.decode())))
    assert [r["preferred"] for r in rows] == ["control (ReAct agent)"] * 2
    closed = operator_api.post(f"{URL}{test.pk}/close/")
    assert closed.json()["status"] == "closed"
    again = operator_api.post(f"{URL}{test.pk}/close/")
    assert again.status_code == 400 and again.json()["errors"][0]["field"] == "status"
    assert operator_api.post(f"{URL}{test.pk}/open/").json()["status"] == "open"
    assigned = operator_api.post(
        f"{URL}{test.pk}/labelers/", {"labelers": [lab.pk, other.pk]}, format="json"
    )
    assert assigned.json() == {"added": 2, "assigned_labelers": sorted([lab.pk, other.pk])}
    not_labeler = operator_api.post(
        f"{URL}{test.pk}/labelers/", {"labelers": [operator.pk]}, format="json"
    )
    assert not_labeler.status_code == 400 and not_labeler.json()["errors"][0]["field"] == "labelers"
    assert operator_api.delete(f"{URL}{test.pk}/labelers/{lab.pk}/").status_code == 204
    assert operator_api.get(f"{URL}{test.pk}/").json()["assigned_labelers"] == [other.pk]


def test_invite_a_labeler(operator_api: APIClient, operator) -> None:  # type: ignore[no-untyped-def]
    # the People invite: an audit row and a one-time /invite/ link, under both keys
    response = operator_api.post(
        "/api/v1/labelers/", {"username": "ana", "email": "ana@example.test"}, format="json"
    )
    assert response.status_code == 201
    assert response["Cache-Control"] == "no-store"
    body = response.json()
    assert body["set_password_url"] == body["invite_url"]
    assert re.fullmatch(r"http://testserver/invite/[A-Za-z0-9_-]+/", body["invite_url"])
    assert body["expires_at"]
    user = get_user_model().objects.get(username="ana")
    assert body["id"] == user.pk and user_roles(user) == {Role.LABELER}
    assert not user.has_usable_password()
    event = PeopleAuditEvent.objects.get(target=user)
    assert (event.actor, event.action) == (operator, "invited")
    # the link works once, through the console's invite page
    path = body["invite_url"].removeprefix("http://testserver")
    password = "a-long-pass-phrase-9"
    done = Client().post(path, {"new_password1": password, "new_password2": password})
    assert done.status_code == 302
    assert get_user_model().objects.get(pk=user.pk).check_password(password)
    assert Client().get(path).status_code == 410
    dup = operator_api.post(
        "/api/v1/labelers/", {"username": "ana", "email": "x@example.test"}, format="json"
    )
    assert dup.status_code == 400 and dup.json()["errors"][0]["field"] == "username"
    taken = operator_api.post(
        "/api/v1/labelers/", {"username": "ana2", "email": "ANA@example.test"}, format="json"
    )
    assert taken.status_code == 400 and taken.json()["errors"][0]["field"] == "email"


def test_merchants_and_labelers_are_refused(
    merchant_api: APIClient, arms_experiment, operator
) -> None:  # type: ignore[no-untyped-def]
    test = stored_arms_test(arms_experiment, operator, pairs=1)
    labeler_api = APIClient()
    labeler_api.force_authenticate(UserFactory(username="lab-x", role=Role.LABELER))  # type: ignore[arg-type]
    for client in (merchant_api, labeler_api):
        for url in (URL, f"{URL}{test.pk}/", f"{URL}{test.pk}/labels.csv"):
            assert client.get(url).status_code == 403, url
        assert client.post(URL, _body(arms_experiment), format="json").status_code == 403
        assert (
            client.post(
                "/api/v1/labelers/", {"username": "z", "email": "z@example.test"}, format="json"
            ).status_code
            == 403
        )


def test_list_and_detail_query_counts(
    operator_api: APIClient, arms_experiment, operator, django_assert_max_num_queries
) -> None:  # type: ignore[no-untyped-def]
    for _ in range(3):
        test = stored_arms_test(arms_experiment, operator, pairs=4)
    labs = make_labelers(2)
    put_labels(test, {p.position: ["one"] for p in test.pairs.all()}, labs[:1])
    with django_assert_max_num_queries(6):
        assert len(operator_api.get(URL).json()["results"]) == 3
    with django_assert_max_num_queries(10):
        assert operator_api.get(f"{URL}{test.pk}/").json()["results"]["labels"] == 4
