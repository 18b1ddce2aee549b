"""How long a job took, for the job pages' time row (partials/job_times.html)."""

from __future__ import annotations

from datetime import datetime

from django import template

register = template.Library()


@register.filter
def elapsed(started: datetime | None, finished: datetime | None) -> str:
    """``started|elapsed:finished``: "40 s", "12 min 5 s", "3 h 7 min", "2 d 4 h"."""
    if started is None or finished is None:
        return ""
    seconds = max(0, round((finished - started).total_seconds()))
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    if minutes:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    return f"{secs} s"
