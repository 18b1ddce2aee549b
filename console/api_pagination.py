"""Limit/offset pagination of every API list, with bounds.

DRF's ``LimitOffsetPagination`` passes any integer on to SQL (``?limit=9223372036854775808``
overflows PostgreSQL's bigint: a server error) and silently ignores values it cannot read.
Here ``limit`` must be 1..``MAX_LIMIT`` and ``offset`` 0..``MAX_OFFSET``; anything else (not
a whole number, negative, too large) is a 400 naming the parameter. The bounds are in the
OpenAPI schema too.
"""

from __future__ import annotations

from typing import Any

from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request

from console.api_query_params import query_int

MAX_LIMIT = 500
MAX_OFFSET = 1_000_000


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    max_limit = MAX_LIMIT
    max_offset = MAX_OFFSET

    def get_limit(self, request: Request) -> int | None:
        value = query_int(request, self.limit_query_param, minimum=1, maximum=self.max_limit)
        return self.default_limit if value is None else value

    def get_offset(self, request: Request) -> int:
        value = query_int(request, self.offset_query_param, minimum=0, maximum=self.max_offset)
        return value or 0

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        bounds = {
            self.limit_query_param: {"minimum": 1, "maximum": self.max_limit},
            self.offset_query_param: {"minimum": 0, "maximum": self.max_offset},
        }
        for parameter in parameters:
            parameter["schema"].update(bounds.get(parameter["name"], {}))
        return parameters
