"""Writes for the harness-edit safety gate: a room's gate settings, the checks that run a
candidate version against the published one, their verdicts, and the rule publishing obeys.

``publish_gate_enforce`` is what ``harness_app.services.harness_version_publish`` calls
inside its lock: with an enabled gate, a version goes live only with a decided check of it
against the version live now; a ``block`` needs an override reason, recorded on the check in
the same transaction as the publish. A rollback (to a version that was live before), the
first publish of a harness and a room without a gate are not gated.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from console.roles import is_operator
from harness_app.models import HarnessVersion, Room
from harness_app.services import VersionStateError
from training_app.evals.publish_gate import CANDIDATE_ARM, GateThresholds, gate_verdict
from training_app.models import EvalItemResult, EvalRun, EvalSet, ModelEndpoint
from training_app.models.gates import PublishCheck, PublishGate
from training_app.services.evals import EvalRunError, eval_run_create, json_safe

BASELINE_ARM = "baseline"
MAX_OVERRIDE_REASON = 2000


class PublishGateError(Exception):
    """A refused gate setting or check, with the field it is about."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class PublishGateStopped(VersionStateError):
    """Publishing refused by the room's gate (no check yet, still running, or blocked)."""


def publish_gate_configure(
    *,
    room: Room,
    eval_set: EvalSet,
    endpoint: ModelEndpoint,
    warn_drop_points: float = 5.0,
    block_drop_points: float = 10.0,
    item_limit: int = 16,
    variant_sets: list[str] | None = None,
    enabled: bool = True,
    by: Any = None,
) -> PublishGate:
    """Create or replace ``room``'s gate settings; every refusal names its field."""
    if eval_set.kind != EvalSet.Kind.LIVE_STREAM_QA:
        raise PublishGateError("eval_set", "choose a Live-Stream QA set (variants are added)")
    version = eval_set.harness_version
    if version is None or version.harness.room_id != room.pk:
        raise PublishGateError("eval_set", "choose a set built on this room's harness")
    if not endpoint.is_active:
        raise PublishGateError("endpoint", f"endpoint {endpoint.name} is not active")
    problems = GateThresholds(
        warn_drop_points=warn_drop_points, block_drop_points=block_drop_points
    ).problems()
    if problems:
        field, message = next(iter(problems.items()))
        raise PublishGateError(field, message)
    if not 1 <= item_limit <= 500:
        raise PublishGateError("item_limit", "item_limit must be from 1 to 500")
    variants = list(dict.fromkeys(variant_sets or []))
    if any(v not in ("t1", "t2") for v in variants):
        raise PublishGateError("variant_sets", "variant sets are t1 and t2")
    gate, _ = PublishGate.objects.update_or_create(
        room=room,
        defaults={
            "eval_set": eval_set,
            "endpoint": endpoint,
            "warn_drop_points": warn_drop_points,
            "block_drop_points": block_drop_points,
            "item_limit": item_limit,
            "variant_sets": variants,
            "enabled": enabled,
            "updated_by": by,
        },
    )
    return gate


def _gate_settings(gate: PublishGate) -> dict[str, Any]:
    return {
        "eval_set": gate.eval_set_id,
        "endpoint": gate.endpoint.name,
        "item_limit": gate.item_limit,
        "variant_sets": list(gate.variant_sets),
        "warn_drop_points": gate.warn_drop_points,
        "block_drop_points": gate.block_drop_points,
    }


def active_gate(room: Room) -> PublishGate | None:
    gate = PublishGate.objects.select_related("eval_set", "endpoint").filter(room=room).first()
    return gate if gate is not None and gate.enabled else None


@transaction.atomic
def publish_check_start(*, version: HarnessVersion, by: Any = None) -> PublishCheck:
    """Queue the check of ``version`` against the published version: one eval run of the
    gate's set on each, plus one per variant set on the candidate."""
    harness = version.harness
    gate = active_gate(harness.room)
    if gate is None:
        raise PublishGateError("gate", "this room has no enabled publish gate")
    baseline = harness.published_version
    if baseline is None:
        raise PublishGateError(
            "version", "nothing is published yet: the first version is not gated"
        )
    if baseline.pk == version.pk:
        raise PublishGateError("version", f"version {version.number} is already live")
    check = PublishCheck.objects.create(
        gate=gate,
        candidate=version,
        baseline=baseline,
        gate_settings=_gate_settings(gate),
        created_by=by,
    )
    arms = [(BASELINE_ARM, baseline, ""), (CANDIDATE_ARM, version, "")]
    arms += [(f"{CANDIDATE_ARM}_{v}", version, v) for v in gate.variant_sets]
    for arm, arm_version, variant in arms:
        try:
            eval_run_create(
                eval_set=gate.eval_set,
                model_label=f"gate v{arm_version.number}{f' {variant.upper()}' if variant else ''}",
                endpoint=gate.endpoint,
                item_limit=gate.item_limit,
                harness_version=arm_version,
                variant_set=variant,
                publish_check=check,
                gate_arm=arm,
                created_by=by,
            )
        except EvalRunError as exc:
            raise PublishGateError("gate", f"the gate cannot run: {exc}") from None
    return check


