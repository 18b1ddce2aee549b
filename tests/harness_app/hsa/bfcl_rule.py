"""An independent check of augmented BFCL records, written without the engine's code.

``record_problems(record, original_case, original_answer)`` re-derives everything from the
record's JSON: the functions are converted to JSON Schema here (not with
``harness.bfcl``), a concrete call is built from the augmented ground truth, validated with
``jsonschema`` and scored with ``bfcl_accepts``, a re-implementation of the rules of BFCL's
``ast_checker`` (Python, ``bfcl-eval`` 2026.3.23): required parameters present, no unexpected
parameter, Python types (int accepted for float), strings compared after BFCL's
standardisation, dicts and lists of dicts checked per key, parameters left out only when
``""`` is among their acceptable values, parallel calls matched in any order.

``bfcl_verdict(category, functions, outputs, answers)`` applies them the way BFCL dispatches
on the category (``ast_checker.ast_checker`` and the eval runner's relevance rule), and
``tests/harness_app/hsa/test_bfcl_official_agreement.py`` holds it to the verdicts of BFCL's
own checker recorded by ``scripts/bfcl_reference/official_verdicts.py``.
"""

from __future__ import annotations

import keyword
import re
from typing import Any

from jsonschema import Draft202012Validator

PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}
_JSON_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": None}
_KEPT = frozenset(
    {"required", "enum", "minimum", "maximum", "pattern", "minItems", "maxItems", "minLength"}
    | {"maxLength", "format", "uniqueItems", "exclusiveMinimum", "exclusiveMaximum"}
)
_OPENAI = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def to_json_schema(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type":
            kind = _JSON_TYPES.get(value, value) if isinstance(value, str) else value
            if kind is not None:
                out["type"] = kind
        elif key == "properties":
            out["properties"] = {name: to_json_schema(sub) for name, sub in value.items()}
        elif key == "items" and isinstance(value, list):
            out["prefixItems"] = [to_json_schema(sub) for sub in value]
        elif key == "items":
            out["items"] = to_json_schema(value)
        elif key in _KEPT:
            out[key] = value
    return out


def _nested(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, list) for v in value.values())


def concrete(schema: dict[str, Any], params: dict[str, list[Any]], *, omit_all: bool) -> dict:
    """A call the ground truth accepts: each parameter that may be left out is left out when
    ``omit_all`` or when its first option is ``""``; otherwise its first option that is not
    ``""`` (nor, when it may be left out, the declared default that stands for leaving it
    out)."""
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))
    call: dict[str, Any] = {}
    for name, options in params.items():
        sub = properties.get(name, {})
        omittable = name not in required and "" in options
        if omittable and (omit_all or options[0] == ""):
            continue
        choices = [
            o
            for o in options
            if o != "" and not (omittable and "default" in sub and o == sub["default"])
        ]
        if not choices:
            continue
        value = choices[0]
        if _nested(value) and sub.get("type") == "dict":
            value = concrete(sub, value, omit_all=omit_all)
        elif isinstance(value, list) and value and all(_nested(v) for v in value):
            value = [concrete(sub.get("items", {}), v, omit_all=omit_all) for v in value]
        call[name] = value
    return call


def _standard(text: str) -> str:
    return re.sub(r"[ \,\.\/\-\_\*\^]", "", text).lower().replace("'", '"')


def _standard_items(option: Any) -> list[Any] | None:
    """An acceptable list value with its strings standardised. BFCL's list_checker walks
    each option by index, so a string option reads as its characters (``""`` as ``[]``)."""
    if isinstance(option, list):
        return [_standard(x) if isinstance(x, str) else x for x in option]
    if isinstance(option, str):
        return [_standard(character) for character in option]
    return None


