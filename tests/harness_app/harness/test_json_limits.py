"""JSON from users: nesting depth and U+0000 are refused with the path where they are."""

from __future__ import annotations

import json

import pytest

from harness_app.harness.json_limits import (
    MAX_JSON_DEPTH,
    JsonLimitError,
    json_loads_bounded,
    json_path,
    json_value_problem,
    nested_deeper_than,
)


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_100000_levels_are_refused_without_recursion_error() -> None:
    # json.loads alone raises RecursionError here (a server error in a view)
    with pytest.raises(RecursionError):
        json.loads(nested(100_000))
    with pytest.raises(JsonLimitError) as caught:
        json_loads_bounded(nested(100_000))
    assert caught.value.message == f"nested deeper than {MAX_JSON_DEPTH} levels of arrays/objects"
    assert caught.value.path == "[0]" * MAX_JSON_DEPTH


def test_the_limit_is_exact() -> None:
    assert json_loads_bounded(nested(MAX_JSON_DEPTH)) is not None
    with pytest.raises(JsonLimitError):
        json_loads_bounded(nested(MAX_JSON_DEPTH + 1))


def test_depth_path_names_keys_and_indices() -> None:
    text = '{"a": 1, "attributes": {"x": [1, 2, {"b": [[]]}]}}'
    with pytest.raises(JsonLimitError) as caught:
        json_loads_bounded(text, max_depth=5)
    assert caught.value.path == "attributes.x[2].b[0]"  # the 6th level
    # the path from a document too deep for the decoder names the same place
    deep = '{"attributes": {"x": [1, 2, {"b": ' + nested(100_000) + "}]}}"
    with pytest.raises(JsonLimitError) as caught:
        json_loads_bounded(deep, max_depth=5)
    assert caught.value.path == "attributes.x[2].b[0]"  # the 6th level


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"s": "[" * 500, "t": '\\"]{'})
    assert json_loads_bounded(text, max_depth=1) == {"s": "[" * 500, "t": '\\"]{'}


def test_nul_in_a_value_or_key_is_refused_with_its_path() -> None:
    with pytest.raises(JsonLimitError) as caught:
        json_loads_bounded('{"events": [{"ok": 1}, {"uv_id": "a\\u0000b"}]}')
    assert (caught.value.path, caught.value.message) == (
        "events[1].uv_id",
        "must not contain the NUL character (U+0000)",
    )
    with pytest.raises(JsonLimitError) as caught:
        json_loads_bounded('{"attributes": {"k\\u0000": 1}}')
    assert caught.value.path == "attributes.k\\u0000"
    # refuse_nul=False leaves it to the caller
    assert json_loads_bounded('["\\u0000"]', refuse_nul=False) == ["\x00"]
    # an escaped backslash followed by "u0000" is not U+0000
    assert json_loads_bounded('["\\\\u0000"]') == ["\\u0000"]


def test_syntax_errors_stay_json_decode_errors() -> None:
    with pytest.raises(json.JSONDecodeError):
        json_loads_bounded('{"a": ')
    with pytest.raises(json.JSONDecodeError):
        json_loads_bounded('"unterminated \\')


def test_value_checks_are_iterative() -> None:
    value: list[object] = []
    for _ in range(50_000):  # far past the recursion limit
        value = [value]
    assert nested_deeper_than(value, 64)
    problem = json_value_problem(value)
    assert problem is not None and problem.path == "[0]" * 64
    assert json_value_problem({"a": [{"b": "fine"}]}) is None
    assert json_path(["events", 3, "amount"]) == "events[3].amount"
