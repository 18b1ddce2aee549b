"""BFCL's AST rule for decoded calls (Python categories), ported from ``bfcl-eval`` 2026.3.23
``bfcl_eval/eval_checker/ast_eval/ast_checker.py`` (Apache-2.0), verdict for verdict.

A decoded model output is a list of one-pair dicts ``{function_name: {argument: value}}``; a
ground truth is a list of ``{function_name: {parameter: [acceptable values]}}`` where ``""``
among the acceptable values means "may be left out". The rules, in BFCL's words and order:

- the function name matches (the name of the function doc the answer is judged against; see
  ``check_calls`` for which doc that is per category);
- every required parameter is present; no parameter outside the doc and the answer;
- each value has the declared Python type (an int passes for a float; a tuple for a
  ``tuple``), or the type of the acceptable values, in which case it is a "variable" and is
  compared as it is; list items are type-checked one level deep;
- strings are compared after ``standardize_string`` (spaces and ``,./-_*^`` removed, lower
  case, ``'`` read as ``"``), lists element-wise the same way, dicts key by key (one level),
  lists of dicts dict by dict, anything else with ``in``;
- a parameter of the answer that the output leaves out must allow ``""``;
- parallel categories match the calls order-insensitively, greedily (each answer takes the
  first unmatched output that passes, no backtracking, as BFCL does).

The port keeps BFCL's quirks because the verdicts must be BFCL's (``list_checker`` reads a
string option as its characters; a dict answer that is a plain dict is indexed as BFCL
indexes it). Where BFCL's checker itself raises on an input (a malformed function doc, a
value shape it never expects) the verdict is invalid with ``error_type``
``"checker_error:<exception>"``; BFCL's runner would stop there instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

PYTHON_TYPE_MAPPING: Final[dict[str, type]] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}
# Declared types whose items are type-checked (one level deep).
PYTHON_NESTED_TYPE_CHECK_LIST: Final = frozenset({"array", "tuple"})
_STANDARDIZE: Final = re.compile(r"[ \,\.\/\-\_\*\^]")


@dataclass(frozen=True, slots=True)
class Verdict:
    """One scored output: ``valid``, and when it is not, why (``error``) and BFCL's
    ``error_type`` (``simple_function_checker:missing_required``, ``type_error:simple``,
    ``ast_decoder:decoder_failed``, ...)."""

    valid: bool
    error: str | None = None
    error_type: str | None = None


VALID: Final = Verdict(True)


def _invalid(error: str, error_type: str) -> Verdict:
    return Verdict(False, error, error_type)


def standardize_string(text: str) -> str:
    """BFCL's string normalisation: ``April 1, 2024`` and ``april 1 2024`` compare equal."""
    return _STANDARDIZE.sub("", text).lower().replace("'", '"')


def _standardized(value: Any) -> Any:
    return standardize_string(value) if type(value) is str else value


def _possible_answer_type(options: Sequence[Any]) -> type | None:
    """The type of the first acceptable value that is not ``""`` (None when there is none)."""
    for option in options:
        if option != "":
            return type(option)
    return None


def _type_check(
    param: str,
    value: Any,
    options: Sequence[Any],
    expected_description: str,
    expected: type,
    nested: type | None,
) -> tuple[Verdict, bool]:
    """(verdict, value is a "variable"): BFCL's ``type_checker``."""
    answer_type = _possible_answer_type(options)
    is_variable = answer_type is not None and answer_type is not expected
    items: Any = value
    if type(value) is expected:
        if nested is None:
            return VALID, is_variable
        for option in options:
            # an acceptable value that is not a list (``""``) passes every list
            if type(option) is not list or all(
                _type_check(param, item, option, nested.__name__, nested, None)[0].valid
                for item in items
            ):
                return VALID, is_variable
        if answer_type is not None and type(value) is answer_type:
            # BFCL returns its failed nested result here, still marked invalid
            return _invalid(
                f"Nested type checking failed for parameter {param!r}. Expected outer type "
                f"{expected_description} with inner type {nested.__name__}. "
                f"Parameter value: {value!r}.",
                "type_error:nested",
            ), True
    elif answer_type is not None and type(value) is answer_type:
        return VALID, True
    return _invalid(
        f"Incorrect type for parameter {param!r}. Expected type {expected_description}, "
        f"got {type(value).__name__}. Parameter value: {value!r}.",
        "type_error:simple",
    ), is_variable


def _string_check(param: str, value: str, options: Sequence[Any]) -> Verdict:
    accepted = [standardize_string(o) for o in options if type(o) is str]
    if standardize_string(value) not in accepted:
        return _invalid(
            f"Invalid value for parameter {param!r}: {value!r}. Expected one of {options}. "
            "Case insensitive.",
            "value_error:string",
        )
    return VALID


