"""BFCL's AST rule, hand-built cases per rule (the expected verdicts and error types are those
of bfcl-eval 2026.3.23's ast_checker; the recorded-output tests hold the port to the official
checker on ~190,000 outputs)."""

from __future__ import annotations

from typing import Any

import pytest

from training_app.evals.bfcl import check_calls, score_result, standardize_string

WEATHER: dict[str, Any] = {
    "name": "get_weather",
    "parameters": {
        "type": "dict",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "threshold": {"type": "float"},
            "units": {"type": "string", "enum": ["c", "f"]},
            "hours": {"type": "array", "items": {"type": "integer"}},
            "filters": {"type": "dict", "properties": {"rain": {"type": "boolean"}}},
        },
        "required": ["city", "days"],
    },
}
NEWS = {
    "name": "news.search",
    "parameters": {
        "type": "dict",
        "properties": {"topic": {"type": "string"}},
        "required": ["topic"],
    },
}
TRUTH = [
    {
        "get_weather": {
            "city": ["New York, NY", "NYC"],
            "days": [3],
            "threshold": [2.0, ""],
            "units": ["c", ""],
            "hours": [[9, 12], ""],
            "filters": [{"rain": [True]}, ""],
        }
    }
]


def verdict(call: Any, category: str = "simple_python", functions: Any = None) -> tuple:
    result = score_result(category, functions or [WEATHER, NEWS], TRUTH, call)
    return result.valid, result.error_type


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("[get_weather(city='NYC', days=3)]", (True, None)),
        # strings standardised: case, spaces and ,./-_*^ do not count
        ("[get_weather(city='new york ny', days=3)]", (True, None)),
        ("[get_weather(city='New-York NY.', days=3)]", (True, None)),
        ("[get_weather(city='Boston', days=3)]", (False, "value_error:string")),
        # an int passes for a float (whole); a float never for an int
        ("[get_weather(city='NYC', days=3, threshold=2)]", (True, None)),
        ("[get_weather(city='NYC', days=3.0)]", (False, "type_error:simple")),
        ("[get_weather(city='NYC', days='3')]", (False, "type_error:simple")),
        # required and unexpected parameters; "" = may be left out
        ("[get_weather(city='NYC')]", (False, "simple_function_checker:missing_required")),
        (
            "[get_weather(city='NYC', days=3, mood='x')]",
            (False, "simple_function_checker:unexpected_param"),
        ),
        ("[get_weather(city='NYC', days=3, units='k')]", (False, "value_error:string")),
        # lists element-wise; items type-checked one level deep
        ("[get_weather(city='NYC', days=3, hours=[9, 12])]", (True, None)),
        ("[get_weather(city='NYC', days=3, hours=[12, 9])]", (False, "value_error:list/tuple")),
        # (the acceptable "" passes any list's item types; the value check then fails)
        ("[get_weather(city='NYC', days=3, hours=['9', '12'])]", (False, "value_error:list/tuple")),
        ("[get_weather(city='NYC', days=3, hours=(9, 12))]", (False, "type_error:simple")),
        # dicts key by key
        ("[get_weather(city='NYC', days=3, filters={'rain': True})]", (True, None)),
        (
            "[get_weather(city='NYC', days=3, filters={'rain': False})]",
            (False, "value_error:dict_value"),
        ),
        (
            "[get_weather(city='NYC', days=3, filters={'snow': True})]",
            (False, "value_error:dict_key"),
        ),
        # the function name, and how many calls
        ("[news.search(topic='x')]", (False, "simple_function_checker:wrong_func_name")),
        (
            "[get_weather(city='NYC', days=3), get_weather(city='NYC', days=3)]",
            (False, "simple_function_checker:wrong_count"),
        ),
        ("Sorry, I cannot do that.", (False, "ast_decoder:decoder_failed")),
        ([{"get_weather": "city=NYC"}], (False, "ast_decoder:decoder_wrong_output_format")),
        ([{"get_weather": {"city": "NYC", "days": 3}}], (True, None)),  # the decoded form
    ],
)
def test_one_rule_at_a_time(call: Any, expected: tuple) -> None:
    assert verdict(call) == expected


def test_list_items_are_type_checked_against_each_acceptable_list() -> None:
    truth = [{"get_weather": {"city": ["NYC"], "days": [3], "hours": [[9, 12]]}}]
    call = "[get_weather(city='NYC', days=3, hours=['9', '12'])]"
    result = score_result("simple_python", [WEATHER], truth, call)
    assert (result.valid, result.error_type) == (False, "type_error:nested")


def test_a_simple_category_is_judged_against_the_first_function() -> None:
    call = "[get_weather(city='NYC', days=3)]"
    assert verdict(call, "simple_python", [NEWS, WEATHER]) == (
        False,
        "simple_function_checker:wrong_func_name",
    )
    assert verdict(call, "multiple", [NEWS, WEATHER]) == (True, None)


def test_parallel_calls_match_in_any_order_but_greedily() -> None:
    functions = [NEWS]
    truth = [{"news.search": {"topic": ["a", "b"]}}, {"news.search": {"topic": ["a"]}}]
    in_order = "[news.search(topic='b'), news.search(topic='a')]"
    reversed_ = "[news.search(topic='a'), news.search(topic='b')]"
    assert score_result("parallel", functions, truth, in_order).valid
    # BFCL's first answer takes the first call that fits ('a'), leaving 'b' for ["a"]
    result = score_result("parallel", functions, truth, reversed_)
    assert result.error_type == "parallel_function_checker_no_order:cannot_find_match"
    assert score_result("parallel", functions, truth, "[news.search(topic='a')]").error_type == (
        "parallel_function_checker_no_order:wrong_count"
    )


def test_irrelevance_is_correct_when_no_call_is_made() -> None:
    for output in ("", "[]", "I can't help with that.", [], [{}], "```python\n[f(a=1)]\n```"):
        assert score_result("irrelevance", [NEWS], [], output).valid, output
    for output in ("[news.search(topic='x')]", "[lookup()]", [{"lookup": {}}]):
        result = score_result("live_irrelevance", [NEWS], [], output)
        assert (result.valid, result.error_type) == (False, "irrelevance_error:decoder_success")


def test_dotted_names_as_an_fc_model_sends_them() -> None:
    truth = [{"news.search": {"topic": ["x"]}}]
    call = [{"news_search": {"topic": "x"}}]
    assert not check_calls("simple_python", [NEWS], call, truth).valid
    assert check_calls("simple_python", [NEWS], call, truth, underscore_to_dot=True).valid


def test_what_bfcls_checker_cannot_judge_is_invalid_with_the_reason() -> None:
    # BFCL's checker raises on these (its runner would stop); the scorer says why
    no_doc = check_calls("parallel", [NEWS], [{"x": {}}], [{"missing": {}}])
    assert (no_doc.valid, no_doc.error_type) == (False, "checker_error:TypeError")
    assert "no function doc offers" in (no_doc.error or "")
    huge = score_result(
        "simple_python",
        [WEATHER, NEWS],
        TRUTH,
        [{"get_weather": {"city": "NYC", "days": 3, "threshold": 10**400}}],
    )
    assert (huge.valid, huge.error_type) == (False, "checker_error:OverflowError")


def test_standardize_string_is_bfcls() -> None:
    assert standardize_string("April 1, 2024") == "april12024"
    assert standardize_string("It's a/b-c_d*e^f.") == 'it"sabcdef'
