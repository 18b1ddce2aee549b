"""Edit a harness: a new draft version based on the latest one (forms or raw YAML).

Saving calls ``services.harness_version_create``. A rejected save changes nothing and keeps
everything the operator typed: validation errors are shown at their fields, and a stale base
version (someone saved a newer one meanwhile) names that version and links to it.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from console.forms.fields import normalize_newlines
from console.forms.harness_editor import (
    COMPONENTS,
    EditMetaForm,
    HarnessEditor,
    YamlEditForm,
    data_with_new_entry,
)
from console.views.access import console_user_required
from harness_app import selectors, services
from harness_app.harness.conditions import EVENT_VARIABLES
from harness_app.harness.errors import FieldError, HarnessValidationError
from harness_app.harness.model import CATALOG_OPERATIONS
from harness_app.harness.model import Harness as HarnessContent
from harness_app.harness.prompt import PROMPT_VARIABLES
from harness_app.harness.serialization import harness_from_yaml, harness_to_yaml
from harness_app.harness.validation import harness_warnings
from harness_app.harness.yaml_locations import error_lines, locate_errors
from harness_app.models import Harness, HarnessVersion

MODES = ("form", "yaml")
# The raw editor's line-number gutter stops here (a pasted megabyte of blank lines must not
# become a megabyte of list items); errors past it are still listed by line.
MAX_GUTTER_LINES = 20_000


@require_http_methods(["GET", "POST"])
@console_user_required
def harness_edit(request: HttpRequest, harness_id: int) -> HttpResponse:
    harness = selectors.harness_get(user=request.user, harness_id=harness_id)
    params = request.POST if request.method == "POST" else request.GET
    mode = str(params.get("mode", ""))
    if mode not in MODES:
        mode = "form"
    if request.method == "POST":
        return _save(request, harness, mode)

    latest = selectors.harness_version_latest(harness)
    source = _source_version(harness, latest, request.GET.get("from"))
    initial = selectors.harness_version_content(source) if source else HarnessContent()
    meta = EditMetaForm(
        initial={
            "base_version": latest.number if latest else None,
            "source_version": source.number if source else None,
        }
    )
    context: dict[str, Any] = {"meta": meta, "source": source}
    if source is not None and latest is not None and source.pk != latest.pk:
        context["latest_label"] = source_label(harness, latest)
    if mode == "yaml":
        text = harness_to_yaml(initial)
        yaml_form = YamlEditForm(initial={"content_yaml": text})
        context["yaml_form"] = yaml_form
        context["warnings"] = harness_warnings(initial)
        context.update(_yaml_marks(yaml_form, text, []))
    else:
        editor = HarnessEditor(initial=initial)
        editor.place_unbound()
        editor.place_warnings(harness_warnings(initial))
        context["editor"] = editor
    return _render(request, harness, mode, latest, context)


def _source_version(
    harness: Harness, latest: HarnessVersion | None, requested: str | None
) -> HarnessVersion | None:
    """The version whose content the edit starts from: ``?from=N``, else the default (the
    published version after a rollback, otherwise the latest)."""
    if requested and requested.isascii() and requested.isdecimal() and len(requested) <= 10:
        return selectors.harness_version_get(harness=harness, number=int(requested))
    return selectors.harness_version_edit_source(harness=harness, latest=latest)


def source_label(harness: Harness, version: HarnessVersion | None) -> str:
    """What the starting version is, in words: "published, live in the room", ..."""
    if version is None:
        return ""
    if harness.published_version_id == version.pk:
        return "the published version, live in the room"
    if version.status == HarnessVersion.Status.DRAFT:
        return "a draft, not live"
    if version.published_at is not None:
        return "archived: it was live before and was rolled back or replaced"
    return "archived"


def _save(request: HttpRequest, harness: Harness, mode: str) -> HttpResponse:
    meta = EditMetaForm(request.POST)
    meta.is_valid()  # hidden fields; a tampered value is reported and blocks the save below
    base_version: int | None = meta.cleaned_data.get("base_version")
    source_number: int | None = meta.cleaned_data.get("source_version")
    source = (
        selectors.harness_version_get(harness=harness, number=source_number)
        if source_number
        else None
    )
    initial = selectors.harness_version_content(source) if source else HarnessContent()
    context: dict[str, Any] = {"meta": meta, "source": source}

    # "Save on top of vN" after a conflict: the operator has seen the newer version.
    override = request.POST.get("save_on_top_of", "")
    if override.isdigit():
        base_version = int(override)

    content: HarnessContent | None = None
    editor: HarnessEditor | None = None
    yaml_errors: list[FieldError] = []
    if mode == "yaml":
        yaml_form = YamlEditForm(request.POST)
        context["yaml_form"] = yaml_form
        if yaml_form.is_valid():
            try:
                content = harness_from_yaml(yaml_form.cleaned_data["content_yaml"])
            except HarnessValidationError as exc:
                yaml_errors = exc.errors
    else:
        add = request.POST.get("add", "")
        if add in {c.key for c in COMPONENTS}:
            editor = HarnessEditor(data_with_new_entry(request.POST, add), initial=initial)
            context["editor"] = editor
            context["added"] = add
            return _render(request, harness, mode, None, context)
        editor = HarnessEditor(request.POST, initial=initial)
        context["editor"] = editor
        if editor.is_valid():
            content = editor.content()
        else:
            # One pass: the rule checks run too (invalid fields at their defaults), so a
            # save shows every problem at once.
            editor.place_errors(
                services.harness_content_errors(content=editor.content(partial=True))
            )

    if content is not None and meta.is_valid():
        try:
            version = services.harness_version_create(
                harness=harness,
                content=content,
                base_version=base_version,
                author=request.user,
                message=meta.cleaned_data.get("message") or "",
            )
        except HarnessValidationError as exc:
            if editor is not None:
                editor.place_errors(exc.errors)
            else:
                yaml_errors = exc.errors
        except services.StaleBaseVersion as exc:
            context["conflict"] = _conflict(harness, exc)
        else:
            messages.success(
                request,
                f"Saved as draft version {version.number}. It is not live until you publish it.",
            )
            return redirect("console:version-detail", harness_id=harness.pk, number=version.number)
        if editor is not None:
            editor.place_warnings(harness_warnings(content))
        else:
            context["warnings"] = harness_warnings(content)

    context["yaml_errors"] = yaml_errors
    if mode == "yaml":
        context.update(
            _yaml_marks(context["yaml_form"], request.POST.get("content_yaml", ""), yaml_errors)
        )
    status = 409 if "conflict" in context else 400
    return _render(request, harness, mode, None, context, status=status)


def _yaml_marks(form: YamlEditForm, text: str, errors: list[FieldError]) -> dict[str, Any]:
    """Each error at its line and column of the typed text, and the editor's gutter."""
    text = normalize_newlines(text)
    located = locate_errors(text, errors) if errors else []
    marked = error_lines(located)
    line_count = text.count("\n") + (0 if text.endswith("\n") else 1)
    form.fit_to(line_count, has_errors=bool(errors))
    return {
        "yaml_located": located,
        "yaml_error_lines": marked,
        "yaml_gutter": [
            (n, n in marked) for n in range(1, min(max(line_count, 1), MAX_GUTTER_LINES) + 1)
        ],
    }


def _conflict(harness: Harness, exc: services.StaleBaseVersion) -> dict[str, Any]:
    diff_url = None
    if exc.base is not None:
        diff_url = (
            reverse("console:harness-diff", kwargs={"harness_id": harness.pk})
            + f"?from={exc.base}&to={exc.latest}"
        )
    return {
        "base": exc.base,
        "latest": exc.latest,
        "latest_url": reverse(
            "console:version-detail", kwargs={"harness_id": harness.pk, "number": exc.latest}
        ),
        "diff_url": diff_url,
    }


def _render(
    request: HttpRequest,
    harness: Harness,
    mode: str,
    latest: HarnessVersion | None,
    context: dict[str, Any],
    status: int = 200,
) -> HttpResponse:
    context.update(
        {
            "harness": harness,
            "room": harness.room,
            "mode": mode,
            "latest": latest,
            "source_label": source_label(harness, context.get("source")),
            "catalog_operations": CATALOG_OPERATIONS,
            "prompt_variables": PROMPT_VARIABLES,
            "event_variables": EVENT_VARIABLES,
        }
    )
    return render(request, "harness_app/editor.html", context, status=status)
