"""plotly.js, served from the installed ``plotly`` Python package (never a CDN).

The package ships the full bundle as ``plotly/package_data/plotly.min.js``. Serving that file
from here keeps one copy (the one matching the Python library that builds the figures),
needs no settings or collectstatic step, and works the same under runserver, gunicorn and
tests. The URL carries the plotly.js version, so browsers may cache it for a year: an
upgrade changes the URL.
"""

from __future__ import annotations

from pathlib import Path

import plotly
from django.http import FileResponse, Http404, HttpRequest
from django.urls import reverse
from django.views.decorators.http import require_safe
from plotly.offline import get_plotlyjs_version

PLOTLY_JS = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
PLOTLY_JS_VERSION = get_plotlyjs_version()


def plotly_js_url() -> str:
    return reverse("console:plotly-js", kwargs={"version": PLOTLY_JS_VERSION})


@require_safe
def plotly_js(request: HttpRequest, version: str) -> FileResponse:
    if version != PLOTLY_JS_VERSION or not PLOTLY_JS.is_file():
        raise Http404("No such plotly.js version.")
    response = FileResponse(PLOTLY_JS.open("rb"), content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "public, max-age=31536000, immutable"
    return response
