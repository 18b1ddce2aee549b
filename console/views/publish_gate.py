"""The harness-edit safety gate in the console: a room's gate settings (operators) and the
check on a version's publish page (start it, follow it, see the deltas, override a block)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console.forms.publish_gate import PublishGateForm
from console.roles import is_operator
from console.views.access import console_user_required
from harness_app import selectors as harness_selectors
from harness_app.models import HarnessVersion
from training_app.models import PublishCheck, PublishGate
from training_app.services import publish_gate as gate_services


@require_http_methods(["GET", "POST"])
@console_user_required
def publish_gate_settings(request: HttpRequest, room_id: int) -> HttpResponse:
    room = harness_selectors.room_get(user=request.user, room_id=room_id)
    gate = PublishGate.objects.select_related("eval_set", "endpoint").filter(room=room).first()
    editable = is_operator(request.user)
    if request.method == "POST" and not editable:
        raise PermissionDenied("Only operators change a room's publish gate.")
    form = PublishGateForm(
        request.POST if request.method == "POST" else None,
        room=room,
        initial=PublishGateForm.initial_from(gate),
    )
    if request.method == "POST" and form.is_valid():
        try:
            gate_services.publish_gate_configure(room=room, by=request.user, **form.cleaned_data)
        except gate_services.PublishGateError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, exc.message)
        else:
            messages.success(request, "Publish gate saved.")
            return redirect("console:publish-gate", room_id=room.pk)
    checks = (
        PublishCheck.objects.filter(gate=gate).select_related("candidate", "baseline")[:20]
        if gate is not None
        else []
    )
    context = {"room": room, "gate": gate, "form": form, "editable": editable, "checks": checks}
    return render(
        request, "training_app/publish_gate.html", context, status=400 if form.errors else 200
    )


def _version(request: HttpRequest, harness_id: int, number: int) -> HarnessVersion:
    harness = harness_selectors.harness_get(user=request.user, harness_id=harness_id)
    return harness_selectors.harness_version_get(harness=harness, number=number)


@require_POST
@console_user_required
def publish_check_start(request: HttpRequest, harness_id: int, number: int) -> HttpResponse:
    version = _version(request, harness_id, number)
    try:
        gate_services.publish_check_start(version=version, by=request.user)
    except gate_services.PublishGateError as exc:
        messages.error(request, f"No check started: {exc.message}.")
    else:
        messages.success(request, f"Safety check of version {number} queued.")
    return redirect("console:version-publish", harness_id=harness_id, number=number)


@require_GET
@console_user_required
def publish_check_status(request: HttpRequest, harness_id: int, number: int) -> JsonResponse:
    """The latest check's progress, for the publish page's progress bar."""
    version = _version(request, harness_id, number)
    check = gate_services.latest_check(version)
    if check is None:
        return JsonResponse({"check": None})
    check = gate_services.publish_check_settle(check_id=check.pk)
    return JsonResponse(publish_check_context(check)["status"])


def publish_check_context(check: PublishCheck) -> dict[str, Any]:
    runs = gate_services.check_runs_by_arm(check)
    done = sum(r.progress_done for r in runs.values())
    total = sum(r.progress_total for r in runs.values())
    return {
        "check": check,
        "runs": runs,
        "arms": check.verdict.get("arms", []),
        "status": {
            "check": check.pk,
            "decided": check.is_decided,
            "decision": check.decision,
            "done": done,
            "total": total,
            "percent": int(100 * done / total) if total else 0,
        },
    }


def publish_panel(request: HttpRequest, version: HarnessVersion) -> dict[str, Any]:
    """What the publish page shows about the gate (empty: the room has none in force)."""
    gate = gate_services.active_gate(version.harness.room)
    if gate is None or version.harness.published_version_id is None:
        return {}
    check = gate_services.latest_check(version)
    panel: dict[str, Any] = {"gate": gate, "is_operator": is_operator(request.user)}
    if check is not None:
        panel.update(publish_check_context(gate_services.publish_check_settle(check_id=check.pk)))
    return {"gate_panel": panel}
