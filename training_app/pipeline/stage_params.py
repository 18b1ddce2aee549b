"""Reading a stage's ``spec.params`` (a plain dict from YAML) into its frozen params
dataclass: unknown keys and values of the wrong type are refused with a message naming the
key, so a typo in a run config fails when the run is queued, not hours into training."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

T = TypeVar("T")


class StageParamsError(ValueError):
    """A stage's params do not fit its dataclass; the message names the key."""


def params_from_mapping(cls: type[T], values: Mapping[str, Any] | None, *, stage: str) -> T:
    """``cls(**values)`` after checking every key is a field of ``cls`` and every value has
    the field's type (ints are accepted for floats; bools are not numbers). The dataclass's
    own ``__post_init__`` checks ranges and raises ``StageParamsError`` itself."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    values = dict(values or {})
    hints = typing.get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - fields)
    if unknown:
        raise StageParamsError(
            f"{stage} params: unknown key(s) {', '.join(unknown)}; "
            f"allowed: {', '.join(sorted(fields))}"
        )
    converted: dict[str, Any] = {}
    for key, value in values.items():
        converted[key] = _coerce(hints[key], value, f"{stage} params: {key}")
    return cls(**converted)


def _coerce(hint: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        problems = []
        for option in typing.get_args(hint):
            try:
                return _coerce(option, value, where)
            except StageParamsError as exc:
                problems.append(str(exc))
        raise StageParamsError(f"{where}: {value!r} fits none of {hint}")
    if hint is type(None):
        if value is None:
            return None
        raise StageParamsError(f"{where}: expected null, got {value!r}")
    if origin is typing.Literal:
        allowed = typing.get_args(hint)
        if value in allowed:
            return value
        raise StageParamsError(
            f"{where}: must be one of {', '.join(map(repr, allowed))}; got {value!r}"
        )
    if origin in (tuple, list):
        if not isinstance(value, list | tuple):
            raise StageParamsError(f"{where}: expected a list, got {value!r}")
        (item,) = typing.get_args(hint)[:1] or (Any,)
        return tuple(_coerce(item, v, where) for v in value)
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise StageParamsError(f"{where}: expected a mapping, got {value!r}")
        args = typing.get_args(hint)
        value_hint = args[1] if len(args) == 2 else Any
        return {str(k): _coerce(value_hint, v, f"{where}.{k}") for k, v in value.items()}
    if hint is Any:
        return value
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise StageParamsError(f"{where}: expected true or false, got {value!r}")
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise StageParamsError(f"{where}: expected an integer, got {value!r}")
    if hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise StageParamsError(f"{where}: expected a number, got {value!r}")
    if hint is str:
        if isinstance(value, str):
            return value
        raise StageParamsError(f"{where}: expected a string, got {value!r}")
    raise TypeError(f"{where}: unsupported field type {hint!r}")


def require(condition: bool, stage: str, key: str, message: str) -> None:
    """Raise ``StageParamsError`` naming ``key`` unless ``condition`` holds."""
    if not condition:
        raise StageParamsError(f"{stage} params: {key} {message}")