def _list_check(param: str, value: Sequence[Any], options: Sequence[Any]) -> Verdict:
    # BFCL walks each option by index, so a string option reads as its characters.
    standard = [_standardized(item) for item in value]
    accepted = [[_standardized(option[j]) for j in range(len(option))] for option in options]
    if standard not in accepted:
        return _invalid(
            f"Invalid value for parameter {param!r}: {value!r}. Expected one of {options}.",
            "value_error:list/tuple",
        )
    return VALID


def _dict_check(param: str, value: Any, options: Sequence[Any]) -> Verdict:
    """BFCL's ``dict_checker``: one option must hold every key of the value with the value
    (a string standardised) among that key's acceptable values, compared as they are; every
    option key the value leaves out must allow ``""``."""
    result = _invalid(f"No acceptable dict for parameter {param!r}.", "dict_checker:unclear")
    for answer in options:
        if answer == "":
            continue
        result = _invalid(f"No acceptable dict for parameter {param!r}.", "dict_checker:unclear")
        matched = True
        for key, item in value.items():
            if key not in answer:
                result = _invalid(
                    f"Unexpected dict key parameter: {key!r}.", "value_error:dict_key"
                )
                matched = False
                break
            accepted = [_standardized(answer[key][i]) for i in range(len(answer[key]))]
            if _standardized(item) not in accepted:
                result = _invalid(
                    f"Invalid value for parameter {key!r}: {item!r}. Expected one of {accepted}.",
                    "value_error:dict_value",
                )
                matched = False
                break
        for key, acceptable in answer.items():
            if key not in value and "" not in acceptable:
                result = _invalid(f"Missing dict key parameter: {key!r}.", "value_error:dict_key")
                matched = False
                break
        if matched:
            return VALID
    return result


def _list_dict_check(param: str, value: Sequence[Any], options: Sequence[Any]) -> Verdict:
    """BFCL's ``list_dict_checker``: the dicts of one option, in order."""
    result = _invalid(
        f"No acceptable list of dicts for parameter {param!r}.", "list_dict_checker:unclear"
    )
    for option in options:
        if len(value) != len(option):
            result = _invalid(
                "Wrong number of dictionaries in the list.", "value_error:list_dict_count"
            )
            continue
        matched = True
        for index in range(len(value)):
            result = _dict_check(param, value[index], [option[index]])
            if not result.valid:
                matched = False
                break
        if matched:
            return VALID
    return result


def _function_name(name: str, underscore_to_dot: bool) -> str:
    """BFCL's ``convert_func_name``: for an FC model whose API forbids dots, the expected
    name has its dots as underscores."""
    return name.replace(".", "_") if underscore_to_dot and "." in name else name


def check_simple_call(
    function: Mapping[str, Any],
    call: Mapping[str, Any],
    answer: Mapping[str, Any],
    *,
    underscore_to_dot: bool = False,
) -> Verdict:
    """BFCL's ``simple_function_checker``: one decoded call against one answer, judged with
    ``function``'s doc (its name is the expected name, whatever the answer names)."""
    _name, possible = _first_entry(answer)
    details = function["parameters"]["properties"]
    required_params = function["parameters"]["required"]
    name = _function_name(function["name"], underscore_to_dot)
    if name not in call:
        return _invalid(
            f"Function name {name!r} not found in model output.",
            "simple_function_checker:wrong_func_name",
        )
    arguments = call[name]
    for required in required_params:
        if required not in arguments:
            return _invalid(
                f"Missing required parameter: {required!r}.",
                "simple_function_checker:missing_required",
            )
    for param, raw in arguments.items():
        if param not in details or param not in possible:
            return _invalid(
                f"Unexpected parameter: {param!r}.", "simple_function_checker:unexpected_param"
            )
        declared = details[param]["type"]
        expected = PYTHON_TYPE_MAPPING[declared]
        nested = None
        if declared in PYTHON_NESTED_TYPE_CHECK_LIST:
            nested = PYTHON_TYPE_MAPPING[details[param]["items"]["type"]]
        value = raw
        if declared == "tuple" and type(value) is tuple:
            value = list(value)  # a JSON answer holds a tuple as a list
        if declared == "float" and type(value) is int:
            value = float(value)  # Python's int -> float
        options = possible[param]
        type_verdict, is_variable = _type_check(param, value, options, declared, expected, nested)
        if not type_verdict.valid:
            return type_verdict
        if not is_variable:
            special = _value_check_for(expected, nested)
            if special is not None:
                verdict = special(param, value, options)
                if not verdict.valid:
                    return verdict
                continue
        if value not in options:
            return _invalid(
                f"Invalid value for parameter {param!r}: {value!r}. Expected one of {options}.",
                "value_error:others",
            )
    for param, options in possible.items():
        if param not in arguments and "" not in options:
            return _invalid(
                f"Optional parameter {param!r} not provided and not marked as optional.",
                "simple_function_checker:missing_optional",
            )
    return VALID


