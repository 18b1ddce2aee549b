"""What a locked-out login sees (django-axes calls ``lockout_response``; AXES_LOCKOUT_CALLABLE).

The console login form is shown again with the reason and when to retry; the API's token
login gets the API's one error shape. Both answer 429 with ``Retry-After``.
"""

from __future__ import annotations

import math
from typing import Any

from axes.helpers import get_cool_off
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render


def lockout_message(request: HttpRequest) -> str:
    cool_off = get_cool_off(request)
    minutes = math.ceil(cool_off.total_seconds() / 60) if cool_off else None
    wait = f"{minutes} minute{'s' if minutes != 1 else ''}" if minutes else "a while"
    return (
        "Too many failed logins for this username from your address: logins are refused, "
        f"even with the right password, for {wait}. Try again later or ask an operator to "
        "reset the lockout."
    )


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: Any = None
) -> HttpResponse:
    message = lockout_message(request)
    cool_off = get_cool_off(request)
    response: HttpResponse
    if request.path.startswith("/api/"):
        response = JsonResponse(
            {"detail": message, "errors": [{"field": "username", "message": message}]},
            status=429,
        )
    else:
        username = (credentials or {}).get("username") or request.POST.get("username", "")
        form = AuthenticationForm(request, initial={"username": username})
        response = render(
            request,
            "console/login.html",
            {"form": form, "lockout_message": message, "next": request.POST.get("next", "")},
            status=429,
        )
    if cool_off:
        response["Retry-After"] = str(math.ceil(cool_off.total_seconds()))
    return response
