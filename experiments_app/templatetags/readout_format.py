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
def confidence(alpha: Any) -> str:
    """The confidence level of significance level ``alpha``: 0.05 -> '95%'."""
    number = _finite(alpha)
    return UNDEFINED if number is None else f"{(1 - number) * 100:g}%"


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
def effect_tone(effect: Any, higher_is_better: bool = True) -> str:
    """'good' / 'bad' for a significant effect that helps / hurts the metric, else 'neutral'.

    Significance alone says nothing about direction: a significant drop in GMV is bad news.
    """
    if not getattr(effect, "significant", False):
        return "neutral"
    estimate = _finite(getattr(effect, "estimate", None))
    if estimate is None or estimate == 0.0:
        return "neutral"
    return "good" if (estimate > 0.0) == bool(higher_is_better) else "bad"


TONE_TITLES = {
    "good": "significant improvement",
    "bad": "significant deterioration",
    "neutral": "not significant",
}


@register.filter
def tone_title(tone: str) -> str:
    """Words for the colour, for screen readers and colour-blind readers (a title attribute)."""
    return TONE_TITLES.get(tone, "")


@register.filter
def basis_pct(value: Any) -> str:
    """8000 (out of 10,000) -> '80%'."""
    number = _finite(value)
    if number is None:
        return UNDEFINED
    return f"{number / 100:.2f}".rstrip("0").rstrip(".") + "%"
