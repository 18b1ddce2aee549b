"""One error shape for every API response: ``{"detail", "errors": [{"field", "message"}]}``.

DRF's nested ``{"field": ["msg"]}`` dicts are flattened to dotted field paths so a client
can point at the offending field; the original DRF body is kept for familiarity.
"""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.exceptions import APIException
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


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
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
