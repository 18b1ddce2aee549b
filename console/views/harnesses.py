"""Harnesses: the list, one harness's version history (with the try-it box), zip import
and export."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from console.forms.harnesses import DiffPickerForm, HarnessImportForm
from console.forms.replies import try_it_form
from console.views.access import console_user_required
from console.views.pagination import paginate
from harness_app import selectors, services
from harness_app.harness.archive import export_harness_zip
from harness_app.harness.errors import HarnessValidationError
from harness_app.models import Harness, HarnessVersion

HARNESSES_PER_PAGE = 25
VERSIONS_PER_PAGE = 20


@require_GET
@console_user_required
def harness_list(request: HttpRequest) -> HttpResponse:
    page = paginate(request, selectors.harnesses_visible_to(request.user), HARNESSES_PER_PAGE)
    return render(request, "harness_app/harness_list.html", {"page_obj": page})


@require_GET
@console_user_required
def harness_detail(request: HttpRequest, harness_id: int) -> HttpResponse:
    harness = selectors.harness_get(user=request.user, harness_id=harness_id)
    return render(request, "harness_app/harness_detail.html", _detail_context(request, harness))


def _detail_context(request: HttpRequest, harness: Harness, **extra: Any) -> dict[str, Any]:
    page = paginate(request, selectors.harness_versions(harness), VERSIONS_PER_PAGE)
    latest = selectors.harness_version_latest(harness)
    published = harness.published_version
    to_number = latest.number if latest else 1
    # Default diff: what is live -> the newest edit (or the newest edit against its parent).
    if published is not None and published.number != to_number:
        from_number = published.number
    else:
        from_number = max(1, to_number - 1)
    picker = DiffPickerForm(initial={"from_version": from_number, "to_version": to_number})
    context = {
        "harness": harness,
        "room": harness.room,
        "page_obj": page,
        "latest": latest,
        "published": published,
        "edit_source": selectors.harness_version_edit_source(harness=harness, latest=latest),
        "import_form": HarnessImportForm(
            initial={"base_version": latest.number if latest else None}
        ),
        "diff_form": picker,
    }
    context.update(extra)
    if "try_form" not in context:
        context["try_form"] = try_it_form(harness, user=request.user)
    return context


@require_http_methods(["POST"])
@console_user_required
def harness_import(request: HttpRequest, harness_id: int) -> HttpResponse:
    harness = selectors.harness_get(user=request.user, harness_id=harness_id)
    form = HarnessImportForm(request.POST, request.FILES)
    import_errors = None
    conflict = None
    if form.is_valid():
        try:
            version = services.harness_version_import_zip(
                harness=harness,
                data=form.cleaned_data["file"].read(),
                base_version=form.cleaned_data["base_version"],
                author=request.user,
                message=form.cleaned_data["message"] or "Imported from zip",
            )
        except HarnessValidationError as exc:
            import_errors = exc.errors
        except services.StaleBaseVersion as exc:
            conflict = {
                "latest": exc.latest,
                "latest_url": reverse(
                    "console:version-detail",
                    kwargs={"harness_id": harness.pk, "number": exc.latest},
                ),
            }
        else:
            messages.success(request, f"Imported as draft version {version.number}.")
            return redirect("console:version-detail", harness_id=harness.pk, number=version.number)
    context = _detail_context(
        request, harness, import_form=form, import_errors=import_errors, import_conflict=conflict
    )
    return render(request, "harness_app/harness_detail.html", context, status=400)


@require_GET
@console_user_required
def version_export(request: HttpRequest, harness_id: int, number: int) -> HttpResponse:
    harness = selectors.harness_get(user=request.user, harness_id=harness_id)
    version: HarnessVersion = selectors.harness_version_get(harness=harness, number=number)
    data = export_harness_zip(selectors.harness_version_content(version))
    response = HttpResponse(data, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="harness-{harness.pk}-v{number}.zip"'
    return response
