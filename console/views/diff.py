"""Compare two versions of a harness: semantic changes grouped by component."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from console.forms.harnesses import DiffPickerForm
from console.views.access import console_user_required
from harness_app import selectors
from harness_app.harness.diff import Change

COMPONENTS = (("skills", "Skills"), ("tools", "Tools"), ("prompt", "Prompt"), ("hooks", "Hooks"))


@require_GET
@console_user_required
def harness_diff(request: HttpRequest, harness_id: int) -> HttpResponse:
    harness = selectors.harness_get(user=request.user, harness_id=harness_id)
    form = DiffPickerForm(request.GET)
    context: dict[str, Any] = {"harness": harness, "room": harness.room, "form": form}
    if form.is_bound and form.is_valid():
        old, new, changes = selectors.harness_versions_diff(
            harness=harness,
            from_number=form.cleaned_data["from_version"],
            to_number=form.cleaned_data["to_version"],
        )
        context.update(
            {
                "old": old,
                "new": new,
                "changes": changes,
                "groups": group_changes(old, new, changes),
            }
        )
    elif not form.is_bound:
        latest = selectors.harness_version_latest(harness)
        if latest is not None:
            form.initial = {"from_version": max(1, latest.number - 1), "to_version": latest.number}
    return render(
        request,
        "harness_app/diff.html",
        context,
        status=400 if form.is_bound and not form.is_valid() else 200,
    )


def group_changes(old: Any, new: Any, changes: list[Change]) -> list[dict[str, Any]]:
    """One entry per component: its change sentences (each with its text diffs) and whether
    its hashes are equal."""
    groups = []
    for key, title in COMPONENTS:
        # Each sentence with the line diffs of the texts it says changed (escaped by the
        # template like any other text).
        sentences = [
            {"sentence": c.describe(), "text_diffs": c.text_diffs}
            for c in changes
            if _component_key(c.component) == key
        ]
        same = getattr(old, f"{key}_hash") == getattr(new, f"{key}_hash")
        groups.append(
            {
                "key": key,
                "title": title,
                "changes": sentences,
                "same_hash": same,
                "old_hash": getattr(old, f"{key}_hash"),
                "new_hash": getattr(new, f"{key}_hash"),
            }
        )
    return groups


def _component_key(component: str) -> str:
    """``skill``/``skills``/``prompt_section`` -> the hash component it belongs to."""
    for key, _title in COMPONENTS:
        if component == key or component.startswith(key.rstrip("s")):
            return key
    return "prompt" if "section" in component else component
