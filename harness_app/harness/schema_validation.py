"""JSON Schema validation of data against user-supplied schemas, with every regex in RE2.

Tool input schemas are written by merchants and the arguments they validate come from a
model, so a schema's regexes must not run in Python's backtracking ``re`` (``^(a+)+$`` against
``"a" * 32 + "!"`` froze a worker for minutes). ``re2_validator`` is the one validator factory
for such schemas: Draft 2020-12 with ``pattern``, ``patternProperties`` and
``additionalProperties`` (which consults ``patternProperties``) reimplemented on RE2, which runs
in linear time. ``propertyNames`` and every nested schema go through the same keywords.
``unevaluatedProperties`` cannot be made RE2-only (jsonschema searches ``patternProperties``
and referenced schemas with ``re`` internally), so together with ``patternProperties`` or a
``$ref`` below it, it is refused: at save time by ``regex_keyword_errors``, and at run time
as a validation error (fail closed: the tool does not run).

Save time uses ``regex_keyword_errors``: every pattern must compile in RE2, each error naming
its field path (``tools[0].input_schema.properties.sku.pattern``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any, Final

import re2
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

from harness_app.harness.errors import FieldError, join_path
from harness_app.harness.re2_text import searchable

# Keywords whose value is one subschema, a map of subschemas, or a list of subschemas (Draft
# 2020-12); HSA's harness check walks schemas by the same lists.
SUBSCHEMA_SINGLE: Final = (
    "items",
    "additionalProperties",
    "not",
    "contains",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
)
SUBSCHEMA_MAPS: Final = ("properties", "patternProperties", "$defs", "dependentSchemas")
SUBSCHEMA_LISTS: Final = ("prefixItems", "allOf", "anyOf", "oneOf")
_UNSUPPORTED_UNEVALUATED = (
    "unevaluatedProperties cannot be combined with patternProperties or $ref in a tool schema "
    "(jsonschema would run those regexes outside RE2); list the properties instead"
)


class Re2PatternError(ValueError):
    """RE2 cannot compile the pattern (look-around, backreferences, bad syntax)."""


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> Any:  # re2._Regexp (google-re2 ships no type information)
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        raise Re2PatternError(text) from None


def re2_search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` (RE2 syntax) matches anywhere in ``text``, as JSON Schema's
    ``pattern`` does. Raises ``Re2PatternError`` for a pattern RE2 cannot compile."""
    return _compiled(pattern).search(searchable(text)) is not None


def re2_error(pattern: str) -> str | None:
    """Why RE2 cannot compile ``pattern``, or None when it can."""
    try:
        _compiled(pattern)
    except Re2PatternError as exc:
        return str(exc)
    return None


# --- keywords --------------------------------------------------------------------------------
# ``validator`` is typed Any: the stubs' Validator protocol has no ``descend``.


