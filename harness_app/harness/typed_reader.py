"""Reading loosely typed documents (parsed JSON / YAML) into typed values, collecting errors.

Every importer (dict, YAML, OpenAI tools, SKILL.md, archives) faces the same problem: the
input is ``Any`` and each wrong shape must become a ``FieldError`` with the exact path, while
reading continues so that *all* problems are reported at once. ``TypedReader`` does that in
one place, so the messages read the same everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from harness_app.harness.errors import FieldError, join_path

JSON_TYPE_NAMES = "string, number, boolean, null, array or object"
# Deep enough for any real tool schema; shallow enough for recursive validators and encoders.
MAX_JSON_DEPTH = 64


def json_type_name(value: object) -> str:
    """The JSON name of a Python value's type, for messages ("got integer")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


class TypedReader:
    """Collects ``FieldError``s while pulling typed values out of untyped data.

    Readers return a usable fallback (the default, ``""``, ``()``) after recording an error,
    so callers can keep going and report everything in one pass.
    """

    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    def error(self, path: str, message: str) -> None:
        self.errors.append(FieldError(path, message))

    def mapping(
        self,
        value: object,
        path: str,
        *,
        required: Iterable[str] = (),
        optional: Iterable[str] = (),
    ) -> dict[str, Any] | None:
        """Check ``value`` is a mapping with string keys, the required ones, and no others."""
        if not isinstance(value, Mapping):
            self.error(path, f"must be an object (mapping), got {json_type_name(value)}")
            return None
        required = tuple(required)
        allowed = required + tuple(optional)
        string_keys = True
        for key in value:
            if not isinstance(key, str):
                self.error(path, f"keys must be strings, got {json_type_name(key)} {key!r}")
                string_keys = False
            elif key not in allowed:
                self.error(
                    join_path(path, key),
                    f"unknown key '{key}'; allowed keys: {', '.join(allowed)}",
                )
        for key in required:
            if key not in value:
                self.error(join_path(path, key), "is required")
        # Unknown or missing keys are recorded but the known ones are still read, so one pass
        # reports every problem.
        return dict(value) if string_keys else None

    def text(self, obj: Mapping[str, Any], key: str, path: str, default: str | None = None) -> str:
        """A string field; required when ``default`` is None."""
        if key not in obj:
            return default if default is not None else ""
        value = obj[key]
        if not isinstance(value, str):
            self.error(join_path(path, key), f"must be a string, got {json_type_name(value)}")
            return default if default is not None else ""
        return value

    def boolean(self, obj: Mapping[str, Any], key: str, path: str, default: bool) -> bool:
        if key not in obj:
            return default
        value = obj[key]
        if not isinstance(value, bool):
            self.error(join_path(path, key), f"must be true or false, got {json_type_name(value)}")
            return default
        return value

    def integer(self, obj: Mapping[str, Any], key: str, path: str, default: int) -> int:
        if key not in obj:
            return default
        value = obj[key]
        if isinstance(value, bool) or not isinstance(value, int):
            self.error(join_path(path, key), f"must be an integer, got {json_type_name(value)}")
            return default
        return int(value)

    def number(self, obj: Mapping[str, Any], key: str, path: str, default: float) -> float:
        """A finite number; integers are accepted and stored as floats (canonical form)."""
        if key not in obj:
            return default
        value = obj[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.error(join_path(path, key), f"must be a number, got {json_type_name(value)}")
            return default
        if not math.isfinite(value):
            self.error(join_path(path, key), "must be a finite number")
            return default
        return float(value)

    def array(self, obj: Mapping[str, Any], key: str, path: str) -> list[Any]:
        """A list field (missing means empty)."""
        if key not in obj:
            return []
        value = obj[key]
        if not isinstance(value, list | tuple):
            self.error(
                join_path(path, key), f"must be an array (list), got {json_type_name(value)}"
            )
            return []
        return list(value)

    def strings(self, obj: Mapping[str, Any], key: str, path: str) -> tuple[str, ...]:
        """A list of strings (missing means empty)."""
        items = self.array(obj, key, path)
        result: list[str] = []
        for index, item in enumerate(items):
            if isinstance(item, str):
                result.append(item)
            else:
                self.error(
                    join_path(path, key, index), f"must be a string, got {json_type_name(item)}"
                )
        return tuple(result)

    def json_object(
        self, obj: Mapping[str, Any], key: str, path: str, default: dict[str, Any]
    ) -> dict[str, Any]:
        """A JSON object field, deep-copied so the result shares nothing with the input."""
        if key not in obj:
            return default
        value = obj[key]
        field_path = join_path(path, key)
        if not isinstance(value, Mapping):
            self.error(field_path, f"must be an object (mapping), got {json_type_name(value)}")
            return default
        copied = self.json_value(value, field_path)
        return copied if isinstance(copied, dict) else default

    def json_value(self, value: object, path: str) -> Any:
        """Deep-copy ``value`` if it is plain JSON data; record an error for anything else.

        YAML can produce dates, sets and non-string keys, and Python callers can pass
        tuples or NaN; none of those survive a JSON round trip, so they are rejected here.
        Nesting is limited to ``MAX_JSON_DEPTH`` because schema validators, ``deepcopy`` and
        ``json`` all recurse; the copy itself is iterative so the limit check cannot crash.
        """
        root: list[Any] = [None]
        # (value, path, depth, container to fill, slot in it); children are pushed in reverse
        # so errors come out in document order.
        stack: list[tuple[object, str, int, Any, int | str]] = [(value, path, 0, root, 0)]
        while stack:
            item, item_path, depth, container, slot = stack.pop()
            copied: Any = None
            if item is None or isinstance(item, bool | str):
                copied = item
            elif isinstance(item, int):
                copied = int(item)
            elif isinstance(item, float):
                if not math.isfinite(item):
                    self.error(item_path, "must be a finite number (JSON has no NaN or Infinity)")
                copied = item
            elif isinstance(item, list | tuple | Mapping) and depth >= MAX_JSON_DEPTH:
                self.error(item_path, f"is nested more than {MAX_JSON_DEPTH} levels deep")
            elif isinstance(item, list | tuple):
                copied = [None] * len(item)
                children = [
                    (child, join_path(item_path, index), depth + 1, copied, index)
                    for index, child in enumerate(item)
                ]
                stack.extend(reversed(children))
            elif isinstance(item, Mapping):
                copied = {}
                entries: list[tuple[object, str, int, Any, int | str]] = []
                for child_key, child in item.items():
                    if not isinstance(child_key, str):
                        self.error(
                            item_path,
                            f"object keys must be strings, got {json_type_name(child_key)} "
                            f"{child_key!r}",
                        )
                        continue
                    copied[child_key] = None
                    entries.append(
                        (child, join_path(item_path, child_key), depth + 1, copied, child_key)
                    )
                stack.extend(reversed(entries))
            else:
                self.error(
                    item_path, f"must be JSON data ({JSON_TYPE_NAMES}), got {json_type_name(item)}"
                )
            container[slot] = copied
        return root[0]