def _value_ok(value: Any, spec: dict[str, Any], options: list[Any]) -> bool:
    """BFCL's value rule for a value whose type matched the declared one: strings compared
    standardised, dicts key by key, lists of dicts element by element (when the declared
    items are dicts), other lists element-wise standardised, anything else as it is."""
    kind = spec["type"]
    if kind == "dict":
        return any(_dict_ok(value, o) for o in options if o != "")
    if kind in ("array", "tuple") and spec.get("items", {}).get("type") == "dict":
        return any(
            isinstance(o, (list, str))
            and len(o) == len(value)
            and all(_dict_ok(v, d) for v, d in zip(value, o, strict=True))
            for o in options
        )
    if kind in ("string", "any"):
        return _standard(value) in [_standard(o) for o in options if isinstance(o, str)]
    if kind in ("array", "tuple"):
        standard = [_standard(v) if isinstance(v, str) else v for v in value]
        return any(_standard_items(o) == standard for o in options)
    return value in options


def _dict_ok(value: dict[str, Any], answer: Any) -> bool:
    """BFCL's dict_checker: each key of the value is a key of the answer and its value (a
    string standardised) is among that key's options, compared as they are (no recursion);
    each answer key left out must allow ``""``. An option that is a plain dict, not a
    ground truth, must equal the value."""
    if not isinstance(value, dict) or not isinstance(answer, dict):
        return False
    if not _nested(answer):
        return bool(value == answer)
    for key, item in value.items():
        if key not in answer:
            return False
        options = [_standard(o) if isinstance(o, str) else o for o in answer[key]]
        if (_standard(item) if isinstance(item, str) else item) not in options:
            return False
    return all(key in value or "" in options for key, options in answer.items())


def _answer_type(options: Any) -> type | None:
    """The type of the first acceptable value that is not ``""`` (None when there is none)."""
    return next((type(o) for o in options if o != ""), None)


def _type_check(value: Any, spec: dict[str, Any], options: list[Any]) -> tuple[bool, bool]:
    """(type accepted, value is a "variable"). BFCL's type_checker: the declared type (an int
    passes for a float), or, when the acceptable values are of another type, that type (the
    value then stands for a variable and is compared as it is). The items of a list are
    checked one level deep against each acceptable list in turn: each item of the declared
    items type or of the type of that list's first element; an acceptable value that is not a
    list (``""``) passes every list."""
    kind = spec["type"]
    expected = PYTHON_TYPES[kind]
    answer_type = _answer_type(options)
    variable = answer_type is not None and answer_type is not expected
    if type(value) is expected:
        if kind not in ("array", "tuple"):
            return True, variable
        inner = PYTHON_TYPES[spec["items"]["type"]]
        for option in options:
            if not isinstance(option, list):
                return True, variable
            item_type = _answer_type(option)
            if all(type(v) is inner or type(v) is item_type for v in value):
                return True, variable
        return False, variable
    return answer_type is not None and type(value) is answer_type, True


def simple_accepts(function: dict[str, Any], output: dict[str, Any], answer: dict) -> str | None:
    """None when BFCL's simple-function rule accepts ``output`` for ``answer``, else why."""
    # BFCL takes the name from the function doc, never from the answer
    # (simple_function_checker, ast_checker.py:342-356), and an output naming another
    # function does not match; a decoded call is one {name: arguments} pair.
    (possible,) = answer.values()
    name = function["name"]
    if len(output) != 1 or name not in output:
        return f"function {name} not called: {list(output)}"
    args = output[name]
    parameters = function["parameters"]
    for required in parameters["required"]:
        if required not in args:
            return f"missing required {required}"
    for param, raw in args.items():
        if param not in parameters["properties"] or param not in possible:
            return f"unexpected parameter {param}"
        spec = parameters["properties"][param]
        value = float(raw) if spec["type"] == "float" and type(raw) is int else raw
        type_ok, variable = _type_check(value, spec, possible[param])
        if not type_ok:
            return f"wrong type for {param}: {raw!r}"
        if not (value in possible[param] if variable else _value_ok(value, spec, possible[param])):
            return f"value of {param} {raw!r} not in {possible[param]!r}"
    for param, options in possible.items():
        if param not in args and "" not in options:
            return f"optional {param} left out but not marked optional"
    return None


