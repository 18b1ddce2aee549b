"""Which arm answers a viewer. Today: the room's serving arm (the Harness agent, or the ReAct
baseline) with the room's published harness's tools, on the room's endpoint.
The A/B milestone replaces ``choose_arm`` with sticky hash assignment to a running
experiment's arms; its callers do not change."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from harness_app.models import Harness, HarnessVersion, Room
from training_app.models import ModelEndpoint


class NoServingConfig(Exception):
    """The room cannot be served (no published harness, or no active endpoint)."""


@dataclass(frozen=True)
class ArmChoice:
    arm: str  # "harness" | "react"
    version: HarnessVersion
    endpoint: ModelEndpoint


def default_endpoint(room: Room) -> ModelEndpoint:
    endpoint = room.reply_endpoint
    if endpoint is None:
        endpoint = ModelEndpoint.objects.filter(name=settings.HAT_DEFAULT_ENDPOINT).first()
    if endpoint is None or not endpoint.is_active:
        raise NoServingConfig("no active model endpoint for this room")
    return endpoint


def choose_arm(*, room: Room, uv_id: str) -> ArmChoice:
    harness = room.harness
    if harness.published_version_id is None:
        raise NoServingConfig("this room has no published harness")
    version: HarnessVersion | None = None
    if Harness.published_version.is_cached(harness):  # type: ignore[attr-defined]
        version = harness.published_version
    if version is None:  # the caller did not select it: load it without its (large) content
        version = HarnessVersion.objects.defer("content").get(pk=harness.published_version_id)
    return ArmChoice(room.serving_arm, version, default_endpoint(room))
