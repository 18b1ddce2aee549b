"""Refuse oversized request bodies before anything parses them."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

# Event batches (up to 10,000 events) have their own, larger limit.
EVENTS_PATH = "/api/v1/events"


class ApiPayloadLimitMiddleware:
    """A body over HAT_MAX_UPLOAD_BYTES (HAT_MAX_EVENT_BATCH_BYTES for event batches) gets a
    400 that names the limit; nothing is read."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit: int = settings.HAT_MAX_UPLOAD_BYTES
        if request.path == EVENTS_PATH:
            limit = settings.HAT_MAX_EVENT_BATCH_BYTES
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > limit:
            message = (
                f"request body is {length} bytes; the limit is {limit} bytes "
                f"({limit / 1_048_576:g} MB)"
            )
            if request.path.startswith("/api/"):
                return JsonResponse(
                    {"detail": message, "errors": [{"field": "body", "message": message}]},
                    status=400,
                )
            return HttpResponse(message, status=400, content_type="text/plain")
        return self.get_response(request)