def bfcl_accepts(functions: list[dict], outputs: list[dict], answers: list[dict]) -> str | None:
    """The parallel (order-free) rule; for one call it is the simple / multiple rule."""
    if len(outputs) != len(answers):
        return "wrong number of calls"
    by_name = {f["name"]: f for f in functions}
    unmatched = list(range(len(outputs)))
    for answer in answers:
        function = by_name.get(next(iter(answer)))
        if function is None:
            return f"no function {next(iter(answer))}"
        hit = next(
            (i for i in unmatched if simple_accepts(function, outputs[i], answer) is None), None
        )
        if hit is None:
            return f"no call matches {answer}: " + str(
                [simple_accepts(function, outputs[i], answer) for i in unmatched]
            )
        unmatched.remove(hit)
    return None


NO_CALL_CATEGORIES = frozenset({"irrelevance", "live_irrelevance"})


def _call_format(outputs: Any) -> bool:
    """BFCL's ``utils.is_function_calling_format_output``: a list of one-pair
    ``{name: {argument: value}}`` dicts (``[]`` included)."""
    return isinstance(outputs, list) and all(
        isinstance(o, dict) and len(o) == 1 and isinstance(next(iter(o.values())), dict)
        for o in outputs
    )


def _no_call(outputs: Any) -> bool:
    """BFCL's ``utils.is_empty_output``: anything not in the call format, ``[]`` and ``[{}]``
    count as "no function call"."""
    return not _call_format(outputs) or len(outputs) == 0


def bfcl_verdict(
    category: str, functions: list[dict], outputs: list[dict], answers: list[dict]
) -> str | None:
    """None when BFCL would score ``outputs`` (decoded calls) correct for a case of
    ``category``, else why. Dispatch as ``ast_checker.ast_checker`` (ast_checker.py:41-61):
    a category naming "parallel" takes the order-free rule; one naming "multiple" compares
    the first call with the first answer, the function found by the answer's name; any other
    (simple) category compares the single call with the first answer **using the first
    offered function** (``func_description[0]``), whatever the answer names. The irrelevance
    categories want no call (eval_runner.py:282-292)."""
    if category in NO_CALL_CATEGORIES:
        return None if _no_call(outputs) else "a function call where none is wanted"
    if not _call_format(outputs):
        return "not in the decoded call format"
    if "parallel" in category:
        return bfcl_accepts(functions, outputs, answers)
    if len(outputs) != 1 and "multiple" not in category:
        return "wrong number of calls"
    if "multiple" in category:
        if len(outputs) != len(answers):
            return "wrong number of calls"
        function = next((f for f in functions if f["name"] == next(iter(answers[0]))), None)
        if function is None:
            return f"no function {next(iter(answers[0]))}"
        return simple_accepts(function, outputs[0], answers[0])
    return simple_accepts(functions[0], outputs[0], answers[0])


def _python_function_name(name: str) -> bool:
    parts = name.split(".")
    return (
        name.isascii()
        and all(p.isidentifier() and not keyword.iskeyword(p) for p in parts)
        and _OPENAI.match(name.replace(".", "_")) is not None
    )


def _inverse(mapping: dict[str, Any]) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    tools = {new: old for old, new in mapping["tool_renames"].items()}
    params = {
        mapping["tool_renames"].get(tool, tool): {new: old for old, new in renames.items()}
        for tool, renames in mapping["param_renames"].items()
    }
    return tools, params


