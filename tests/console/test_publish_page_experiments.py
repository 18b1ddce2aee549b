"""The publish (and rollback) confirmation says what a publish really changes: running
experiments of the room keep their arms' pinned versions; only the room's default traffic
moves to the new version."""

from __future__ import annotations

import dataclasses
import html as html_lib
import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from console.roles import is_operator
from experiments_app import services as experiment_services
from experiments_app.selectors.room_pins import running_experiments_pinning
from harness_app import services
from harness_app.harness.serialization import harness_from_dict
from harness_app.models import HarnessVersion
from training_app.models import ModelEndpoint

pytestmark = pytest.mark.django_db


def new_draft(harness: Any, author: Any, text: str) -> HarnessVersion:
    latest = harness.versions.order_by("-number").first()
    content = harness_from_dict(latest.content)
    skills = list(content.skills)
    skills[0] = dataclasses.replace(skills[0], description=text)
    return services.harness_version_create(
        harness=harness,
        content=dataclasses.replace(content, skills=tuple(skills)),
        base_version=latest.number,
        author=author,
    )


@pytest.fixture
def endpoint() -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        name="ab-endpoint", base_url="http://127.0.0.1:9/v1", model_name="m"
    )


def start_experiment(
    rooms: list[Any],
    versions: list[HarnessVersion],
    endpoint: ModelEndpoint,
    operator: Any,
    *,
    name: str = "Wording test",
    coverage: int = 10_000,
    layer_start: int = 0,
    layer_end: int = 10_000,
) -> Any:
    weight = 10_000 // len(versions)
    arms = [
        experiment_services.ArmSpec(
            name="control" if i == 0 else f"treatment{i}",
            kind="harness",
            harness_version=version,
            endpoint=endpoint,
            weight=weight + (10_000 - weight * len(versions) if i == 0 else 0),
        )
        for i, version in enumerate(versions)
    ]
    experiment = experiment_services.experiment_create(
        spec=experiment_services.ExperimentSpec(
            name=name,
            rooms=rooms,
            arms=arms,
            unit="uv",
            coverage=coverage,
            layer_start=layer_start,
            layer_end=layer_end,
        ),
        created_by=operator,
    )
    return experiment_services.experiment_start(experiment=experiment)


def page_text(client: Client, url: str) -> str:
    """The page as a reader sees it: tags dropped, entities decoded, whitespace collapsed."""
    body = client.get(url).content.decode()
    body = body.split("<main", 1)[-1]
    return re.sub(r"\s+", " ", html_lib.unescape(re.sub(r"<[^>]+>", " ", body)))


def test_without_experiments_the_room_moves_to_the_new_version(
    merchant_client: Client, harness: Any, operator: Any
) -> None:
    draft = new_draft(harness, operator, "Use when a viewer asks about products.")
    text = page_text(merchant_client, reverse("console:version-publish", args=[harness.pk, 2]))
    assert (
        "will start using version 2 for its next replies (no experiment is running in it)" in text
    )
    assert "runs version 1 now" in text
    assert "pinned" not in text
    assert draft.status == "draft"


def test_a_running_experiment_keeps_its_pinned_versions(
    operator_client: Client, harness: Any, operator: Any, endpoint: ModelEndpoint
) -> None:
    # given v1 published, v2 published then v3 a draft; an experiment pins v1 and v2
    v1 = harness.versions.get(number=1)
    v2 = new_draft(harness, operator, "Use when a viewer asks. Second wording.")
    services.harness_version_publish(version=v2)
    new_draft(harness, operator, "Use when a viewer asks. Third wording.")
    experiment = start_experiment([harness.room], [v1, v2], endpoint, operator, coverage=5000)
    # when the operator opens the publish page of v3
    url = reverse("console:version-publish", args=[harness.pk, 3])
    text = page_text(operator_client, url)
    # then it no longer claims the room switches wholesale
    assert "will start using version 3 for its next replies (no experiment" not in text
    assert "default traffic will use version 3 for its next replies" in text
    assert "1 running experiment keeps its pinned versions" in text
    assert "keeps going to the version each arm pins, whatever is published" in text
    assert "none follows the published one" in text
    assert "Only the room's default traffic" in text and "uses version 3" in text
    assert (
        "Wording test (unit UV (viewer), covers 50% of units): "
        "control → v1, treatment1 → v2 (the version live now)."
    ) in text
    assert "no live reply in this room uses version 3" not in text  # half the UVs are outside
    html = operator_client.get(url).content.decode()
    assert reverse("console:experiment-detail", args=[experiment.pk]) in html


