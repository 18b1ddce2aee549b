"""Which harness versions a room's running experiments pin: what a publish does not change.

Every experiment arm pins one harness version (``ExperimentArm.harness_version`` is
required); no arm follows the room's published version. So while an experiment runs, the
units it covers get their arm's pinned version, and a publish moves only the room's default
traffic: replies that no running experiment covers (``experiments_app.routing``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Prefetch

from experiments_app.models import BUCKETS, Experiment, ExperimentArm
from experiments_app.selectors.experiments import experiments_visible_to
from experiments_app.services.experiments import percent
from harness_app.models import Room


@dataclass(frozen=True)
class PinnedArm:
    name: str
    kind: str
    weight: str  # "50%"
    version_id: int
    version_number: int
    harness_id: int
    harness_name: str


@dataclass(frozen=True)
class RunningExperimentPins:
    """A running experiment of the room. ``visible`` is False for a merchant when it also
    spans another owner's room: then the page says it exists, nothing more."""

    id: int
    name: str
    unit: str
    share: str  # of all randomization units: layer range width x coverage, "100%"
    covers_all: bool
    arms: tuple[PinnedArm, ...]
    visible: bool


def running_experiments_pinning(*, room: Room, user: Any) -> list[RunningExperimentPins]:
    """The room's running experiments with the versions their arms pin, oldest first."""
    experiments = list(
        Experiment.objects.filter(status=Experiment.Status.RUNNING, rooms=room)
        .prefetch_related(
            Prefetch(
                "arms",
                queryset=ExperimentArm.objects.select_related("harness_version__harness")
                .defer("harness_version__content")
                .order_by("position"),
            )
        )
        .order_by("started_at", "pk")
    )
    if not experiments:
        return []
    visible = set(
        experiments_visible_to(user)
        .filter(pk__in=[e.pk for e in experiments])
        .values_list("pk", flat=True)
    )
    out = []
    for experiment in experiments:
        share = (experiment.layer_end - experiment.layer_start) * experiment.coverage // BUCKETS
        out.append(
            RunningExperimentPins(
                id=experiment.pk,
                name=experiment.name,
                unit=experiment.get_unit_display(),
                share=percent(share),
                covers_all=share >= BUCKETS,
                arms=tuple(
                    PinnedArm(
                        name=arm.name,
                        kind=arm.get_kind_display(),
                        weight=percent(arm.weight),
                        version_id=arm.harness_version_id,
                        version_number=arm.harness_version.number,
                        harness_id=arm.harness_version.harness_id,
                        harness_name=arm.harness_version.harness.name,
                    )
                    for arm in experiment.arms.all()
                ),
                visible=experiment.pk in visible,
            )
        )
    return out
