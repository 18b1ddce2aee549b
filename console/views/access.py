"""Who may open console pages.

Anonymous visitors are sent to the login page. Signed-in users without a console role
(labelers) get a 404 on every console page, so the console's layout is not even revealed to
them; room-level tenancy (merchants see only their own rooms) is enforced by the selectors.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest
from django.http.response import HttpResponseBase

from console.roles import can_use_console, is_labeler, is_operator

View = TypeVar("View", bound=Callable[..., HttpResponseBase])


def console_user_required(view: View) -> View:
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not can_use_console(request.user):
            raise Http404("No such page.")
        return view(request, *args, **kwargs)

    return wrapped  # type: ignore[return-value]


def labeling_user_required(view: View) -> View:
    """Labelers (and operators, who supervise labeling) may open the labeling pages."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not (is_labeler(request.user) or is_operator(request.user)):
            raise Http404("No such page.")
        return view(request, *args, **kwargs)

    return wrapped  # type: ignore[return-value]


def operator_required(view: View) -> View:
    """Operator-only console pages (model endpoints): for merchants they do not exist."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not is_operator(request.user):
            raise Http404("No such page.")
        return view(request, *args, **kwargs)

    return wrapped  # type: ignore[return-value]
