"""Reading the verdict recordings that the reference scripts (scripts/*_reference/) write: a
gzipped JSON-lines file with one ``{"kind": "meta"}`` line, lines of one context kind (the
prompts, records or cases the verdicts refer to) and the verdict lines."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

Recording = tuple[dict[str, Any], dict[Any, dict[str, Any]], list[dict[str, Any]]]


def read_recording(
    path: Path,
    context_kind: str,
    key: Callable[[dict[str, Any]], Any],
    value: Callable[[dict[str, Any]], dict[str, Any]] = lambda item: item,
) -> Recording:
    """(meta, context lines by ``key``, every other line in file order)."""
    meta: dict[str, Any] = {}
    context: dict[Any, dict[str, Any]] = {}
    verdicts: list[dict[str, Any]] = []
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            item = json.loads(line)
            if item["kind"] == "meta":
                meta = item
            elif item["kind"] == context_kind:
                context[key(item)] = value(item)
            else:
                verdicts.append(item)
    return meta, context, verdicts
