"""OpenAPI description of the live-room key authentication (drf-spectacular extension)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class RoomApiKeyScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "harness_app.authentication.RoomApiKeyAuthentication"
    name = "roomApiKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "hat_<prefix>_<secret>",
            "description": "Per-room API key of the live-room backend (scopes: reply, events).",
        }
