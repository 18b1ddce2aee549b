"""The prompting decoder: BFCL's reading of a string of Python calls, bounded, never eval.

Expected values are BFCL's (``default_decode_ast_prompting`` in bfcl-eval 2026.3.23; the
recorded-output test checks ~78,000 decodings against it); the quirks are pinned here so a
change to them is a decision, not an accident."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from training_app.evals.bfcl import DecodeError, decode_python_calls
from training_app.evals.bfcl.decode import MAX_INT_BITS, MAX_RESULT_CHARS

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("text", "decoded"),
    [
        ("[f(a=1), g(b='x')]", [{"f": {"a": 1}}, {"g": {"b": "x"}}]),
        ("f(a=1)", [{"f": {"a": 1}}]),  # brackets added
        ("f(a=1), g()", [{"f": {"a": 1}}, {"g": {}}]),
        ("[f(a=1)", [{"f": {"a": 1}}]),  # the missing bracket added
        ("```\n[f(a=1)]\n```", [{"f": {"a": 1}}]),  # backticks and newlines stripped
        ("", []),
        ("[f(a=1),]", [{"f": {"a": 1}}]),
        ("[uber.ride(loc='x')]", [{"uber.ride": {"loc": "x"}}]),  # dotted names
        ("[f(1, a=2)]", [{"f": {"a": 2}}]),  # positional arguments dropped
        ("[f(a=1, a=2)]", [{"f": {"a": 2}}]),  # the last repeated keyword wins
        ("[f()(x=1)]", [{"": {"x": 1}}]),  # no name to read
        ("[f(**k)]", [{"f": {None: "k"}}]),
        ("[f(a=-5, b=+5, c=not True, d=~3)]", [{"f": {"a": -5, "b": -5, "c": -1, "d": -3}}]),
        ("[f(a=unit_celsius)]", [{"f": {"a": "unit_celsius"}}]),  # a name reads as text
        ("[f(a=math.sqrt(2))]", [{"f": {"a": "math.sqrt(2)"}}]),  # a call as its source
        ("[f(a=g(b=1))]", [{"f": {"a": {"g": {"b": 1}}}}]),  # ... or as a nested call
        ("[f(a=x[1, 2])]", [{"f": {"a": "x[(1, 2)]"}}]),  # a subscript as BFCL writes it
        ("[f(a=...)]", [{"f": {"a": "..."}}]),
        ("[f(a=(1, 2), b=[1, {'k': None}])]", [{"f": {"a": (1, 2), "b": [1, {"k": None}]}}]),
        (
            "[f(a=2 * 3.5, b='a' + 'b', c=2 ** -1, d=(1 < 2) + 1)]",
            [{"f": {"a": 7.0, "b": "ab", "c": 0.5, "d": 2}}],
        ),
        ("[f(a=[1, 2, 3][1] * 2, b='abc'[1:] + 'x')]", [{"f": {"a": 4, "b": "bcx"}}]),
        ("[f(a={'a': 1} | {'b': 2})]", [{"f": {"a": {"a": 1, "b": 2}}}]),
    ],
)
def test_bfcls_reading_of_python_calls(text: str, decoded: list[dict]) -> None:
    assert decode_python_calls(text) == decoded


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("I'm sorry, I can't help with that.", "not Python call syntax"),
        ("```python\n[f(a=1)]\n```", "not Python call syntax"),  # the tag breaks it, in BFCL too
        ("Sure: [f(a=1)]", "not Python call syntax"),
        ("[f(a=1", "not Python call syntax"),
        ('[{"name": "f", "arguments": {}}]', "item 0 of the list is not a function call"),
        ("[None]", "item 0 of the list is not a function call"),
        ("[f(a=1)][0]", "expected a call or a list of calls"),
        ("[f(a=math.pi)]", "cannot decode a value of kind Attribute"),
        ("[f(a=lambda: 1)]", "cannot decode a value of kind Lambda"),
        ("[f(a=f'{x}')]", "cannot decode a value of kind JoinedStr"),
        ("[f(a=-x)]", "BFCL negates only a literal number"),
        ("[f(a={**x})]", "cannot decode a value of kind **"),
        ("[f(a={[1]: 2})]", "unhashable"),
        ("[f(a=1 / 0)]", "ZeroDivisionError"),
        ("[f(a=x + 1)]", "only literal arithmetic is evaluated"),
        ("[f(a=abs(-2) * 3)]", "only literal arithmetic is evaluated"),  # BFCL would eval it
        ("[f(a='%d' % 5)]", "%-formatting is not evaluated"),
    ],
)
def test_what_does_not_decode_says_why(text: str, reason: str) -> None:
    with pytest.raises(DecodeError, match=reason.replace("*", r"\*").replace("[", r"\[")):
        decode_python_calls(text)


def test_nothing_is_evaluated_beyond_literal_arithmetic(tmp_path: Path) -> None:
    marker = tmp_path / "touched"
    attack = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    # a call without keywords reads as its source text; inside arithmetic it is refused
    assert decode_python_calls(f"[f(a={attack})]") == [{"f": {"a": attack}}]
    with pytest.raises(DecodeError):
        decode_python_calls(f"[f(a={attack} or 1 + 1)]")
    with pytest.raises(DecodeError):
        decode_python_calls(f"[f(a=1 + ({attack} and 1))]")
    assert not marker.exists()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[f(a=2 ** 100000)]", f"larger than {MAX_INT_BITS} bits"),
        ("[f(a=1 << 100000)]", f"larger than {MAX_INT_BITS} bits"),
        ("[f(a='ab' * 10 ** 6)]", "a repetition longer than"),
        ("[f(a=[0] * 10 ** 9)]", "a repetition longer than"),
        ("[f(a=" + "1 + " * 150 + "1)]", "nested deeper than"),
        ("[f(a=" + "[" * 300 + "]" * 300 + ")]", "not Python call syntax"),  # the parser's limit
    ],
)
def test_decoding_is_bounded(text: str, reason: str) -> None:
    with pytest.raises(DecodeError, match=reason):
        decode_python_calls(text)


def test_an_output_longer_than_the_limit_is_not_parsed() -> None:
    text = "[f(a='" + "x" * MAX_RESULT_CHARS + "')]"
    with pytest.raises(DecodeError, match=f"at most {MAX_RESULT_CHARS:,} are decoded"):
        decode_python_calls(text)


def test_the_scorer_imports_no_django() -> None:
    code = "import sys, training_app.evals.bfcl; print('django' in sys.modules)"
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert run.stdout.strip() == "False"
