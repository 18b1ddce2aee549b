"""Shared by the publish-gate tests (service, API, console): harness edits (a tool renamed
everywhere the harness names it; a harmless rewording), a draft of one, the gate's quick QA
set and its configuration, and a check run to its verdict by executing its eval runs in the
test's process."""

from __future__ import annotations

import copy
from typing import Any

from harness_app import services as harness_services
from harness_app.harness.serialization import harness_from_dict
from harness_app.models import HarnessVersion, Room
from training_app.evals.qa_set_document import loads_qa_set
from training_app.evals.qa_sets import QASet
from training_app.models import EvalSet, ModelEndpoint, PublishCheck
from training_app.services import evals
from training_app.services import publish_gate as gate_services


def renamed(content: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """``content`` with tool ``old`` called ``new`` everywhere the harness names it."""
    data = copy.deepcopy(content)
    for tool in data["tools"]:
        if tool["name"] == old:
            tool["name"] = new
    for skill in data["skills"]:
        skill["allowed_tools"] = [new if t == old else t for t in skill["allowed_tools"]]
        skill["body"] = skill["body"].replace(old, new)
    return data


def reworded(content: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(content)
    data["prompt"]["sections"][0]["template"] += "\nBe warm and brief."
    return data


def build_gate_set(room: Room, operator: Any) -> EvalSet:
    return evals.eval_set_build_qa(
        harness_version=room.harness.published_version,
        name="Gate QA",
        per_type=1,
        seed=3,
        created_by=operator,
    )


def document(eval_set: EvalSet) -> QASet:
    with eval_set.file.open("rb") as handle:
        return loads_qa_set(handle.read())


def draft(room: Room, content: dict[str, Any], operator: Any) -> HarnessVersion:
    latest = room.harness.versions.order_by("-number").first()
    return harness_services.harness_version_create(
        harness=room.harness,
        content=harness_from_dict(content),
        base_version=latest.number if latest else None,
        author=operator,
        message="edit",
    )


def configure_gate(room: Room, eval_set: EvalSet, base_url: str, **settings: Any) -> ModelEndpoint:
    """The room's gate on ``eval_set`` (its first 8 items) answered by the endpoint at
    ``base_url`` (a gold model server), registered as ``fixed``."""
    endpoint = ModelEndpoint.objects.create(
        name="fixed", base_url=base_url, tool_mode="text", max_concurrency=8
    )
    gate_services.publish_gate_configure(
        room=room, eval_set=eval_set, endpoint=endpoint, **{"item_limit": 8, **settings}
    )
    return endpoint


def run_check(version: HarnessVersion, operator: Any) -> PublishCheck:
    check = gate_services.publish_check_start(version=version, by=operator)
    finish_check(check)
    return check


def finish_check(check: PublishCheck) -> None:
    for run in check.runs.order_by("pk"):
        assert evals.eval_run_execute(run.pk) == "succeeded", run.error
    check.refresh_from_db()
