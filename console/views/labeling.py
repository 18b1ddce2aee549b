"""The labeler's pages: my open blind tests, and the labeling page of one test.

The labeling page is a shell: console/static/console/labeling.js fetches the pair to label
(and the next one) from the labeling API and posts labels, undo and skip. Nothing on these
pages names a side, an arm, a harness version, an endpoint, a model or the test's name (which
is for operators); tests and pairs are addressed by their random tokens (docs/LABELING.md).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from console.roles import is_operator
from console.views.access import labeling_user_required
from experiments_app.selectors import blind_labeling as reads


@labeling_user_required
def labeling(request: HttpRequest) -> HttpResponse:
    """My open blind tests with my progress (operators: every open test, as previews unless
    they are assigned)."""
    tests = list(reads.labeling_tests_for(request.user)[:200])
    return render(request, "console/labeling.html", {"tests": tests})


@labeling_user_required
def labeling_test(request: HttpRequest, token: str) -> HttpResponse:
    access = reads.labeling_test_get(user=request.user, token=token)
    api = {
        name: reverse(f"api:labeling-{name}", args=[token])
        for name in ("next", "labels", "undo", "skip")
    }
    return render(
        request,
        "console/labeling_test.html",
        {
            "test": access.test,
            "preview": access.preview,
            "api": api,
            "show_name": is_operator(request.user),
        },
    )
