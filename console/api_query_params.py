"""Reading whole-number query parameters of the API: bounded, or a 400 naming the parameter.

``str.isdigit()`` admits "²" (then ``int()`` raises) and ``int()`` admits "1_000", " 7" and
numbers far past what the database can compare, so every integer query parameter goes
through ``query_int``.
"""

from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.request import Request


def query_int(request: Request, name: str, *, minimum: int, maximum: int) -> int | None:
    """The parameter ``name`` as an int in ``minimum..maximum``; None when absent or empty."""
    raw = request.query_params.get(name, "")
    if not raw:
        return None
    digits = raw[1:] if raw.startswith("-") else raw
    # The length bound keeps int() cheap on a megabyte of digits.
    if not (digits.isascii() and digits.isdecimal()) or len(digits) > 19:
        raise ValidationError({name: f"must be a whole number from {minimum} to {maximum}"})
    value = int(raw)
    if not minimum <= value <= maximum:
        raise ValidationError(
            {name: f"must be a whole number from {minimum} to {maximum}, got {value}"}
        )
    return value


def query_int_required(request: Request, name: str, *, minimum: int, maximum: int) -> int:
    value = query_int(request, name, minimum=minimum, maximum=maximum)
    if value is None:
        raise ValidationError({name: f"required: a whole number from {minimum} to {maximum}"})
    return value