def record_problems(record: dict[str, Any], case: dict[str, Any], answer: dict | None) -> list[str]:
    """Everything the independent check finds wrong with a record marked valid."""
    problems: list[str] = []
    functions = record["function"]
    names = [f["name"] for f in functions]
    if len(set(names)) != len(names) or len({n.replace(".", "_") for n in names}) != len(names):
        problems.append(f"function names collide: {names}")
    for function in functions:
        if not _python_function_name(function["name"]):
            problems.append(f"illegal function name {function['name']}")
        parameters = function["parameters"]
        if parameters.get("type") != "dict" or not isinstance(parameters.get("required"), list):
            problems.append(f"{function['name']}: parameters are not a BFCL dict with required")
        for param, spec in parameters.get("properties", {}).items():
            if not (param.isidentifier() and not keyword.iskeyword(param) and len(param) <= 64):
                problems.append(f"illegal parameter name {param}")
            if spec.get("type") not in PYTHON_TYPES:
                problems.append(f"{function['name']}.{param}: type {spec.get('type')!r}")
            elif spec["type"] in ("array", "tuple") and "type" not in spec.get("items", {}):
                problems.append(f"{function['name']}.{param}: array without items.type")
        Draft202012Validator.check_schema(to_json_schema(parameters))
    tools_back, params_back = _inverse(record["mapping"])
    # every offered function is still offered, with all its parameters, one-to-one
    for original in case["function"]:
        new_name = record["mapping"]["tool_renames"].get(original["name"], original["name"])
        new = next((f for f in functions if f["name"] == new_name), None)
        if new is None:
            problems.append(f"{original['name']} is no longer offered")
            continue
        renames = record["mapping"]["param_renames"].get(original["name"], {})
        mapped = [renames.get(p, p) for p in original["parameters"].get("properties", {})]
        added = set(new["parameters"]["properties"]) - set(mapped)
        if len(set(mapped)) != len(mapped) or not set(mapped) <= set(
            new["parameters"]["properties"]
        ):
            problems.append(f"{original['name']}: parameters not mapped one-to-one")
        if added & set(original["parameters"].get("properties", {})):
            problems.append(f"{new_name}: added parameter re-uses an original name: {added}")
    for name in names:
        if (
            name not in tools_back
            and name in {f["name"] for f in case["function"]}
            and (name in record["mapping"]["tool_renames"])
        ):
            problems.append(f"{name} is both a new name and a renamed original")
    truth = record["ground_truth"]
    original_truth = answer["ground_truth"] if answer is not None else []
    # mapped back, the truth is the original one
    back = []
    for call in truth:
        ((name, params),) = call.items()
        old = tools_back.get(name, name)
        back.append({old: {params_back.get(name, {}).get(k, k): v for k, v in params.items()}})
    if back != original_truth:
        problems.append("mapped back, the ground truth differs from the original")
    if not truth:
        return problems  # irrelevance: no call is the answer; nothing else to score
    by_name = {f["name"]: f for f in functions}
    for omit_all in (False, True):
        outputs = []
        for call in truth:
            ((name, params),) = call.items()
            function = by_name.get(name)
            if function is None:
                problems.append(f"ground truth calls {name}, which is not offered")
                return problems
            schema = to_json_schema(function["parameters"])
            arguments = concrete(function["parameters"], params, omit_all=omit_all)
            for error in Draft202012Validator(schema).iter_errors(arguments):
                problems.append(f"{name}{arguments}: {error.message}")
            for param, options in params.items():
                sub = schema["properties"].get(param)
                if sub is None:
                    problems.append(f"{name}.{param} is not a parameter")
                    continue
                omittable = param not in function["parameters"]["required"] and "" in options
                declared = function["parameters"]["properties"][param]
                for option in options:
                    if (
                        option == ""
                        or _nested(option)
                        or (isinstance(option, list) and option and all(_nested(o) for o in option))
                    ):
                        continue
                    if omittable and "default" in declared and option == declared["default"]:
                        continue
                    if not Draft202012Validator(sub).is_valid(option):
                        problems.append(f"{name}.{param}: option {option!r} is rejected")
            outputs.append({name: arguments})
        verdict = bfcl_verdict(record["category"], functions, outputs, truth)
        if verdict is not None:
            problems.append(f"BFCL rule rejects {outputs}: {verdict}")
    return problems
