"""Limits on JSON that comes from users: nesting depth and U+0000.

Python's ``json`` recurses once per nesting level, so 100,000 ``[`` raise ``RecursionError``
(a server error, not a parse error), and PostgreSQL ``text``/``jsonb`` cannot hold U+0000.
``json_loads_bounded`` parses (the C decoder gives up cleanly, with ``RecursionError``, long
before the stack is at risk) and then walks the value once, iteratively, refusing anything
nested deeper than ``MAX_JSON_DEPTH`` and any key or string holding U+0000.

Both report a path in the API's field notation (``events[3].amount``), so callers can name
the offending field. Pure Python (no Django): the harness archive reader uses it too.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Arrays and objects nested inside each other; ``[]`` is depth 1, a scalar depth 0.
MAX_JSON_DEPTH = 64

# For naming where a too-deep document crosses the limit: a string token (an unterminated one
# runs to the end, so the scan stays linear on malformed input), a bracket, ``:`` or ``,``.
_STRING = r'"(?:[^"\\]|\\.)*+(?:"|\\?\Z)'
_PATH_TOKENS = re.compile(rf"{_STRING}|[\[\]{{}}:,]", re.DOTALL)


class JsonLimitError(ValueError):
    """The JSON breaks a limit; ``path`` names where (``""``: the document itself)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


def json_loads_bounded(
    text: str | bytes, *, max_depth: int = MAX_JSON_DEPTH, refuse_nul: bool = True, **kwargs: Any
) -> Any:
    """``json.loads`` that refuses (JsonLimitError) nesting deeper than ``max_depth`` and,
    unless ``refuse_nul`` is off, U+0000 in any key or string; syntax errors stay
    ``json.JSONDecodeError``."""
    if isinstance(text, bytes | bytearray):
        text = text.decode("utf-8")
    try:
        value = json.loads(text, **kwargs)
    except RecursionError:
        # The C decoder counts its nesting against the recursion limit and unwinds cleanly;
        # the document is far deeper than any limit we allow, so say where it crossed ours.
        raise JsonLimitError(
            _path_beyond_depth(text, max_depth), depth_message(max_depth)
        ) from None
    # Fast paths for the common case: with the (default) strict decoder U+0000 can only
    # arrive as the escape ``\u0000``, and depth needs only a walk over the containers.
    if refuse_nul and "\\u0000" in text:
        problem = json_value_problem(value, max_depth=max_depth)
        if problem is not None:
            raise problem
    if nested_deeper_than(value, max_depth):
        raise JsonLimitError(_path_beyond_depth(text, max_depth), depth_message(max_depth))
    return value


def nested_deeper_than(value: Any, max_depth: int) -> bool:
    """Whether arrays/objects nest deeper than ``max_depth`` in ``value`` (no recursion)."""
    if not isinstance(value, dict | list):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > max_depth:
            return True
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
    return False


def json_value_problem(
    value: Any, *, max_depth: int = MAX_JSON_DEPTH, prefix: tuple[Any, ...] = ()
) -> JsonLimitError | None:
    """The first limit a parsed value breaks (in document order): a container nested deeper
    than ``max_depth`` or U+0000 in a key or string. Iterative, so any depth is safe."""
    stack: list[tuple[tuple[Any, ...], Any]] = [(prefix, value)]
    base = len(prefix)
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return JsonLimitError(json_path(path), NUL_MESSAGE)
            continue
        if isinstance(item, dict):
            children: list[tuple[tuple[Any, ...], Any]] = []
            for key, child in item.items():
                if isinstance(key, str) and "\x00" in key:
                    return JsonLimitError(
                        json_path((*path, key.replace("\x00", "\\u0000"))), NUL_MESSAGE
                    )
                children.append(((*path, key), child))
        elif isinstance(item, list | tuple):
            children = [((*path, i), child) for i, child in enumerate(item)]
        else:
            continue
        if len(path) - base >= max_depth:
            return JsonLimitError(json_path(path), depth_message(max_depth))
        children.reverse()
        stack.extend(children)
    return None


def depth_message(max_depth: int) -> str:
    return f"nested deeper than {max_depth} levels of arrays/objects"


def _path_beyond_depth(text: str, max_depth: int) -> str:
    """The path of the first container that opens beyond ``max_depth`` (error path only)."""
    frames: list[list[Any]] = []  # [kind, current key or index] per open container
    last_string = ""
    for match in _PATH_TOKENS.finditer(text):
        token = match.group()
        if token[0] == '"':
            last_string = token
        elif token == ":":
            if frames and frames[-1][0] == "{":
                frames[-1][1] = _key_text(last_string)
        elif token == ",":
            if frames and frames[-1][0] == "[":
                frames[-1][1] += 1
        elif token in "[{":
            if len(frames) == max_depth:
                return json_path([frame[1] for frame in frames])
            frames.append([token, 0 if token == "[" else ""])
        elif frames:
            frames.pop()
    return ""


def _key_text(token: str) -> str:
    try:
        key = json.loads(token)
    except ValueError:
        return token.strip('"')
    return str(key)


def json_path(parts: list[Any] | tuple[Any, ...]) -> str:
    """``["events", 3, "amount"]`` -> ``events[3].amount`` (the API's field notation)."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out = f"{out}.{part}" if out else str(part)
    return out


NUL_MESSAGE = "must not contain the NUL character (U+0000)"
