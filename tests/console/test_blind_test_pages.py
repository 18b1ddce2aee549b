"""The operators' blind test pages: list, create form (errors on the field), the test page
(progress, sides, results as text, chart, labelers, CSV), the labelers page (invite: a
one-time link), operator-only (merchants and labelers 404), bounded queries."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from experiments_app import services as experiment_services
from experiments_app.models import BlindTest, BlindTestLabeler, Experiment
from experiments_app.routing import invalidate_running_experiments
from tests.experiments_app.test_blind_tests import make_labelers, put_labels, stored_arms_test
from training_app.models import ModelEndpoint

pytestmark = pytest.mark.django_db


@pytest.fixture
def experiment(compact_room: Any, operator: Any) -> Iterator[Experiment]:
    invalidate_running_experiments()
    endpoint = ModelEndpoint.objects.create(name="ab-endpoint", base_url="http://127.0.0.1:9/v1")
    version = compact_room.harness.published_version
    arms = [
        experiment_services.ArmSpec(
            name=name, kind=kind, harness_version=version, endpoint=endpoint, weight=5000
        )
        for name, kind in (("control", "react"), ("treatment", "harness"))
    ]
    spec = experiment_services.ExperimentSpec(
        name="Harness vs ReAct", rooms=[compact_room], arms=arms
    )
    created = experiment_services.experiment_create(spec=spec, created_by=operator)
    yield experiment_services.experiment_start(experiment=created)
    invalidate_running_experiments()


@pytest.fixture
def labeled(experiment: Experiment, operator: Any) -> BlindTest:
    """Five pairs, k=1: side one (treatment) wins 3, ties 1, side two wins 1; one gold pair
    the labeler gets wrong... three times over three gold pairs (flagged)."""
    test = stored_arms_test(experiment, operator, pairs=5, gold_pairs=3, seed=9)
    [lab] = make_labelers(1)
    regular = sorted(p.position for p in test.pairs.filter(is_gold=False))
    put_labels(
        test, dict(zip(regular, [["one"], ["one"], ["one"], ["tie"], ["two"]], strict=True)), [lab]
    )
    wrong = {"one": "two", "two": "one"}
    put_labels(
        test, {g.position: [wrong[g.gold_side]] for g in test.pairs.filter(is_gold=True)}, [lab]
    )
    return test


def test_pages_are_for_operators_only(
    merchant_client: Client, labeler_client: Client, labeled: BlindTest
) -> None:
    urls = [
        "/blind-tests/",
        "/blind-tests/new/",
        "/blind-tests/labelers/",
        f"/blind-tests/{labeled.pk}/",
        f"/blind-tests/{labeled.pk}/status/",
        f"/blind-tests/{labeled.pk}/labels.csv",
    ]
    for client in (merchant_client, labeler_client):
        for url in urls:
            assert client.get(url).status_code == 404, url
        assert client.post(f"/blind-tests/{labeled.pk}/close/").status_code == 404
    assert Client().get("/blind-tests/").status_code == 302  # to the login page


def test_nav_link_for_operators(operator_client: Client, merchant_client: Client) -> None:
    assert b'href="/blind-tests/"' in operator_client.get("/rooms/").content
    assert b'href="/blind-tests/"' not in merchant_client.get("/rooms/").content


def test_the_test_page_shows_the_aggregate_as_text(
    operator_client: Client, labeled: BlindTest
) -> None:
    response = operator_client.get(f"/blind-tests/{labeled.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert (
        "treatment (Harness agent) wins 3 · ties 1 · control (ReAct agent) wins 1 over 5 pairs"
        in html
    )
    assert "75.0% (Wilson 95%" in html  # 3 of 4 decisive
    assert "Sign test p-value" in html and "Fleiss&#x27; kappa" in html
    assert 'data-plotly-figure="figure-blind"' in html and 'id="figure-blind"' in html
    assert "below 80% on gold" in html  # the labeler failed all three gold pairs
    assert "0 / 3" in html
    found = re.search(
        r'<script id="figure-blind" type="application/json">(.*?)</script>', html, re.S
    )
    assert found is not None
    figure = json.loads(found.group(1))
    bars = [(t["name"], t["x"][0]) for t in figure["data"] if t["type"] == "bar"]
    assert bars == [
        ("treatment (Harness agent) wins", 60.0),
        ("Ties", 20.0),
        ("control (ReAct agent) wins", 20.0),
    ]
    [point] = [t for t in figure["data"] if t["type"] == "scatter"]
    assert point["x"] == [75.0]
    # no inline script: every <script> has a src or is JSON data
    for tag in re.findall(r"<script[^>]*>", html):
        assert "src=" in tag or 'type="application/json"' in tag, tag


def test_list_page(
    operator_client: Client, labeled: BlindTest, django_assert_max_num_queries: Any
) -> None:
    with django_assert_max_num_queries(8):
        response = operator_client.get("/blind-tests/")
    assert response.status_code == 200
    assert labeled.name.encode() in response.content and b"5 / 5" in response.content


def test_detail_page_query_count_does_not_grow_with_labels(
    operator_client: Client,
    experiment: Experiment,
    operator: Any,
    django_assert_max_num_queries: Any,
) -> None:
    test = stored_arms_test(experiment, operator, pairs=40, gold_pairs=5, labels_per_pair=3)
    labs = make_labelers(3)
    put_labels(test, {p.position: ["one", "tie", "two"] for p in test.pairs.all()}, labs)
    for lab in labs:
        BlindTestLabeler.objects.create(test=test, labeler=lab)
    with django_assert_max_num_queries(16):
        response = operator_client.get(f"/blind-tests/{test.pk}/")
    assert response.status_code == 200


def test_create_form_puts_service_errors_on_the_field(
    operator_client: Client, experiment: Experiment
) -> None:
    control = experiment.arms.get(position=0)
    room = experiment.rooms.get()
    form = {
        "name": "Form test",
        "room": room.pk,
        "compare": "experiment_arms",
        "experiment": experiment.pk,
        "arm_one": control.pk,
        "arm_two": control.pk,
        "request_source": "live_replies",
        "size": 10,
        "seed": 0,
        "reply_source": "stored",
        "labels_per_pair": 1,
        "gold_pairs": 0,
        "gold_min_accuracy": 0.8,
    }
    response = operator_client.post("/blind-tests/new/", form)
    assert response.status_code == 400
    html = response.content.decode()
    block = html[html.index('data-field="arm_two"') :][:800]
    assert (
        "has-error"
        in html[html.index('data-field="arm_two"') - 40 : html.index('data-field="arm_two"')]
    )
    assert "Pick two different arms." in block
    assert not BlindTest.objects.exists()


def test_create_form_makes_a_test_from_an_upload(
    operator_client: Client, experiment: Experiment, monkeypatch: Any
) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from experiments_app import tasks

    monkeypatch.setattr(tasks.generate_blind_replies, "delay", lambda _id: None)
    control, treatment = list(experiment.arms.order_by("position"))
    upload = SimpleUploadedFile(
        "rows.csv", b"comment,product_sku\nHow much?,SW-1001\n", content_type="text/csv"
    )
    response = operator_client.post(
        "/blind-tests/new/",
        {
            "name": "Upload test",
            "room": experiment.rooms.get().pk,
            "compare": "experiment_arms",
            "experiment": experiment.pk,
            "arm_one": treatment.pk,
            "arm_two": control.pk,
            "request_source": "upload",
            "upload": upload,
            "reply_source": "generated",
            "labels_per_pair": 2,
            "gold_pairs": 1,
            "gold_min_accuracy": 0.8,
        },
    )
    test = BlindTest.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/blind-tests/{test.pk}/"
    assert test.status == BlindTest.Status.GENERATING
    page = operator_client.get(f"/blind-tests/{test.pk}/").content.decode()
    assert 'data-finished="0"' in page and "blind_test_progress.js" in page
    status = operator_client.get(f"/blind-tests/{test.pk}/status/").json()
    assert status == {
        "status": "generating",
        "status_display": "Generating replies",
        "progress_done": 0,
        "progress_total": 2,
        "percent": 0,
        "finished": False,
        "error": "",
    }


def test_upload_row_errors_show_on_the_upload_field(
    operator_client: Client, experiment: Experiment
) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    control, treatment = list(experiment.arms.order_by("position"))
    response = operator_client.post(
        "/blind-tests/new/",
        {
            "name": "Bad upload",
            "room": experiment.rooms.get().pk,
            "compare": "experiment_arms",
            "experiment": experiment.pk,
            "arm_one": treatment.pk,
            "arm_two": control.pk,
            "request_source": "upload",
            "upload": SimpleUploadedFile("rows.jsonl", b'{"comment": "ok"}\n{"nope": 1}\n'),
            "reply_source": "generated",
            "labels_per_pair": 2,
            "gold_pairs": 0,
            "gold_min_accuracy": 0.8,
        },
    )
    assert response.status_code == 400
    assert b"line 2, comment: required (a non-empty string)" in response.content


def test_csv_download_close_and_assign(operator_client: Client, labeled: BlindTest) -> None:
    csv_response = operator_client.get(f"/blind-tests/{labeled.pk}/labels.csv")
    assert csv_response["Content-Type"].startswith("text/csv")
    lines = b"".join(csv_response.streaming_content).decode().splitlines()  # type: ignore[attr-defined]
    assert lines[0].startswith("pair,position,gold") and len(lines) == 9
    lab = labeled.labels.first().labeler  # type: ignore[union-attr]
    assigned = operator_client.post(f"/blind-tests/{labeled.pk}/labelers/", {"labelers": [lab.pk]})
    assert assigned.status_code == 302
    assert list(labeled.assignments.values_list("labeler_id", flat=True)) == [lab.pk]
    operator_client.post(f"/blind-tests/{labeled.pk}/labelers/{lab.pk}/remove/")
    assert not labeled.assignments.exists()
    operator_client.post(f"/blind-tests/{labeled.pk}/close/")
    labeled.refresh_from_db()
    assert labeled.status == BlindTest.Status.CLOSED
    assert b"Reopen test" in operator_client.get(f"/blind-tests/{labeled.pk}/").content


def test_invite_a_labeler_shows_the_link_once(operator_client: Client) -> None:
    response = operator_client.post(
        "/blind-tests/labelers/", {"username": "nia", "email": "nia@example.test"}
    )
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    link = re.search(r"http://testserver(/invite/[A-Za-z0-9_-]+/)<", response.content.decode())
    assert link is not None
    listing = operator_client.get("/blind-tests/labelers/").content.decode()
    assert "nia@example.test" in listing and "not yet" in listing
    assert link.group(1) not in listing  # shown once only
    bad = operator_client.post(
        "/blind-tests/labelers/", {"username": "nia", "email": "x@example.test"}
    )
    assert bad.status_code == 400 and b"is taken" in bad.content
    # the labeler follows the link and sets a password; the invite is in the People audit log
    anonymous = Client()
    assert anonymous.get(link.group(1)).status_code == 200
    done = anonymous.post(
        link.group(1),
        {"new_password1": "labels-all-day-42", "new_password2": "labels-all-day-42"},
    )
    assert done.status_code == 302
    from console.models import PeopleAuditEvent

    assert list(
        PeopleAuditEvent.objects.filter(target_username="nia")
        .order_by("id")
        .values_list("action", flat=True)
    ) == ["invited", "invite_accepted"]
    from django.contrib.auth import get_user_model

    assert get_user_model().objects.get(username="nia").check_password("labels-all-day-42")
