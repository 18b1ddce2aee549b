"""Map domain errors of the harness registry to API responses with field-level errors."""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.exceptions import APIException

from console.api_errors import FieldErrorsException
from harness_app.catalog_import import CatalogImportError
from harness_app.harness.errors import HarnessValidationError
from harness_app.services import StaleBaseVersion, VersionStateError


def harness_invalid(exc: HarnessValidationError, prefix: str = "content") -> FieldErrorsException:
    errors = [
        {
            "field": f"{prefix}.{e.path}" if prefix and e.path else (e.path or prefix),
            "message": e.message,
        }
        for e in exc.errors
    ]
    first = errors[0] if errors else {"field": prefix, "message": str(exc)}
    return FieldErrorsException(f"{first['field']}: {first['message']}", errors)


def catalog_invalid(exc: CatalogImportError) -> FieldErrorsException:
    errors = [
        {
            "field": f"rows[{e.row}].{e.field}" if e.row else e.field,
            "row": e.row,
            "message": e.message,
        }
        for e in exc.errors
    ]
    return FieldErrorsException(str(exc), errors)


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT

    def __init__(self, exc: StaleBaseVersion) -> None:
        super().__init__()
        body: Any = {
            "detail": str(exc),
            "errors": [{"field": "base_version", "message": str(exc)}],
            "latest_version": exc.latest,
            "base_version": exc.base,
        }
        self.detail = body


class StateConflict(APIException):
    status_code = status.HTTP_409_CONFLICT

    def __init__(self, exc: VersionStateError) -> None:
        super().__init__()
        body: Any = {"detail": str(exc), "errors": []}
        self.detail = body
