"""Page long lists the same way on every console page (``?page=N``)."""

from __future__ import annotations

from typing import Any

from django.core.paginator import Page, Paginator
from django.http import HttpRequest

DEFAULT_PAGE_SIZE = 25


def paginate(request: HttpRequest, items: Any, per_page: int = DEFAULT_PAGE_SIZE) -> Page:  # type: ignore[type-arg]
    """The requested page; out-of-range or malformed numbers give the nearest valid page."""
    return Paginator(items, per_page).get_page(request.GET.get("page"))