def _pattern(
    validator: Any, pattern: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "string") or not isinstance(pattern, str):
        return
    try:
        matched = re2_search(pattern, instance)
    except Re2PatternError as exc:
        yield ValidationError(f"pattern {pattern!r} is not supported (RE2: {exc})")
        return
    if not matched:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object") or not isinstance(patterns, Mapping):
        return
    for pattern, subschema in patterns.items():
        try:
            _compiled(pattern)
        except Re2PatternError as exc:
            yield ValidationError(f"patternProperties {pattern!r} is not supported (RE2: {exc})")
            continue
        for name, value in instance.items():
            if re2_search(pattern, name):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _additional_names(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    properties = schema.get("properties", {})
    patterns = [p for p in schema.get("patternProperties", {}) if re2_error(p) is None]
    return [
        name
        for name in instance
        if name not in properties and not any(re2_search(p, name) for p in patterns)
    ]


def _additional_properties(
    validator: Any, allowed: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    # jsonschema's own keyword, with the patternProperties lookup on RE2.
    if not validator.is_type(instance, "object"):
        return
    extras = _additional_names(instance, schema)
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        joined = ", ".join(repr(each) for each in sorted(extras))
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {patterns}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({joined} {verb} unexpected)"
            )


_UNEVALUATED_PROPERTIES = Draft202012Validator.VALIDATORS["unevaluatedProperties"]


def _unevaluated_properties(
    validator: Any, unevaluated: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if _needs_python_regex(schema):
        yield ValidationError(_UNSUPPORTED_UNEVALUATED)
        return
    yield from _UNEVALUATED_PROPERTIES(validator, unevaluated, instance, schema)


def _needs_python_regex(schema: Any) -> bool:
    """Whether jsonschema's unevaluatedProperties would search patternProperties or follow a
    reference from this schema (anywhere below it)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            if "patternProperties" in node or "$ref" in node or "$dynamicRef" in node:
                return True
            stack.extend(_subschemas(node))
    return False


Re2Draft202012Validator = validators.extend(
    Draft202012Validator,
    {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
        "unevaluatedProperties": _unevaluated_properties,
    },
)


def re2_validator(schema: Mapping[str, Any] | bool) -> Validator:
    """A Draft 2020-12 validator for data against a user-supplied ``schema`` whose regexes run
    in RE2. The schema itself is not checked here (``input_schema_errors`` does that)."""
    return Re2Draft202012Validator(schema)  # type: ignore[arg-type]


# --- save-time checks ------------------------------------------------------------------------


def _subschemas(node: Mapping[str, Any]) -> Iterator[Any]:
    for key in SUBSCHEMA_SINGLE:
        if isinstance(node.get(key), dict):
            yield node[key]
    for key in SUBSCHEMA_MAPS:
        if isinstance(node.get(key), dict):
            yield from (v for v in node[key].values() if isinstance(v, dict))
    for key in SUBSCHEMA_LISTS:
        if isinstance(node.get(key), list):
            yield from (v for v in node[key] if isinstance(v, dict))


def regex_keyword_errors(schema: object, path: str) -> list[FieldError]:
    """Every ``pattern`` and ``patternProperties`` regex, at any depth (``propertyNames``
    and combinators included), must compile in RE2; ``unevaluatedProperties`` may not rely on
    Python regexes. Iterative, so depth costs no recursion."""
    errors: list[FieldError] = []
    stack: list[tuple[object, tuple[str | int, ...]]] = [(schema, ())]
    while stack:
        node, parts = stack.pop()
        if not isinstance(node, dict):
            continue
        pattern = node.get("pattern")
        if isinstance(pattern, str) and (problem := re2_error(pattern)) is not None:
            errors.append(
                FieldError(join_path(path, *parts, "pattern"), _message(pattern, problem))
            )
        patterns = node.get("patternProperties")
        if isinstance(patterns, dict):
            for key in patterns:
                if isinstance(key, str) and (problem := re2_error(key)) is not None:
                    errors.append(
                        FieldError(
                            join_path(path, *parts, "patternProperties", key),
                            _message(key, problem),
                        )
                    )
        if "unevaluatedProperties" in node and _needs_python_regex(node):
            errors.append(
                FieldError(
                    join_path(path, *parts, "unevaluatedProperties"), _UNSUPPORTED_UNEVALUATED
                )
            )
        for key in SUBSCHEMA_SINGLE:
            if isinstance(node.get(key), dict):
                stack.append((node[key], (*parts, key)))
        for key in SUBSCHEMA_MAPS:
            if isinstance(node.get(key), dict):
                stack.extend(
                    (v, (*parts, key, k)) for k, v in node[key].items() if isinstance(k, str)
                )
        for key in SUBSCHEMA_LISTS:
            if isinstance(node.get(key), list):
                stack.extend((v, (*parts, key, i)) for i, v in enumerate(node[key]))
    return sorted(errors, key=lambda e: e.path)


def _message(pattern: str, problem: str) -> str:
    return (
        f"regex {pattern!r} is rejected by RE2 ({problem}); patterns run in RE2 (linear time), "
        "which has no backreferences or look-around"
    )
