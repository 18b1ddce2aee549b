"""HSA preview: one augmentation of a harness version, side by side with the original, the
rename mapping highlighted and the semantic diff listed."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from console.forms.datasets import HsaPreviewForm
from console.views.access import console_user_required
from harness_app import selectors
from harness_app.harness.serialization import harness_to_yaml
from training_app.services import hsa_preview

DEFAULT_TRANSFORMS = [
    "skill_ids.synonyms",
    "tool_schemas.rename_params",
    "prompt_structure.xml_layout",
]


@require_GET
@console_user_required
def hsa_preview_page(request: HttpRequest, harness_id: int, number: int) -> HttpResponse:
    harness = selectors.harness_get(user=request.user, harness_id=harness_id)
    version = selectors.harness_version_get(harness=harness, number=number)
    data = request.GET if "seed" in request.GET else {"transforms": DEFAULT_TRANSFORMS, "seed": 0}
    form = HsaPreviewForm(data)
    context: dict[str, Any] = {
        "harness": harness,
        "room": harness.room,
        "version": version,
        "form": form,
    }
    status = 200
    if form.is_valid():
        content = selectors.harness_version_content(version)
        preview = hsa_preview.preview(
            content=content,
            policy=None,
            transforms=form.cleaned_data["transforms"],
            seed=form.cleaned_data["seed"],
        )
        mapping = preview.example.mapping
        context.update(
            {
                "original_yaml": harness_to_yaml(preview.original),
                "augmented_yaml": harness_to_yaml(preview.example.harness),
                "renames": _renames(mapping.to_dict()),
                "changes": [c.describe() for c in preview.changes],
                "provenance": preview.example.provenance,
                "layout": preview.example.prompt_layout,
            }
        )
    else:
        status = 400
    return render(request, "harness_app/hsa_preview.html", context, status=status)


def _renames(mapping: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(kind, old, new) rows of the mapping, for the highlight table."""
    rows = [("skill", old, new) for old, new in mapping.get("skill_renames", {}).items()]
    rows += [("tool", old, new) for old, new in mapping.get("tool_renames", {}).items()]
    for tool, params in mapping.get("param_renames", {}).items():
        rows += [("parameter", f"{tool}.{old}", f"{tool}.{new}") for old, new in params.items()]
    return rows
