from __future__ import annotations

import datetime

from harness_app.harness.errors import FieldError
from harness_app.harness.typed_reader import MAX_JSON_DEPTH, TypedReader, json_type_name


def test_json_type_names() -> None:
    values: tuple[object, ...] = (None, True, 1, 1.5, "s", [], (), {})
    assert [json_type_name(v) for v in values] == [
        "null",
        "boolean",
        "integer",
        "number",
        "string",
        "array",
        "array",
        "object",
    ]
    assert json_type_name(datetime.date(2024, 1, 1)) == "date"


def test_mapping_reports_unknown_and_missing_keys_but_still_returns_the_data() -> None:
    reader = TypedReader()

    data = reader.mapping({"a": 1, "zz": 2}, "x", required=("a", "b"), optional=("c",))

    assert data == {"a": 1, "zz": 2}
    assert reader.errors == [
        FieldError("x.zz", "unknown key 'zz'; allowed keys: a, b, c"),
        FieldError("x.b", "is required"),
    ]


def test_mapping_rejects_non_string_keys() -> None:
    reader = TypedReader()

    assert reader.mapping({1: "a"}, "x") is None
    assert reader.errors == [FieldError("x", "keys must be strings, got integer 1")]


def test_readers_return_defaults_after_recording_an_error() -> None:
    reader = TypedReader()
    data = {"s": 1, "b": "no", "i": True, "n": float("inf"), "l": "x"}

    values = (
        reader.text(data, "s", "p", "d"),
        reader.boolean(data, "b", "p", True),
        reader.integer(data, "i", "p", 7),
        reader.number(data, "n", "p", 1.0),
        reader.strings(data, "l", "p"),
    )

    assert values == ("d", True, 7, 1.0, ())
    assert [e.path for e in reader.errors] == ["p.s", "p.b", "p.i", "p.n", "p.l"]


def test_json_value_deep_copies() -> None:
    original = {"a": [{"b": 1}], "c": "x"}
    reader = TypedReader()

    copied = reader.json_value(original, "")

    assert copied == original
    assert copied["a"] is not original["a"]
    assert copied["a"][0] is not original["a"][0]


def test_json_value_limits_nesting_without_recursing() -> None:
    deep: object = "leaf"
    for _ in range(5000):  # far deeper than the interpreter's recursion limit
        deep = {"k": [deep]}
    reader = TypedReader()

    reader.json_value(deep, "root")

    (error,) = reader.errors
    assert error.path == "root" + ".k[0]" * 32
    assert error.message == f"is nested more than {MAX_JSON_DEPTH} levels deep"


def test_json_value_reports_errors_in_document_order() -> None:
    reader = TypedReader()

    reader.json_value({"x": float("nan"), "y": {1, 2}}, "s")

    assert [e.path for e in reader.errors] == ["s.x", "s.y"]


def test_json_value_converts_tuples_to_lists() -> None:
    reader = TypedReader()

    assert reader.json_value({"a": (1, (2, 3))}, "") == {"a": [1, [2, 3]]}
