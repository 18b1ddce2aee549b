"""Argument checks judged property by property agree with the whole validator.

``SchemaCache.arguments_valid`` judges a plain top-level object schema itself and each
argument against its property schema alone (cached by that schema's identity and the value).
These tests compare its verdict with ``re2_validator(schema).is_valid`` on many random
schemas and arguments: fitting ones, broken ones (missing required, wrong types, extra keys,
tuples, non-string keys) and schemas that must take the whole validator ($ref, $schema,
$defs, a non-object top level).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness_app.harness.schema_validation import re2_validator
from harness_app.hsa.harness_check import SchemaCache

PROPERTY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_NAMES = st.sampled_from(["a", "b", "c", "sku", "limit", "1", "$ref"])
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(-5, 5, allow_nan=False),
    st.sampled_from([0.0, -0.0, 1.0, 2.5, float("nan"), float("inf")]),
    st.text(alphabet="ab1 -", max_size=4),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(_NAMES, inner, max_size=3),
        st.dictionaries(st.integers(0, 2), inner, max_size=2),
    ),
    max_leaves=6,
)
_TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"])


def _leaf() -> st.SearchStrategy[Any]:
    keyword = st.one_of(
        st.just({}),
        st.builds(lambda n: {"minimum": n}, st.integers(-2, 2)),
        st.builds(lambda n: {"maxLength": n}, st.integers(0, 3)),
        st.just({"pattern": "^[a-b]+$"}),
        st.builds(lambda v: {"enum": v}, st.lists(_SCALARS, min_size=1, max_size=3)),
        st.builds(lambda v: {"const": v}, _SCALARS),
        st.just({"description": "see sku", "title": "T", "default": 1}),
        st.just({"format": "email"}),
        st.just({"$ref": "#/$defs/n"}),
        st.just({"$id": "https://example.invalid/x"}),
    )
    return st.one_of(
        st.booleans(),
        st.builds(
            lambda t, k: {"type": t, **k},
            st.one_of(_TYPES, st.lists(_TYPES, min_size=1, max_size=2)),
            keyword,
        ),
        keyword,
    )


_SUBSCHEMAS = st.recursive(
    _leaf(),
    lambda inner: st.one_of(
        st.builds(lambda i: {"type": "array", "items": i}, inner),
        st.builds(
            lambda props, req, extra: {
                "type": "object",
                "properties": props,
                "required": sorted(set(req)),
                **({} if extra is None else {"additionalProperties": extra}),
            },
            st.dictionaries(_NAMES, inner, max_size=3),
            st.lists(_NAMES, max_size=2),
            st.one_of(st.none(), st.booleans(), inner),
        ),
        st.builds(lambda xs: {"anyOf": xs}, st.lists(inner, min_size=1, max_size=2)),
        st.builds(lambda s: {"not": s}, inner),
    ),
    max_leaves=5,
)


@st.composite
def _schemas(draw: st.DrawFn) -> dict[str, Any]:
    properties = draw(st.dictionaries(_NAMES, _SUBSCHEMAS, max_size=4))
    schema: dict[str, Any] = {}
    kind = draw(st.sampled_from(["object", "object", "object", None, "array", ["object"]]))
    if kind is not None:
        schema["type"] = kind
    schema["properties"] = properties
    required = draw(
        st.lists(st.one_of(st.sampled_from(sorted(properties) or ["a"]), _NAMES), max_size=3)
    )
    if required or draw(st.booleans()):
        schema["required"] = sorted(set(required))
    extra = draw(st.one_of(st.none(), st.booleans(), _SUBSCHEMAS))
    if extra is not None:
        schema["additionalProperties"] = extra
    for key, value in draw(
        st.lists(
            st.sampled_from(
                [
                    ("description", "Tool."),
                    ("title", "T"),
                    ("default", {}),
                    ("examples", [{}]),
                    ("$comment", "c"),
                    ("$defs", {"n": {"type": "integer"}}),
                    ("$schema", "https://json-schema.org/draft/2020-12/schema"),
                    ("minProperties", 1),
                ]
            ),
            max_size=2,
        )
    ):
        schema[key] = value
    if "$defs" not in schema and "$ref" in repr(schema):
        schema["$defs"] = {"n": {"type": "integer"}}
    return schema


@st.composite
def _arguments(draw: st.DrawFn, schema: dict[str, Any]) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(_VALUES)  # not necessarily an object
    names = [*sorted(schema.get("properties", {})), "extra"]
    chosen = draw(st.lists(st.sampled_from(names), max_size=len(names), unique=True))
    return {name: draw(_VALUES) for name in chosen}


@PROPERTY
@given(st.data())
def test_property_verdicts_equal_the_whole_validators(data: st.DataObject) -> None:
    # given a random schema and several argument sets, some of them broken
    schema = data.draw(_schemas())
    cache = SchemaCache()
    validator = re2_validator(schema)
    for _ in range(4):
        arguments = data.draw(_arguments(schema))
        expected = bool(validator.is_valid(arguments))
        # when / then: a first (uncached) and a second (cached) verdict
        assert cache.arguments_valid(schema, arguments) is expected, (schema, arguments)
        assert cache.arguments_valid(schema, arguments) is expected, (schema, arguments)


@PROPERTY
@given(st.data())
def test_a_rebuilt_schema_around_shared_property_schemas_gets_the_same_verdicts(
    data: st.DataObject,
) -> None:
    # given a schema judged once, then a new top level sharing its property schemas
    # (what a parameter rename or reorder makes), with the arguments renamed alike
    schema = data.draw(_schemas())
    cache = SchemaCache()
    arguments = data.draw(_arguments(schema))
    cache.arguments_valid(schema, arguments)
    renames = {name: f"{name}_x" for name in schema["properties"]}
    rebuilt = {
        **schema,
        "properties": {renames[k]: v for k, v in reversed(schema["properties"].items())},
        **(
            {"required": [renames.get(r, r) for r in schema["required"]]}
            if "required" in schema
            else {}
        ),
    }
    moved = (
        {renames.get(k, k) if isinstance(k, str) else k: v for k, v in arguments.items()}
        if isinstance(arguments, dict)
        else arguments
    )
    # when / then
    assert cache.arguments_valid(rebuilt, moved) is bool(re2_validator(rebuilt).is_valid(moved))


def test_known_cases() -> None:
    cache = SchemaCache()
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 1}, "s": {"type": "string"}},
        "required": ["n"],
        "additionalProperties": False,
    }
    assert cache.arguments_valid(schema, {"n": 2})
    assert not cache.arguments_valid(schema, {"n": 0})
    assert not cache.arguments_valid(schema, {"n": True})  # a bool is not an integer
    assert cache.arguments_valid(schema, {"n": 1.0})  # 1.0 is an integer in JSON Schema
    assert not cache.arguments_valid(schema, {"s": "x"})  # n is required
    assert not cache.arguments_valid(schema, {"n": 2, "x": 1})  # no additional properties
    assert not cache.arguments_valid(schema, [("n", 2)])
    listed = {"type": "object", "properties": {"v": {"type": "array"}}}
    assert cache.arguments_valid(listed, {"v": [1]})
    assert not cache.arguments_valid(listed, {"v": (1,)})  # a tuple is not a JSON array


def test_a_tuple_never_takes_the_cached_verdict_of_an_equal_list() -> None:
    # (canonical JSON writes both as [], but only the list is a JSON array)
    cache = SchemaCache()
    schema = {"type": "array"}
    assert cache.arguments_valid(schema, [])
    assert not cache.arguments_valid(schema, ())
