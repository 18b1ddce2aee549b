"""BFCL's own runner on model outputs of every single-turn category: run INSIDE the reference venv.

    var/bfcl-reference-venv/bin/python scripts/bfcl_reference/official_model_outputs.py \
        --augmented var/bfcl-reference/records/bfcl-tool-schemas_seed0.jsonl \
        --out tests/training_app/evals/data/bfcl_official_outputs.jsonl.gz

Where ``official_verdicts.py`` hands BFCL's ``ast_checker`` outputs that are already decoded,
this script scores outputs the way BFCL's eval runner scores a *prompting* model's raw text:
each output goes through ``eval_runner._evaluate_single_ast_entry`` (call categories) or
``eval_runner._evaluate_single_relevance_entry`` (irrelevance categories) with the handler of
``Qwen/Qwen3-8B`` (prompt), whose ``decode_ast`` is BFCL's ``default_decode_ast_prompting``.
Outputs in BFCL's decoded form (a JSON list) go through the same two runner functions with a
handler whose ``decode_ast`` returns the output as it is (what an FC model's handler hands
on). This file imports nothing of the project.

Cases: every original case of the ten categories (``harness_app/hsa/bfcl_data``) and, from
``--augmented`` (written by ``python -m harness_app.hsa.bfcl_augment --category all``), the
first ``--augmented-per-category`` records marked valid of each category, stored whole in the
output so that a scorer can be run on them as an augmented set.

Outputs per case (``kind``):

- every candidate of ``official_verdicts.candidates`` (the truth, its variants, and the
  wrong ones: ``original_function_name``, ``missing_required``, ``wrong_type``,
  ``value_outside``, ``extra_call``, ``omitted_call``, ... ; for irrelevance ``no_call``,
  ``empty_call``, ``call_when_none_wanted``) written as Python calls, ``py:<kind>``;
- text variants of the truth (``text:<variant>``, see ``text_variants``): without brackets,
  fenced, fenced with a language tag, prose, prose around the call, cut short, JSON objects,
  JSON literals (``true``/``null``), a positional argument, a bare name, ``math.pi``, a nested
  call, a tuple for a list, ``+5``, arithmetic, dots as underscores, ``**kwargs``, an
  f-string, a string in upper case;
- the decoded form of the truth and malformed decoded shapes (``decoded:<shape>``);
- probes of the decoder (``probe:...``): for the first three cases of each call category,
  the first argument written in ~70 ways BFCL's decoder reads specially (``+5``, ``not
  True``, ``2 ** -1``, ``{'a': 1} | {'b': 2}``, ``x[1:2]``, ``foo(1, a=2)``, ``lambda: 1``,
  ...); for the first three cases of every category, ~25 shapes of a whole output (``[call][0]``,
  ``call; call``, ``<TOOLCALL>...``, ``[f()(x=1)]``, a repeated keyword, ...).

Output: gzipped JSONL. A ``meta`` line; ``augmented_record`` lines (the records as
bfcl_augment wrote them); one ``case`` line per case: ``{set, category, case_id, outputs:
[[kind, result, official_valid, official_error_type, official_decoding], ...]}`` where
``result`` is the model output exactly as scored (a string, or a JSON value in the decoded
form) and ``official_decoding`` what BFCL's prompting decoder makes of a string (the
``repr`` of the calls, or ``error:<exception>``).
"""

from __future__ import annotations

import argparse
import copy
import gzip
import importlib.metadata
import json
import platform
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from bfcl_eval.constants.enums import Language, ReturnFormat
from bfcl_eval.eval_checker.eval_runner import (
    _evaluate_single_ast_entry,
    _evaluate_single_relevance_entry,
    get_handler,
)
from bfcl_eval.model_handler.utils import default_decode_ast_prompting
from official_verdicts import CATEGORIES, MODEL_NAME, NO_CALL, candidates, original_cases

HANDLER_MODEL = MODEL_NAME.replace("_", "/")  # the registry name: "Qwen/Qwen3-8B"


class DecodedFormHandler:
    """A handler whose output is already decoded (as an FC model's handler returns it)."""

    def decode_ast(self, result: Any, language: Any, has_tool_call_tag: bool) -> Any:
        return result


# ----------------------------------------------------------------------------- official


