"""Text as RE2 can search it: RE2 works on UTF-8, and a Python string with a lone surrogate
(``"\\ud800"``, which JSON from a model or a webhook may carry) does not encode to UTF-8, so
each one is searched as U+FFFD (which no pattern written for real text would tell apart)."""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")


def searchable(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text
