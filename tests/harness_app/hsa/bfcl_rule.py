"""An independent check of augmented BFCL records, written without the engine's code.

``record_problems(record, original_case, original_answer)`` re-derives everything from the
record's JSON: the functions are converted to JSON Schema here (not with
``harness.bfcl``), names are checked, the truth is mapped back to the original, concrete
calls are built from the augmented ground truth and validated with ``jsonschema``. What stays
here is independent of the HSA engine; BFCL's verdict on those calls comes from the
production scorer (``training_app.evals.bfcl.score_result``, BFCL's ``ast_checker`` ported
and held to the official checker's recorded verdicts by
``tests/harness_app/hsa/test_bfcl_official_agreement.py`` and
``tests/training_app/evals/test_bfcl_reference_agreement.py``), so the rules are written once.
"""

from __future__ import annotations

import keyword
import re
from typing import Any

from jsonschema import Draft202012Validator

from training_app.evals.bfcl import PYTHON_TYPE_MAPPING, score_result

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
            if spec.get("type") not in PYTHON_TYPE_MAPPING:
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
        verdict = score_result(record["category"], functions, truth, outputs)
        if not verdict.valid:
            problems.append(f"BFCL rule rejects {outputs}: {verdict.error}")
    return problems