def test_an_experiment_covering_every_unit_means_no_live_reply_uses_the_new_version(
    merchant_client: Client, harness: Any, operator: Any, endpoint: ModelEndpoint
) -> None:
    v1 = harness.versions.get(number=1)
    v2 = new_draft(harness, operator, "Use when a viewer asks. Second wording.")
    start_experiment([harness.room], [v1, v1], endpoint, operator)
    text = page_text(merchant_client, reverse("console:version-publish", args=[harness.pk, 2]))
    assert "control → v1 (the version live now), treatment1 → v1 (the version live now)." in text
    assert (
        "It covers every unit: until it stops, no live reply in this room uses version 2."
    ) in text
    assert v2.status == "draft"


def test_an_arm_pinning_the_version_being_published_is_named(
    operator_client: Client, harness: Any, operator: Any, endpoint: ModelEndpoint
) -> None:
    v1 = harness.versions.get(number=1)
    v2 = new_draft(harness, operator, "Use when a viewer asks. Second wording.")
    services.harness_version_publish(version=v2)
    start_experiment([harness.room], [v1, v2], endpoint, operator, layer_end=2500)
    # the rollback page to v1 tells the same story
    text = page_text(operator_client, reverse("console:version-rollback", args=[harness.pk, 1]))
    assert "control → v1 (this version), treatment1 → v2 (the version live now)." in text
    assert "covers 25% of units" in text
    assert "default traffic will use version 1" in text


def test_a_merchant_learns_nothing_about_an_experiment_spanning_other_owners_rooms(
    merchant_client: Client,
    harness: Any,
    other_room: Any,
    operator: Any,
    endpoint: ModelEndpoint,
) -> None:
    v1 = harness.versions.get(number=1)
    new_draft(harness, operator, "Use when a viewer asks. Second wording.")
    experiment = start_experiment(
        [harness.room, other_room], [v1, v1], endpoint, operator, name="Cross-owner secret"
    )
    url = reverse("console:version-publish", args=[harness.pk, 2])
    text = page_text(merchant_client, url)
    assert "1 running experiment keeps its pinned versions" in text
    assert "An experiment that also runs in rooms of other owners" in text
    assert "Cross-owner secret" not in text and "control →" not in text
    html = merchant_client.get(url).content.decode()
    assert reverse("console:experiment-detail", args=[experiment.pk]) not in html


def test_the_selector_reads_in_a_fixed_number_of_queries(
    harness: Any,
    operator: Any,
    endpoint: ModelEndpoint,
    django_assert_num_queries: Any,
) -> None:
    v1 = harness.versions.get(number=1)
    start_experiment([harness.room], [v1, v1, v1], endpoint, operator)
    is_operator(operator)  # the role lookup, cached on the user as in a request
    # experiments, their arms with versions and harnesses, which of them the user may see
    with django_assert_num_queries(3):
        pins = running_experiments_pinning(room=harness.room, user=operator)
    assert [arm.version_number for arm in pins[0].arms] == [1, 1, 1]
    assert pins[0].visible and pins[0].covers_all and pins[0].share == "100%"


def test_two_experiments_in_disjoint_layer_ranges_are_both_listed(
    operator_client: Client, harness: Any, operator: Any, endpoint: ModelEndpoint
) -> None:
    v1 = harness.versions.get(number=1)
    v2 = new_draft(harness, operator, "Use when a viewer asks. Second wording.")
    services.harness_version_publish(version=v2)
    new_draft(harness, operator, "Use when a viewer asks. Third wording.")
    start_experiment([harness.room], [v1, v2], endpoint, operator, coverage=5000, layer_end=5000)
    start_experiment([harness.room], [v2, v1], endpoint, operator, name="Second", layer_start=5000)
    text = page_text(operator_client, reverse("console:version-publish", args=[harness.pk, 3]))
    assert "2 running experiments keep their pinned versions" in text
    assert "viewers outside their coverage, and all traffic once they stop" in text
    assert "Wording test (unit UV (viewer), covers 25% of units)" in text
    assert (
        "Second (unit UV (viewer), covers 50% of units): "
        "control → v2 (the version live now), treatment1 → v1."
    ) in text
