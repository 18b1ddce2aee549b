"""plotly.js, served from the installed ``plotly`` Python package (never a CDN).

The package ships the full bundle as ``plotly/package_data/plotly.min.js``. Serving that file
from here keeps one copy (the one matching the Python library that builds the figures),
needs no settings or collectstatic step, and works the same under runserver, gunicorn and
tests. The URL carries the plotly.js version, so browsers may cache it for a year: an
upgrade changes the URL.

The bundle is 4.8 MB raw and about a third of that gzipped, so a client that sends
``Accept-Encoding: gzip`` gets the gzip bytes, compressed once per process and kept in
memory (no per-request compression). Each encoding has its own strong ETag and the
response says ``Vary: Accept-Encoding`` so caches keep the two apart; a matching
``If-None-Match`` answers 304.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import re
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import plotly
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_safe
from plotly.offline import get_plotlyjs_version

PLOTLY_JS = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
PLOTLY_JS_VERSION = get_plotlyjs_version()
CACHE_CONTROL = "public, max-age=31536000, immutable"
_lock = threading.Lock()


@dataclass(frozen=True)
class Variant:
    body: bytes
    etag: str
    encoding: str  # "" for the identity encoding


@dataclass(frozen=True)
class Bundle:
    raw: Variant
    gzip: Variant


def plotly_js_url() -> str:
    return reverse("console:plotly-js", kwargs={"version": PLOTLY_JS_VERSION})


@cache
def _bundle_cached() -> Bundle:
    raw = PLOTLY_JS.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()[:20]
    # mtime=0: the same bytes (and so the same ETag) from every process and restart
    packed = gzip.compress(raw, compresslevel=9, mtime=0)
    return Bundle(
        raw=Variant(raw, f'"{digest}"', ""),
        gzip=Variant(packed, f'"{digest}-gzip"', "gzip"),
    )


def plotly_bundle() -> Bundle:
    """The raw and gzipped bundle, built on first use (one thread compresses; the others
    wait for it instead of compressing too)."""
    with _lock:
        return _bundle_cached()


_GZIP_QUALITY = re.compile(r"^\s*(gzip|\*)\s*(?:;\s*q\s*=\s*([0-9.]+))?\s*$", re.IGNORECASE)


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an ``Accept-Encoding`` header allows gzip (``gzip`` or ``*`` with q > 0; an
    explicit ``gzip;q=0`` refuses it even when ``*`` is allowed)."""
    named: float | None = None
    star: float | None = None
    for part in accept_encoding.split(","):
        match = _GZIP_QUALITY.match(part)
        if not match:
            continue
        try:
            quality = float(match.group(2)) if match.group(2) is not None else 1.0
        except ValueError:
            continue
        if match.group(1).lower() == "gzip":
            named = quality
        else:
            star = quality
    if named is not None:
        return named > 0
    return star is not None and star > 0


def _etag_matches(if_none_match: str, etag: str) -> bool:
    tags = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
    return "*" in tags or etag in tags


@require_safe
def plotly_js(request: HttpRequest, version: str) -> HttpResponseBase:
    if version != PLOTLY_JS_VERSION or not PLOTLY_JS.is_file():
        raise Http404("No such plotly.js version.")
    bundle = plotly_bundle()
    wants_gzip = accepts_gzip(request.headers.get("Accept-Encoding", ""))
    variant = bundle.gzip if wants_gzip else bundle.raw
    response: HttpResponseBase
    if _etag_matches(request.headers.get("If-None-Match", ""), variant.etag):
        response = HttpResponse(status=304)
    else:
        response = FileResponse(
            io.BytesIO(variant.body), content_type="text/javascript; charset=utf-8"
        )
        response["Content-Length"] = str(len(variant.body))
        if variant.encoding:
            response["Content-Encoding"] = variant.encoding
    response["ETag"] = variant.etag
    response["Cache-Control"] = CACHE_CONTROL
    patch_vary_headers(response, ["Accept-Encoding"])
    return response
