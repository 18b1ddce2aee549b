"""The landing page after login (labelers go to their labeling page)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from console.roles import can_use_console, is_labeler


@login_required
def home(request: HttpRequest) -> HttpResponse:
    if can_use_console(request.user):
        return redirect("console:room-list")
    if is_labeler(request.user):
        return redirect("console:labeling")
    # Signed in but given no role yet: say so instead of a bare 404.
    return render(request, "console/no_role.html", status=403)
