"""What a product's ``attributes`` may hold: a JSON object, at most 5 levels deep and 16 KB
serialized, with no U+0000. One rule for the API, the console form and catalog imports.

Attributes are rendered into prompts and stored in a jsonb column: without a bound a single
product could carry 900 KB or 600 levels (which later code walking it would trip over).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import ValidationError

from harness_app.harness.json_limits import json_value_problem, nested_deeper_than

MAX_ATTRIBUTES_DEPTH = 5
MAX_ATTRIBUTES_BYTES = 16_384


def attributes_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a product's attributes, or None when it can."""
    if not isinstance(value, dict):
        return "must be a JSON object"
    if nested_deeper_than(value, MAX_ATTRIBUTES_DEPTH):
        return f"nested deeper than {MAX_ATTRIBUTES_DEPTH} levels of objects/arrays"
    problem = json_value_problem(value, max_depth=MAX_ATTRIBUTES_DEPTH)
    if problem is not None:
        return f"{problem.path}: {problem.message}" if problem.path else problem.message
    size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    if size > MAX_ATTRIBUTES_BYTES:
        return f"{size} bytes as JSON; the limit is {MAX_ATTRIBUTES_BYTES} bytes"
    return None


def validate_attributes(value: Any) -> None:
    """The rule as a validator for Django forms and DRF fields (None: not given)."""
    problem = attributes_problem({} if value is None else value)
    if problem is not None:
        raise ValidationError(problem, code="attributes")