def _value_check_for(
    expected: type, nested: type | None
) -> Callable[[str, Any, Sequence[Any]], Verdict] | None:
    if expected is dict:
        return _dict_check
    if expected is list and nested is dict:
        return _list_dict_check
    if expected is str:
        return _string_check
    if expected is list:
        return _list_check
    return None


def _first_entry(answer: Mapping[str, Any]) -> tuple[str, Any]:
    """The (function name, parameters) of a ground-truth call; BFCL reads the first."""
    for name, params in answer.items():
        return name, params
    raise IndexError("an empty ground-truth call")  # (BFCL: list(answer.values())[0])


def _answer_name(answer: Mapping[str, Any]) -> str:
    return str(_first_entry(answer)[0])


def _find_function(functions: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any]:
    for function in functions:
        if function["name"] == name:
            return function
    # (BFCL's find_description returns None here and its checker fails on it: a TypeError)
    raise TypeError(f"the ground truth calls {name!r}, which no function doc offers")


def check_parallel(
    functions: Sequence[Mapping[str, Any]],
    calls: Sequence[Mapping[str, Any]],
    answers: Sequence[Mapping[str, Any]],
    *,
    underscore_to_dot: bool = False,
) -> Verdict:
    """BFCL's ``parallel_function_checker_no_order``: every answer matched by a distinct
    call, in any order (greedy: the first unmatched call that passes is taken)."""
    if len(calls) != len(answers):
        return _invalid(
            f"Wrong number of functions: {len(calls)} calls, {len(answers)} expected.",
            "parallel_function_checker_no_order:wrong_count",
        )
    matched: set[int] = set()
    for index, answer in enumerate(answers):
        function = _find_function(functions, _answer_name(answer))
        errors = []
        for call_index, call in enumerate(calls):
            if call_index in matched:
                continue
            verdict = check_simple_call(function, call, answer, underscore_to_dot=underscore_to_dot)
            if verdict.valid:
                matched.add(call_index)
                break
            errors.append(f"call {call_index}: {verdict.error}")
        else:
            return _invalid(
                f"No call matches answer {index} ({_answer_name(answer)}): " + "; ".join(errors),
                "parallel_function_checker_no_order:cannot_find_match",
            )
    return VALID


def check_calls(
    category: str,
    functions: Sequence[Mapping[str, Any]],
    calls: Sequence[Mapping[str, Any]],
    ground_truth: Sequence[Mapping[str, Any]],
    *,
    underscore_to_dot: bool = False,
) -> Verdict:
    """BFCL's ``ast_checker`` dispatch for decoded calls already in the call format.

    A category naming "parallel" takes the order-free rule; one naming "multiple" compares
    the first call with the first answer using the doc the answer names; any other (simple)
    category wants exactly one call, judged against the *first offered function*
    (``func_description[0]``), whatever the answer names."""
    try:
        if "parallel" in category:
            return check_parallel(
                functions, calls, ground_truth, underscore_to_dot=underscore_to_dot
            )
        if "multiple" in category:
            if len(calls) != len(ground_truth):
                return _invalid(
                    f"Wrong number of functions: {len(calls)} calls, {len(ground_truth)} expected.",
                    "multiple_function_checker:wrong_count",
                )
            function = _find_function(functions, _answer_name(ground_truth[0]))
            return check_simple_call(
                function, calls[0], ground_truth[0], underscore_to_dot=underscore_to_dot
            )
        if len(calls) != 1:
            return _invalid(
                f"Wrong number of functions: {len(calls)} calls, 1 expected.",
                "simple_function_checker:wrong_count",
            )
        return check_simple_call(
            functions[0], calls[0], ground_truth[0], underscore_to_dot=underscore_to_dot
        )
    except (LookupError, TypeError, AttributeError, ValueError, ArithmeticError) as exc:
        # Where BFCL's own checker raises (malformed docs or answers, value shapes it never
        # expects), the output cannot be judged correct.
        return _invalid(
            f"BFCL's checker cannot judge this output: {type(exc).__name__}: {exc}",
            f"checker_error:{type(exc).__name__}",
        )