def official(handler: Any, case: dict[str, Any], result: Any) -> tuple[bool, str | None]:
    """(valid, error_type) from BFCL's eval runner for one output."""
    category = case["category"]
    prompt = {"id": case["id"], "function": copy.deepcopy(case["function"])}
    try:
        if category in NO_CALL:
            entry = _evaluate_single_relevance_entry(
                handler, case["id"], copy.deepcopy(result), prompt, MODEL_NAME, category
            )
        else:
            entry = _evaluate_single_ast_entry(
                handler,
                case["id"],
                copy.deepcopy(result),
                copy.deepcopy(case["ground_truth"]),
                prompt,
                MODEL_NAME,
                category,
                language=Language.PYTHON,
                return_format=ReturnFormat.PYTHON,
                has_tool_call_tag=False,
            )
    except Exception as exc:  # the runner's own crash is recorded as such
        return False, f"exception:{type(exc).__name__}"
    return bool(entry["valid"]), None if entry["valid"] else entry.get("error_type")


def official_decoding(result: Any) -> str | None:
    """What BFCL's prompting decoder makes of a string output: the ``repr`` of the decoded
    calls, or ``error:<exception>``; None for an output in the decoded form."""
    if not isinstance(result, str):
        return None
    try:
        return repr(default_decode_ast_prompting(result, ReturnFormat.PYTHON, False))
    except Exception as exc:
        return f"error:{type(exc).__name__}"


# ------------------------------------------------------------------------------ outputs


def render_call(call: dict[str, Any], json_values: bool = False) -> str:
    """``{name: {a: 1}}`` as Python source ``name(a=1)`` (values as ``repr``, or as JSON)."""
    ((name, args),) = call.items()
    values = (json.dumps(v, ensure_ascii=False) if json_values else repr(v) for v in args.values())
    return f"{name}({', '.join(f'{k}={v}' for k, v in zip(args, values, strict=True))})"


def render(calls: list[dict[str, Any]], json_values: bool = False) -> str:
    return "[" + ", ".join(render_call(c, json_values) for c in calls) + "]"


def _first_arg(calls: list[dict[str, Any]], test: Any) -> tuple[str, str, Any] | None:
    """(function, argument, value) of the first argument whose value passes ``test``."""
    for call in calls:
        ((name, args),) = call.items()
        for param, value in args.items():
            if test(value):
                return name, param, value
    return None


