"""Refuse oversized request bodies before anything parses them."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse


class ApiPayloadLimitMiddleware:
    """A body over HAT_MAX_UPLOAD_BYTES gets a 400 that names the limit; nothing is read."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit: int = settings.HAT_MAX_UPLOAD_BYTES
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > limit:
            message = f"request body is {length} bytes; the limit is {limit} bytes (1 MB)"
            if request.path.startswith("/api/"):
                return JsonResponse(
                    {"detail": message, "errors": [{"field": "body", "message": message}]},
                    status=400,
                )
            return HttpResponse(message, status=400, content_type="text/plain")
        return self.get_response(request)
