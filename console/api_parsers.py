"""Request body parsers of the API: DRF's, with the limits every body must keep.

- JSON nested deeper than ``MAX_JSON_DEPTH`` (64) levels is refused before anything uses it
  (DRF's own parser lets ``RecursionError`` through as a server error).
- U+0000 is refused in any key or string of a JSON body and in any form/multipart field:
  PostgreSQL text cannot store it, so it would otherwise fail as a server error on save or
  lookup.

Both answer 400 in the API's error shape, naming the field (``events[3].uv_id``).
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.http import QueryDict
from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.utils.json import strict_constant

from console.api_errors import FieldErrorsException
from harness_app.harness.json_limits import (
    MAX_JSON_DEPTH,
    NUL_MESSAGE,
    JsonLimitError,
    json_loads_bounded,
)

# The error's field when the problem is the body as a whole (e.g. a bare JSON string).
BODY_FIELD = "body"


def json_limit_invalid(exc: JsonLimitError, *, field: str = "") -> FieldErrorsException:
    """A 400 naming where ``exc`` is, under ``field`` when the JSON is one field's value."""
    path = exc.path
    if field:
        path = f"{field}{path}" if path.startswith("[") else ".".join(p for p in (field, path) if p)
    path = path or BODY_FIELD
    return FieldErrorsException(f"{path}: {exc.message}", [{"field": path, "message": exc.message}])


class BoundedJSONParser(parsers.JSONParser):
    """``application/json`` with a nesting limit and no U+0000 (NaN/Infinity stay refused)."""

    max_depth = MAX_JSON_DEPTH

    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = codecs.getreader(encoding)(stream).read()
            return json_loads_bounded(
                text, max_depth=self.max_depth, parse_constant=strict_constant
            )
        except JsonLimitError as exc:
            raise json_limit_invalid(exc) from None
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, NaN/Infinity
            raise ParseError(f"JSON parse error - {exc}") from None


def refuse_nul_fields(data: QueryDict) -> None:
    """400 naming the first form field whose name or value holds U+0000."""
    for key, values in data.lists():
        for value in [key, *values]:
            if isinstance(value, str) and "\x00" in value:
                field = key.replace("\x00", "\\u0000")
                raise FieldErrorsException(
                    f"{field}: {NUL_MESSAGE}", [{"field": field, "message": NUL_MESSAGE}]
                )


class NulFreeFormParser(parsers.FormParser):
    """``application/x-www-form-urlencoded`` without U+0000."""

    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        data = super().parse(stream, media_type, parser_context)
        refuse_nul_fields(data)
        return data


class NulFreeMultiPartParser(parsers.MultiPartParser):
    """``multipart/form-data`` without U+0000 in its fields (file contents are the
    importers' to check)."""

    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        result = super().parse(stream, media_type, parser_context)
        refuse_nul_fields(result.data)
        return result


# Bodies an endpoint that takes JSON only (the live-room API) accepts; others get 415.
JSON_ONLY = [BoundedJSONParser]
# Upload endpoints (a file plus a few fields).
UPLOAD_PARSERS = [NulFreeMultiPartParser, NulFreeFormParser]
