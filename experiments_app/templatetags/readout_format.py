"""Number formatting for readout pages: signed percentages, p-values, undefined values."""

from __future__ import annotations

import math
from typing import Any

from django import template

register = template.Library()
UNDEFINED = "\u2013"  # an en dash: "no value"


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


@register.filter
def signed_pct(value: Any, digits: int = 2) -> str:
    """0.0433 -> '+4.33%'."""
    number = _finite(value)
    return UNDEFINED if number is None else f"{number * 100:+.{digits}f}%"


@register.filter
def pct(value: Any, digits: int = 1) -> str:
    number = _finite(value)
    return UNDEFINED if number is None else f"{number * 100:.{digits}f}%"


@register.filter
def num(value: Any, digits: int = 3) -> str:
    number = _finite(value)
    if number is None:
        return UNDEFINED
    return f"{number:,.{digits}f}"


@register.filter
def signed_num(value: Any, digits: int = 3) -> str:
    number = _finite(value)
    return UNDEFINED if number is None else f"{number:+,.{digits}f}"


@register.filter
def pvalue(value: Any) -> str:
    number = _finite(value)
    if number is None:
        return UNDEFINED
    if number < 0.0001:
        return "<0.0001"
    return f"{number:.4f}"


@register.filter
def basis_pct(value: Any) -> str:
    """8000 (out of 10,000) -> '80%'."""
    number = _finite(value)
    if number is None:
        return UNDEFINED
    return f"{number / 100:.2f}".rstrip("0").rstrip(".") + "%"