def _arm_results(run: EvalRun) -> dict[str, bool]:
    return dict(EvalItemResult.objects.filter(run=run).values_list("base_id", "passed"))


def publish_check_settle(*, check_id: int) -> PublishCheck:
    """Decide the check once every run has finished (idempotent; a run that failed or was
    cancelled makes the decision ``error``)."""
    with transaction.atomic():
        check = PublishCheck.objects.select_for_update().get(pk=check_id)
        if check.is_decided:
            return check
        runs = list(check.runs.all())
        if not runs or not all(run.is_finished for run in runs):
            return check
        by_arm = {run.gate_arm: run for run in runs}
        unfinished = [r for r in runs if r.status != EvalRun.Status.SUCCEEDED]
        if unfinished:
            check.decision = PublishCheck.Decision.ERROR
            check.error = "; ".join(
                f"{r.gate_arm} run {r.pk} {r.get_status_display().lower()}"
                + (f": {r.error[:200]}" if r.error else "")
                for r in unfinished
            )
        else:
            settings = check.gate_settings
            thresholds = GateThresholds(
                warn_drop_points=float(settings["warn_drop_points"]),
                block_drop_points=float(settings["block_drop_points"]),
            )
            arms = {arm: _arm_results(run) for arm, run in by_arm.items() if arm != BASELINE_ARM}
            try:
                verdict = gate_verdict(_arm_results(by_arm[BASELINE_ARM]), arms, thresholds)
            except (KeyError, ValueError) as exc:
                check.decision = PublishCheck.Decision.ERROR
                check.error = str(exc)
            else:
                check.decision = verdict.decision
                check.verdict = json_safe(verdict.to_dict())
        check.decided_at = timezone.now()
        check.save(update_fields=["decision", "verdict", "error", "decided_at"])
        return check


def latest_check(version: HarnessVersion) -> PublishCheck | None:
    """The newest check of ``version`` against the version live now (None: none yet)."""
    baseline = version.harness.published_version
    if baseline is None:
        return None
    return (
        PublishCheck.objects.filter(candidate=version, baseline=baseline)
        .select_related("gate", "baseline", "candidate", "overridden_by")
        .first()
    )


def check_runs_by_arm(check: PublishCheck) -> dict[str, EvalRun]:
    return {run.gate_arm: run for run in check.runs.order_by("pk")}


def publish_gate_enforce(*, version: HarnessVersion, override_reason: str = "", by: Any) -> None:
    """Raise ``PublishGateStopped`` unless the room's gate lets ``version`` go live now;
    record an override on the check. Runs inside the publish transaction."""
    harness = version.harness
    gate = active_gate(harness.room)
    if gate is None or harness.published_version_id is None:
        return
    check = latest_check(version)
    if check is None:
        raise PublishGateStopped(
            "the room's publish gate needs a safety check of this version first "
            "(run it from the publish page)"
        )
    check = publish_check_settle(check_id=check.pk)
    if not check.is_decided:
        raise PublishGateStopped("the safety check of this version is still running")
    if check.decision in (PublishCheck.Decision.PASS, PublishCheck.Decision.WARN):
        return
    reason = override_reason.strip()
    if not reason:
        what = "blocked this version" if check.decision == "block" else "could not finish"
        raise PublishGateStopped(
            f"the safety check {what}; an operator can publish anyway with a reason"
        )
    if by is None or not is_operator(by):
        raise PublishGateStopped("only an operator can override the safety check")
    check.override_reason = reason[:MAX_OVERRIDE_REASON]
    check.overridden_by = by
    check.overridden_at = timezone.now()
    check.save(update_fields=["override_reason", "overridden_by", "overridden_at"])
