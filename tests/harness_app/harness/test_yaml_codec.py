from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_app.harness.errors import HarnessValidationError
from harness_app.harness.yaml_codec import dump_yaml, load_yaml


@settings(max_examples=50, deadline=None)
@given(
    st.dictionaries(
        st.text(st.characters(codec="utf-8")),
        st.text(st.characters(codec="utf-8")),
    )
)
def test_strings_round_trip_exactly(data: dict[str, str]) -> None:
    assert load_yaml(dump_yaml(data)) == data


@pytest.mark.parametrize("text", ["a\x85b", "line\u2028sep", "cr\r\nlf", "x\u2029"])
def test_yaml_line_break_characters_survive(text: str) -> None:
    assert load_yaml(dump_yaml({"k": text})) == {"k": text}


def test_multiline_strings_are_blocks_and_long_lines_are_not_folded() -> None:
    long_line = "word " * 60

    assert dump_yaml({"a": "one\ntwo\n", "b": long_line.strip()}) == (
        f"a: |\n  one\n  two\nb: {long_line.strip()}\n"
    )


def test_lists_are_indented() -> None:
    assert dump_yaml({"a": [1, 2]}) == "a:\n  - 1\n  - 2\n"


def test_error_path_is_configurable() -> None:
    with pytest.raises(HarnessValidationError) as caught:
        load_yaml("a: [", path="hooks.yaml")

    assert caught.value.errors[0].path == "hooks.yaml"
    assert caught.value.errors[0].message.startswith("line 1, column 5:")


def test_billion_laughs_is_refused() -> None:
    text = 'a: &a ["x","x"]\nb: &b [*a,*a]\nc: [*b,*b]\n'

    with pytest.raises(HarnessValidationError, match="aliases"):
        load_yaml(text)


def test_absurd_nesting_is_an_error_not_a_crash() -> None:
    with pytest.raises(HarnessValidationError) as caught:
        load_yaml("a: " + "[" * 100_000 + "]" * 100_000)

    assert caught.value.errors[0].message == "the document is nested too deeply"
