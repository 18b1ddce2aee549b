"""One error shape for every API response: ``{"detail", "errors": [{"field", "message"}]}``.

DRF's nested ``{"field": ["msg"]}`` dicts are flattened to dotted field paths so a client
can point at the offending field; the original DRF body is kept for familiarity. Django's own
``ValidationError`` (``full_clean()`` in a service) is a 400 in the same shape, not a 500.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import NON_FIELD_ERRORS
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import status
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def flatten_errors(data: Any, prefix: str = "") -> list[dict[str, str]]:
    if isinstance(data, dict):
        out: list[dict[str, str]] = []
        for key, value in data.items():
            if key == "non_field_errors":
                path = prefix
            else:
                path = f"{prefix}.{key}" if prefix else str(key)
            out.extend(flatten_errors(value, path))
        return out
    if isinstance(data, list):
        if all(not isinstance(v, dict | list) for v in data):
            return [{"field": prefix, "message": str(v)} for v in data]
        out = []
        for i, value in enumerate(data):
            if value in ({}, []):
                continue
            out.extend(flatten_errors(value, f"{prefix}[{i}]"))
        return out
    return [{"field": prefix, "message": str(data)}]


def model_validation_errors(exc: DjangoValidationError) -> dict[str, list[str]]:
    """A model's ``full_clean()`` errors by field. A multi-field unique constraint's error is
    a non-field error in Django; it is put on the constraint's last field, since the first
    ones scope it (``(owner, name)``: the name is taken, ``(room, sku)``: the sku)."""
    if not hasattr(exc, "error_dict"):
        return {"non_field_errors": exc.messages}
    out: dict[str, list[str]] = {}
    for field, errors in exc.error_dict.items():
        for error in errors:
            name = field
            unique_check = (error.params or {}).get("unique_check")
            if field == NON_FIELD_ERRORS:
                name = str(unique_check[-1]) if unique_check else "non_field_errors"
            out.setdefault(name, []).extend(error.messages)
    return out


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DjangoValidationError):
        exc = ValidationError(model_validation_errors(exc))
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    data = response.data
    if isinstance(data, dict) and "errors" in data and "detail" in data:
        return response
    if isinstance(data, dict) and set(data) == {"detail"}:
        response.data = {"detail": str(data["detail"]), "errors": []}
    else:
        errors = flatten_errors(data)
        first = errors[0] if errors else {"field": "", "message": "invalid request"}
        detail = f"{first['field']}: {first['message']}" if first["field"] else first["message"]
        response.data = {"detail": detail, "errors": errors}
    return response


class FieldErrorsException(APIException):
    status_code = status.HTTP_400_BAD_REQUEST

    def __init__(self, detail: str, errors: list[dict[str, Any]]) -> None:
        super().__init__()
        body: Any = {"detail": detail, "errors": errors}
        self.detail = body

    @classmethod
    def for_field(cls, field: str, message: str) -> FieldErrorsException:
        """One error on one field: ``{"detail": message, "errors": [{field, message}]}``."""
        return cls(message, [{"field": field, "message": message}])
