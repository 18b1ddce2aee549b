"""Reads for experiments, with tenancy.

Operators see every experiment. A merchant sees an experiment only when every one of its
rooms is theirs: its readout aggregates all of its rooms, so one foreign room would leak
another merchant's numbers. Anything else is a 404, never a 403.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch, QuerySet
from django.http import Http404

from console.roles import is_merchant, is_operator
from experiments_app.models import Experiment, ExperimentArm, ExperimentPhase
from harness_app.models import HarnessVersion, Room
from training_app.models import ModelEndpoint


def experiments_visible_to(user: Any) -> QuerySet[Experiment]:
    experiments = Experiment.objects.prefetch_related(
        Prefetch("rooms", queryset=Room.objects.order_by("name", "pk")),
        Prefetch(
            "arms",
            queryset=ExperimentArm.objects.select_related("harness_version", "endpoint")
            .defer("harness_version__content")
            .order_by("position"),
        ),
        Prefetch("phases", queryset=ExperimentPhase.objects.order_by("number")),
    ).order_by("-created_at", "-id")
    if is_operator(user):
        return experiments
    if is_merchant(user):
        foreign = Room.objects.exclude(owner=user)
        return experiments.filter(rooms__owner=user).exclude(rooms__in=foreign).distinct()
    return experiments.none()


def experiment_get(*, user: Any, experiment_id: int) -> Experiment:
    try:
        return experiments_visible_to(user).get(pk=experiment_id)
    except (Experiment.DoesNotExist, ValueError, TypeError):
        raise Http404("No such experiment.") from None


def versions_for_arms() -> QuerySet[HarnessVersion]:
    """Harness versions an operator may pin (the service checks the room and publication)."""
    return (
        HarnessVersion.objects.select_related("harness", "harness__room")
        .defer("content")
        .order_by("harness__name", "-number")
    )


def endpoints_for_arms() -> QuerySet[ModelEndpoint]:
    return ModelEndpoint.objects.filter(role=ModelEndpoint.Role.STUDENT).order_by("name")


def experiment_phase_numbers(experiment: Experiment) -> list[int]:
    """The numbers of the experiment's phases, oldest first (none before it starts)."""
    return list(
        ExperimentPhase.objects.filter(experiment=experiment)
        .order_by("number")
        .values_list("number", flat=True)
    )