def _with_source(calls: list[dict[str, Any]], target: tuple[str, str, Any], source: str) -> str:
    """The calls as Python with one argument's value written as ``source``."""
    name, param, _ = target
    parts = []
    done = False
    for call in calls:
        ((call_name, args),) = call.items()
        if not done and call_name == name and param in args:
            rendered = [f"{k}={source if k == param else repr(v)}" for k, v in args.items()]
            parts.append(f"{call_name}({', '.join(rendered)})")
            done = True
        else:
            parts.append(render_call(call))
    return "[" + ", ".join(parts) + "]"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def text_variants(truth: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The truth as a model might write it, right and wrong (see module doc)."""
    source = render(truth)
    out = [
        ("bare", source[1:-1]),
        ("fenced", f"```\n{source}\n```"),
        ("fenced_python", f"```python\n{source}\n```"),
        ("prose", "I'm sorry, I can't help with that request."),
        ("prose_around_call", f"Sure! Here is the call you need: {source}"),
        ("cut_short", source[: max(1, len(source) * 3 // 5)]),
        (
            "json_objects",
            json.dumps([{"name": n, "arguments": a} for c in truth for n, a in c.items()]),
        ),
        ("json_literals", render(truth, json_values=True)),
    ]
    ((name, args),) = truth[0].items()
    if args:
        first, *rest = args.items()
        keywords = ", ".join(f"{k}={v!r}" for k, v in rest)
        out.append(
            ("positional_argument", f"[{name}({first[1]!r}{', ' if rest else ''}{keywords})]")
        )
        out.append(("kwargs", f"[{name}(**{args!r})]"))
    text = _first_arg(truth, lambda v: isinstance(v, str) and v.isidentifier())
    if text:
        out.append(("bare_name", _with_source(truth, text, text[2])))
    anything = _first_arg(truth, lambda v: True)
    if anything:
        out.append(("attribute_value", _with_source(truth, anything, "math.pi")))
        out.append(("nested_call_value", _with_source(truth, anything, f"str({anything[2]!r})")))
        out.append(("fstring_value", _with_source(truth, anything, 'f"{value}"')))
    listed = _first_arg(truth, lambda v: isinstance(v, list))
    if listed:
        out.append(("tuple_for_list", _with_source(truth, listed, repr(tuple(listed[2])))))
    positive = _first_arg(truth, lambda v: _is_number(v) and v > 0)
    if positive:
        out.append(("unary_plus", _with_source(truth, positive, f"+{positive[2]!r}")))
    number = _first_arg(truth, _is_number)
    if number:
        value = number[2]
        arithmetic = f"({value - 1!r}) + 1" if isinstance(value, int) else f"{value!r} * 1"
        out.append(("arithmetic", _with_source(truth, number, arithmetic)))
    upper = _first_arg(truth, lambda v: isinstance(v, str) and v.upper() != v)
    if upper:
        out.append(("string_upper_case", _with_source(truth, upper, repr(upper[2].upper()))))
    if any("." in next(iter(call)) for call in truth):
        renamed = [{n.replace(".", "_"): a} for c in truth for n, a in c.items()]
        out.append(("dots_as_underscores", render(renamed)))
    return out


# Argument values written in ways BFCL's decoder reads specially (each replaces the value of
# the first argument of the truth); the first case(s) of each call category get all of them.
VALUE_PROBES = (
    "+5",
    "-5",
    "not True",
    "~3",
    "-x",
    "-(1 + 2)",
    "- -5",
    "-2 ** 2",
    "(-2) ** 2",
    "2 ** -1",
    "2 * 3.5",
    "7 // 2",
    "7 / 2",
    "1 / 0",
    "10 ** 400",
    "10.0 ** 400",
    "0.1 + 0.2",
    "1e308 * 10",
    "2 ** 0.5",
    "'a' * 3",
    "'ab' + 'cd'",
    "[1] + [2]",
    "[1, 2] * 2",
    "(1, 2) + (3,)",
    "{'a': 1} | {'b': 2}",
    "{1, 2} | {3}",
    "{**{'a': 1}, 'b': 2} | {}",
    "(1 < 2) + 1",
    "(1 if True else 2) * 3",
    "(True and 5) + 0",
    "[1, 2, 3][1] * 2",
    "'abc'[1:] + 'x'",
    "f'a' + 'b'",
    "f'{x}' + 'b'",
    "x + 1",
    "[] + x",
    "math.pi",
    "math.pi * 2",
    "...",
    "b'x'",
    "1j",
    "-1j",
    "None",
    "True",
    "[1, -2.5, 'x', None]",
    "(1,)",
    "()",
    "{'k': [1, {'n': None}]}",
    "{[1]: 2}",
    "{(1, 2): 3}",
    "{**x}",
    "str(5)",
    "foo(a=1)",
    "foo(1, a=2)",
    "x[0]",
    "x[1:2]",
    "x[1, 2]",
    "x.y",
    "lambda: 1",
    "[i for i in range(3)]",
    "(y := 3)",
    "1 if x else 2",
    "1 < 2",
    "'-' * 3",
    "f'{1}'",
    "'''multi\nline'''",
    "'ünïcode'",
    "0x1F",
    "1_000",
    "00",
    "1e3",
    "-0.0",
)
# Whole outputs (``{call}`` is the truth's first call as Python), for the first three cases of
# every category.
OUTPUT_PROBES = (
    "[{call}][0]",
    "[{call}], [{call}]",
    "{call}; {call}",
    "\t{call}",
    "'{call}'",
    "[{call},]",
    "[*x]",
    "{call}\n\nI called the function.",
    "```json\n[{call}]\n```",
    "<TOOLCALL>[{call}]</TOOLCALL>",
    "[{call} {call}]",
    "[a.b.c(x=1)]",
    "[f()(x=1)]",
    "[x[0](x=1)]",
    "[f(x=1, x=2)]",
    "{{{call}}}",
    "({call}, {call})",
    "  [{call}]  \n",
    "``{call}``",
    "[{call}]]",
    "[[{call}]",
    "[]",
    "",
    "[None]",
)


def probe_outputs(truth: list[dict[str, Any]], values: bool) -> list[tuple[str, str]]:
    call = render_call(truth[0]) if truth and len(truth[0]) == 1 else "f(x=1)"
    out = [
        (
            f"probe:output {probe!r}",
            probe.replace("{call}", call).replace("{{", "{").replace("}}", "}"),
        )
        for probe in OUTPUT_PROBES
    ]
    target = _first_arg(truth, lambda v: True) if values else None
    if target:
        out += [
            (f"probe:value {probe}", _with_source(truth, target, probe)) for probe in VALUE_PROBES
        ]
    return out


def irrelevance_outputs(case: dict[str, Any]) -> list[tuple[str, Any]]:
    """Outputs for a case whose answer is "no call", beyond ``candidates``'s three."""
    functions = case["function"]
    name = functions[0]["name"] if functions else "lookup"
    call = render([{name: {}}])
    return [
        ("text:empty", ""),
        ("text:empty_list", "[]"),
        ("text:prose", "I'm sorry, none of the available functions can answer that."),
        ("text:call_without_arguments", call),
        ("text:fenced_call", f"```\n{call}\n```"),
        ("text:fenced_python_call", f"```python\n{call}\n```"),
        ("text:prose_around_call", f"Let me check: {call}"),
        ("text:json_objects", json.dumps([{"name": name, "arguments": {}}])),
        ("text:none", "None"),
        ("text:two_calls", render([{name: {}}, {"search": {"query": "x"}}])),
        ("decoded:dict_not_list", {name: {}}),
        ("decoded:null", None),
        ("decoded:list_of_lists", [[name]]),
    ]


def outputs_for(case: dict[str, Any], probes: int) -> list[tuple[str, Any]]:
    """Every output of one case; ``probes``: 0 none, 1 whole-output probes, 2 value probes
    too (call categories)."""
    category, functions, answer = case["category"], case["function"], case["ground_truth"]
    decoded = candidates(case, category, functions, answer, True)
    out: list[tuple[str, Any]] = [
        (f"py:{kind}", render(calls))
        for kind, calls in decoded
        if all(len(call) == 1 for call in calls)  # ([{}] has no Python spelling)
    ]
    if category in NO_CALL:
        out += [(f"decoded:{kind}", calls) for kind, calls in decoded]
        first = decoded[-1][1]  # call_when_none_wanted
        return out + irrelevance_outputs(case) + (probe_outputs(first, False) if probes else [])
    truth = decoded[0][1]
    out += [(f"text:{kind}", text) for kind, text in text_variants(truth)]
    ((name, args),) = truth[0].items()
    out += [
        ("decoded:truth", truth),
        ("decoded:empty_list", []),
        ("decoded:null", None),
        ("decoded:dict_not_list", truth[0]),
        ("decoded:two_names_in_one_call", [{name: args, name + "_again": args}, *truth[1:]]),
        ("decoded:arguments_as_text", [{name: json.dumps(args)}, *truth[1:]]),
    ]
    return out + (probe_outputs(truth, probes > 1) if probes else [])


# ---------------------------------------------------------------------------------- main


def _line(item: dict[str, Any]) -> bytes:
    return (json.dumps(item, sort_keys=True, ensure_ascii=False) + "\n").encode()


def augmented_sample(path: Path, per_category: int) -> list[dict[str, Any]]:
    taken: Counter[str] = Counter()
    sample = []
    for line in path.open(encoding="utf-8"):
        record = json.loads(line)
        if record["valid"] and taken[record["category"]] < per_category:
            taken[record["category"]] += 1
            sample.append(record)
    return sample


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--augmented", type=Path, required=True, help="bfcl_augment output")
    parser.add_argument("--augmented-per-category", type=int, default=25)
    parser.add_argument("--out", type=Path, required=True, help="gzipped JSONL")
    args = parser.parse_args(argv)
    prompting = get_handler(HANDLER_MODEL)
    decoded_form = DecodedFormHandler()
    sample = augmented_sample(args.augmented, args.augmented_per_category)
    sets = [("original", case) for case in original_cases()]
    sets += [("augmented", record) for record in sample]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    counts: Counter[tuple[str, str, bool]] = Counter()
    with gzip.GzipFile(args.out, "wb", mtime=0) as out:
        out.write(
            _line(
                {
                    "kind": "meta",
                    "bfcl_eval": importlib.metadata.version("bfcl_eval"),
                    "python": platform.python_version(),
                    "runner": "bfcl_eval.eval_checker.eval_runner."
                    "_evaluate_single_ast_entry / _evaluate_single_relevance_entry",
                    "prompting_handler": f"{HANDLER_MODEL} ({type(prompting).__name__}"
                    f".decode_ast = default_decode_ast_prompting)",
                    "model_name": MODEL_NAME,
                    "augmented_source": args.augmented.name,
                }
            )
        )
        for record in sample:
            out.write(_line({"kind": "augmented_record", "record": record}))
        seen: Counter[tuple[str, str]] = Counter()
        for set_name, case in sets:
            scored = []
            seen[(set_name, case["category"])] += 1
            index = seen[(set_name, case["category"])]
            probes = 2 if set_name == "original" and index <= 3 else 0
            for kind, result in outputs_for(case, probes):
                handler = decoded_form if kind.startswith("decoded:") else prompting
                valid, error_type = official(handler, case, result)
                scored.append([kind, result, valid, error_type, official_decoding(result)])
                counts[(set_name, case["category"], valid)] += 1
            out.write(
                _line(
                    {
                        "kind": "case",
                        "set": set_name,
                        "category": case["category"],
                        "case_id": case["id"],
                        "outputs": scored,
                    }
                )
            )
    for set_name in ("original", "augmented"):
        for category in CATEGORIES:
            valid, invalid = counts[(set_name, category, True)], counts[(set_name, category, False)]
            print(f"{set_name:<10} {category:<24} valid {valid:>6}  invalid {invalid:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
