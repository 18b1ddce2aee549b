"""Blind tests built straight with the ORM for the labeling tests (the operator's creation flow
is tested on its own): two sides with distinctive arm, harness, version, endpoint and model
names, so a leak test can search every labeler response for them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from console.roles import Role
from experiments_app import services as experiment_services
from experiments_app.models import BlindPair, BlindSide, BlindTest, BlindTestLabeler
from harness_app import services as harness_services
from harness_app.harness.serialization import harness_from_yaml
from harness_app.models import HarnessVersion
from training_app.models import ModelEndpoint

DEMO_HARNESS = (
    Path(__file__).resolve().parents[2] / "harness_app" / "demo_data" / "live_stream_harness.yaml"
)


@dataclass(frozen=True)
class SideNames:
    """Everything that identifies a side; none of it may reach a labeler."""

    arm: str
    side_label: str
    endpoint: str
    model: str
    version_number: int


SIDE_ONE = SideNames(
    arm="quokka-harness-arm",
    side_label="Quokka harness side",
    endpoint="pangolin-endpoint-east",
    model="narwhal-7b-instruct",
    version_number=4817,
)
SIDE_TWO = SideNames(
    arm="axolotl-react-arm",
    side_label="Axolotl ReAct side",
    endpoint="okapi-endpoint-west",
    model="capybara-13b-chat",
    version_number=5923,
)
TEST_NAME = "Secret operator name: harness v4817 vs react v5923"
ROOM_NAME = "Marmoset Autumn Live"
HARNESS_NAME = "Marmoset host harness"
EXPERIMENT_NAME = "Quokka vs Axolotl experiment"


def identity_strings() -> list[str]:
    """Every string that names a side, a version, an endpoint, a model or the test."""
    out = [TEST_NAME, EXPERIMENT_NAME, HARNESS_NAME]
    for side in (SIDE_ONE, SIDE_TWO):
        out += [side.arm, side.side_label, side.endpoint, side.model, str(side.version_number)]
    return out


def _version(room: Any, operator: Any, number: int, message: str) -> HarnessVersion:
    version = harness_services.harness_version_create(
        harness=room.harness,
        content=harness_from_yaml(DEMO_HARNESS.read_text("utf-8")),
        base_version=room.harness.versions.order_by("-number")
        .values_list("number", flat=True)
        .first(),
        author=operator,
        message=message,
    )
    HarnessVersion.objects.filter(pk=version.pk).update(number=number)
    version.refresh_from_db()
    return version


def build_blind_test(
    *,
    operator: Any,
    labelers: Sequence[Any] = (),
    pairs: int = 10,
    k: int = 3,
    status: str = BlindTest.Status.OPEN,
    with_experiment: bool = True,
    instructions: str = "Pick the reply that answers the viewer better.",
    gold_every: int = 0,
) -> BlindTest:
    """An open blind test of ``pairs`` ready pairs with k labels each, ``labelers`` assigned.
    Replies say which side wrote them only through ``reply_one`` / ``reply_two`` text."""
    from tests.factories import RoomFactory, UserFactory

    owner = UserFactory(role=Role.MERCHANT)
    room: Any = RoomFactory(owner=owner, name=ROOM_NAME)
    room.harness.name = HARNESS_NAME
    room.harness.save(update_fields=["name"])
    version_one = _version(room, operator, SIDE_ONE.version_number, "side one")
    version_two = _version(room, operator, SIDE_TWO.version_number, "side two")
    harness_services.harness_version_publish(version=version_one)
    endpoints = {
        names.arm: ModelEndpoint.objects.get_or_create(
            name=names.endpoint,
            defaults={"base_url": "http://127.0.0.1:9/v1", "model_name": names.model},
        )[0]
        for names in (SIDE_ONE, SIDE_TWO)
    }
    experiment = None
    arms: dict[str, Any] = {}
    if with_experiment:
        experiment = experiment_services.experiment_create(
            spec=experiment_services.ExperimentSpec(
                name=EXPERIMENT_NAME,
                rooms=[room],
                arms=[
                    experiment_services.ArmSpec(
                        SIDE_ONE.arm, "harness", version_one, endpoints[SIDE_ONE.arm], 5000
                    ),
                    experiment_services.ArmSpec(
                        SIDE_TWO.arm, "react", version_two, endpoints[SIDE_TWO.arm], 5000
                    ),
                ],
            ),
            created_by=operator,
        )
        arms = {arm.name: arm for arm in experiment.arms.all()}
    test = BlindTest.objects.create(
        name=TEST_NAME,
        instructions=instructions,
        room=room,
        compare=(
            BlindTest.Compare.EXPERIMENT_ARMS if with_experiment else BlindTest.Compare.ENDPOINTS
        ),
        experiment=experiment,
        request_source=BlindTest.RequestSource.UPLOAD,
        reply_source=BlindTest.ReplySource.STORED,
        labels_per_pair=k,
        status=status,
        created_by=operator,
    )
    for side, names, version, agent in (
        ("one", SIDE_ONE, version_one, BlindSide.Agent.HARNESS),
        ("two", SIDE_TWO, version_two, BlindSide.Agent.REACT),
    ):
        BlindSide.objects.create(
            test=test,
            side=side,
            label=names.side_label,
            agent=agent,
            experiment_arm=arms.get(names.arm),
            harness_version=version,
            endpoint=endpoints[names.arm],
        )
    BlindPair.objects.bulk_create(
        [
            BlindPair(
                test=test,
                position=i,
                comment=f"Viewer {i}: does the wool coat come in navy?",
                context={
                    "product": {"sku": f"COAT-{i:03d}", "title": "Wool coat", "price": "89.00"}
                },
                reply_one=f"First-side reply {i}: yes, navy is in stock.",
                reply_two=f"Second-side reply {i}: let me check the catalog for you.",
                ready=True,
                is_gold=bool(gold_every) and i % gold_every == 0,
                gold_side="one" if gold_every and i % gold_every == 0 else "",
                labels_needed=k,
            )
            for i in range(pairs)
        ]
    )
    BlindTestLabeler.objects.bulk_create(
        [BlindTestLabeler(test=test, labeler=user, assigned_by=operator) for user in labelers]
    )
    return test
