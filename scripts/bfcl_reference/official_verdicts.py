"""BFCL's own checker on HSA-augmented BFCL records: run INSIDE the reference venv.

    var/bfcl-reference-venv/bin/python scripts/bfcl_reference/official_verdicts.py \
        --records var/bfcl-reference/records \
        --out tests/harness_app/hsa/data/bfcl_official_verdicts.jsonl.gz \
        --summary tests/harness_app/hsa/data/bfcl_official_summary.json

``--records`` holds ``<policy>_seed<N>.jsonl`` files written by
``python -m harness_app.hsa.bfcl_augment --category all``; the original cases are read from
``harness_app/hsa/bfcl_data`` (the shipped copy of bfcl-eval 2026.3.23's files). This file
imports nothing of the project: candidates are built here, from the record's JSON alone.

For every record marked valid (and every original case) it builds model outputs in BFCL's
decoded form, ``[{function_name: {argument: value}}]``, and scores each with
``bfcl_eval.eval_checker.ast_eval.ast_checker.ast_checker`` exactly as BFCL's
``eval_runner._evaluate_single_ast_entry`` calls it (the record's functions, the candidate,
the record's possible answer, ``Language.PYTHON``, the record's category, a prompt-format
model whose names keep their dots); the irrelevance categories are scored with the rule of
``eval_runner._evaluate_single_relevance_entry`` (``utils.is_empty_output``).

Candidate kinds: ``truth`` (first acceptable value of every listed parameter, an optional one
whose first option is ``""`` left out), ``truth_minimal`` (every parameter BFCL lets a model
leave out left out), ``truth_reversed`` (the calls in reverse order); for ``--wrong-seeds`` and
every original case also ``truth_last_option`` (the last acceptable value of each) and
``truth_int_for_float`` (a whole float passed as an int), and the wrong ones:
``original_function_name`` (the pre-rename name, or another offered function's name when the
function kept its name), ``original_param_name``
(one renamed argument under its pre-rename name), ``value_outside`` (one argument value outside
its acceptable set), ``wrong_type`` (one number passed as a string or a string as a number),
``missing_required``, ``extra_call``, ``omitted_call``; for the irrelevance categories
``no_call`` / ``empty_call`` (``[{}]``) and ``call_when_none_wanted``.

Output: gzipped JSONL; ``{"kind": "record", ...}`` lines carry what a checker needs to judge
(the functions the AST checker reads, cut down to the fields it reads; the possible answer),
``{"kind": "verdict", record_id, candidate_kind, candidate, official_valid,
official_error_type}`` lines the verdicts. The cut-down functions are checked to give the
official checker the same verdict as the full ones on every candidate.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import importlib.metadata
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from bfcl_eval.constants.enums import Language
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
from bfcl_eval.utils import is_empty_output, is_function_calling_format_output

ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = ROOT / "harness_app" / "hsa" / "bfcl_data"
CATEGORIES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "irrelevance",
    "live_irrelevance",
)
NO_CALL = frozenset({"irrelevance", "live_irrelevance"})
# A prompt-format model of BFCL's MODEL_CONFIG_MAPPING with underscore_to_dot=False (so a
# dotted function name is compared as it is); the runner passes names with "/" as "_".
MODEL_NAME = "Qwen_Qwen3-8B"
OMIT = ""
# The candidates whose rejection means "BFCL rejects a record marked valid": the truth in the
# order it is written (and with every omittable parameter left out), or no call at all.
# truth_reversed is reported on its own: BFCL's order-free matching is greedy
# (ast_checker.py:577-593), so BFCL's own overlapping truths can fail in another order.
HEADLINE_KINDS = frozenset({"truth", "truth_minimal", "no_call"})
RECORDS_FILE = re.compile(r"^(?P<policy>[a-z0-9-]+)_seed(?P<seed>\d+)\.jsonl$")


# ----------------------------------------------------------------------------- official


def official_verdict(
    category: str, functions: list[dict], candidate: list[dict], answer: list[dict]
) -> tuple[bool, str | None]:
    """(valid, error_type) as BFCL's eval runner decides it for a decoded model output."""
    if category in NO_CALL:
        # eval_runner._evaluate_single_relevance_entry: a decoded output that is not empty
        # is a function call, which the irrelevance categories must not contain.
        called = not is_empty_output(copy.deepcopy(candidate))
        return (not called, "irrelevance_error:decoder_success" if called else None)
    if not is_function_calling_format_output(candidate):
        return False, "ast_decoder:decoder_wrong_output_format"
    try:
        result = ast_checker(
            copy.deepcopy(functions),
            copy.deepcopy(candidate),
            copy.deepcopy(answer),
            Language.PYTHON,
            category,
            MODEL_NAME,
        )
    except Exception as exc:  # the checker's own crash is a verdict too (recorded as such)
        return False, f"exception:{type(exc).__name__}"
    return bool(result["valid"]), None if result["valid"] else result.get("error_type")


def checker_view(functions: list[dict], answer: list[dict], category: str) -> list[dict]:
    """What of the function docs the AST checker reads: in a simple category the first
    function (it is judged against that one), else those the answer names
    (find_description), each cut to its name, required list, each parameter's type and the
    items type of an array or tuple. ``judge_record`` checks that this view gives every
    verdict the full docs give."""
    named = {name for entry in answer for name in entry}
    simple = "parallel" not in category and "multiple" not in category
    view = []
    for index, function in enumerate(functions):
        if not (simple and index == 0) and function["name"] not in named:
            continue
        parameters = function["parameters"]
        properties = {}
        for name, spec in parameters.get("properties", {}).items():
            cut = {"type": spec["type"]}
            if spec["type"] in ("array", "tuple") and "type" in spec.get("items", {}):
                cut["items"] = {"type": spec["items"]["type"]}
            properties[name] = cut
        view.append(
            {
                "name": function["name"],
                "parameters": {
                    "type": parameters.get("type"),
                    "properties": properties,
                    "required": list(parameters.get("required", [])),
                },
            }
        )
    return view


# ---------------------------------------------------------------------------- candidates


def _is_truth(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, list) for v in value.values())


def _first(options: list[Any], last: bool = False) -> tuple[bool, Any]:
    for option in reversed(options) if last else options:
        if option != OMIT:
            return True, option
    return False, None


def _nested_value(spec: dict, option: Any, minimal: bool) -> Any:
    """A dict parameter's option is itself a truth (key -> options) that BFCL's dict_checker
    compares one level deep; an array of dicts holds one such truth per element."""
    if spec.get("type") == "dict" and _is_truth(option):
        return _dict_value(option, minimal)
    if (
        spec.get("type") == "array"
        and spec.get("items", {}).get("type") == "dict"
        and isinstance(option, list)
        and option
        and all(_is_truth(o) for o in option)
    ):
        return [_dict_value(o, minimal) for o in option]
    return option


def _dict_value(truth: dict[str, list[Any]], minimal: bool) -> dict[str, Any]:
    value = {}
    for key, options in truth.items():
        if OMIT in options and (minimal or options[0] == OMIT):
            continue
        found, option = _first(options)
        if found:
            value[key] = option  # dict_checker compares nested values as they are
    return value


def concrete_call(
    function: dict, params: dict[str, list[Any]], minimal: bool, last: bool = False
) -> dict[str, Any]:
    """Arguments BFCL's rules accept for one ground-truth call: a parameter that is not
    required and allows ``""`` is left out when ``minimal`` or when ``""`` is its first
    option, else its first (``last``: last) option other than ``""`` is passed."""
    required = set(function["parameters"].get("required", []))
    properties = function["parameters"].get("properties", {})
    arguments = {}
    for name, options in params.items():
        if name not in required and OMIT in options and (minimal or options[0] == OMIT):
            continue
        found, option = _first(options, last)
        if found:
            arguments[name] = _nested_value(properties.get(name, {}), option, minimal)
    return arguments


def truth_calls(
    functions: list[dict], answer: list[dict], minimal: bool, last: bool = False
) -> list[dict]:
    by_name = {f["name"]: f for f in functions}
    calls = []
    for entry in answer:
        ((name, params),) = entry.items()
        function = by_name.get(name, {"parameters": {}})
        calls.append({name: concrete_call(function, params, minimal, last)})
    return calls


def int_for_float(functions: list[dict], calls: list[dict]) -> list[dict]:
    """The calls with every whole float argument of a float parameter passed as an int."""
    by_name = {f["name"]: f for f in functions}
    out = []
    for call in calls:
        ((name, args),) = call.items()
        properties = by_name.get(name, {"parameters": {}})["parameters"].get("properties", {})
        out.append(
            {
                name: {
                    p: int(v)
                    if properties.get(p, {}).get("type") == "float"
                    and type(v) is float
                    and v.is_integer()
                    else v
                    for p, v in args.items()
                }
            }
        )
    return out


def _standard(text: str) -> str:
    return re.sub(r"[ \,\.\/\-\_\*\^]", "", text).lower().replace("'", '"')


def _outside(value: Any, options: list[Any]) -> Any:
    """A value of the same type that is not among ``options`` (None when there is none)."""
    if isinstance(value, bool):
        flipped = not value
        return None if flipped in options else flipped
    if isinstance(value, int):
        numbers = [o for o in options if isinstance(o, (int, float)) and not isinstance(o, bool)]
        return int(max(numbers, default=0)) + 7919
    if isinstance(value, float):
        numbers = [o for o in options if isinstance(o, (int, float)) and not isinstance(o, bool)]
        return float(max(numbers, default=0.0)) + 7919.5
    if isinstance(value, str):
        taken = {_standard(o) for o in options if isinstance(o, str)}
        new = value + "qzx"
        return None if _standard(new) in taken else new
    if isinstance(value, list):
        if not value or isinstance(value[0], dict):
            return None
        new = [*value, value[0]]
        return None if new in options else new
    return None


def wrong_candidates(
    record: dict[str, Any], functions: list[dict], answer: list[dict]
) -> list[tuple[str, list[dict]]]:
    """Outputs that answer the case wrongly, each of one kind (see module doc)."""
    truth = truth_calls(functions, answer, minimal=False)
    mapping = record.get("mapping") or {"tool_renames": {}, "param_renames": {}}
    tool_back = {new: old for old, new in mapping["tool_renames"].items()}
    out: list[tuple[str, list[dict]]] = []
    ((name, args),) = truth[0].items()
    function = next((f for f in functions if f["name"] == name), {"parameters": {}})
    required = list(function["parameters"].get("required", []))
    # the pre-rename name, else another offered function's name
    other = tool_back.get(name) or next(
        (f["name"] for f in functions if f["name"] != name), name + "_v2"
    )
    out.append(("original_function_name", [{other: dict(args)}, *truth[1:]]))
    old_name = tool_back.get(name, name)
    param_back = {new: old for old, new in mapping["param_renames"].get(old_name, {}).items()}
    renamed = next((p for p in args if p in param_back), None)
    if renamed is not None:
        moved = {param_back[p] if p == renamed else p: v for p, v in args.items()}
        out.append(("original_param_name", [{name: moved}, *truth[1:]]))
    params = next(iter(answer[0].values()))
    for param, value in args.items():
        new = _outside(value, params.get(param, []))
        if new is not None:
            out.append(("value_outside", [{name: {**args, param: new}}, *truth[1:]]))
            break
    for param, value in args.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            out.append(("wrong_type", [{name: {**args, param: str(value)}}, *truth[1:]]))
            break
        declared = function["parameters"].get("properties", {}).get(param, {})
        if isinstance(value, str) and declared.get("type") in ("string", "any"):
            out.append(("wrong_type", [{name: {**args, param: 12345}}, *truth[1:]]))
            break
    present = next((p for p in required if p in args), None)
    if present is not None:
        dropped = {p: v for p, v in args.items() if p != present}
        out.append(("missing_required", [{name: dropped}, *truth[1:]]))
    out.append(("extra_call", [*truth, copy.deepcopy(truth[0])]))
    out.append(("omitted_call", truth[:-1]))
    return out


def _dummy(spec: dict) -> Any:
    kind = spec.get("type")
    return {
        "integer": 1,
        "float": 1.0,
        "boolean": True,
        "array": [],
        "tuple": [],
        "dict": {},
    }.get(kind, "x")


def candidates(
    record: dict[str, Any], category: str, functions: list[dict], answer: list[dict], wrong: bool
) -> list[tuple[str, list[dict]]]:
    if category in NO_CALL:
        # (a live_irrelevance case may offer no function at all)
        first = functions[0] if functions else {"name": "lookup", "parameters": {}}
        required = first["parameters"].get("required", [])
        properties = first["parameters"].get("properties", {})
        call = {first["name"]: {p: _dummy(properties.get(p, {})) for p in required}}
        return [("no_call", []), ("empty_call", [{}]), ("call_when_none_wanted", [call])]
    out = [("truth", truth_calls(functions, answer, minimal=False))]
    minimal = truth_calls(functions, answer, minimal=True)
    if minimal != out[0][1]:
        out.append(("truth_minimal", minimal))
    if len(answer) > 1:
        out.append(("truth_reversed", out[0][1][::-1]))
    if wrong:
        last = truth_calls(functions, answer, minimal=False, last=True)
        if last != out[0][1]:
            out.append(("truth_last_option", last))
        whole = int_for_float(functions, out[0][1])
        if json.dumps(whole) != json.dumps(out[0][1]):  # (5 == 5.0 in Python)
            out.append(("truth_int_for_float", whole))
        out += wrong_candidates(record, functions, answer)
    return out


# ---------------------------------------------------------------------------- inputs


def read_gz_lines(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def original_cases() -> list[dict[str, Any]]:
    """Every original case as a pseudo-record (id, category, function, ground_truth)."""
    cases = []
    for category in CATEGORIES:
        answers = {}
        if category not in NO_CALL:
            answers = {
                a["id"]: a["ground_truth"]
                for a in read_gz_lines(DATA_DIR / "possible_answer" / f"BFCL_v4_{category}.json.gz")
            }
        for case in read_gz_lines(DATA_DIR / f"BFCL_v4_{category}.json.gz"):
            cases.append(
                {
                    "id": case["id"],
                    "category": category,
                    "function": case["function"],
                    "ground_truth": answers.get(case["id"], []),
                    "valid": True,
                    "mapping": None,
                }
            )
    return cases


def refusal_kind(problem: str) -> str:
    """A short class for one refusal reason written by bfcl_augment."""
    if "is not one of" in problem:
        return "value outside its enum"
    if "is not of type" in problem:
        return "value of the wrong type"
    if "not a parameter" in problem:
        return "parameter the function lacks"
    if "no acceptable value" in problem:
        return "required parameter with no acceptable value"
    if "does not list it" in problem:
        return "required parameter not listed"
    return "other: " + problem[:60]


# ------------------------------------------------------------------------------- main


def _empty_row() -> dict[str, Any]:
    return {
        "records": 0,
        "valid": 0,
        "recorded": 0,
        "refused": 0,
        "refused_reasons": Counter(),
        "official_rejects_valid": 0,
        "official_rejected_ids": [],
        "truth_reversed_rejected_ids": [],
        "truth_last_option_rejected_ids": [],
        "truth_int_for_float_rejected_ids": [],
        "wrong_candidates": 0,
        "wrong_accepted": 0,
    }


def _line(item: dict[str, Any]) -> bytes:
    return (json.dumps(item, sort_keys=True, ensure_ascii=False) + "\n").encode()


def judge_record(
    record: dict[str, Any], record_id: str, full: bool, row: dict[str, Any], out: Any
) -> None:
    """Judge every candidate of one valid record, count into ``row`` and write the lines:
    all of them when ``full`` (wrong candidates too), else (to keep the file small) the
    ``truth`` and ``truth_minimal`` verdicts of the categories that want a call."""
    category = record["category"]
    functions = record["function"]
    answer = record["ground_truth"]
    view = checker_view(functions, answer, category)
    written = full or category not in NO_CALL
    if written:
        row["recorded"] += 1
        line = {
            "kind": "record",
            "record_id": record_id,
            "category": category,
            "policy": record["_run"][0],
            "seed": record["_run"][1],
            "functions": view,
            "ground_truth": answer,
        }
        out.write(_line(line))
    rejected = False
    for kind, candidate in candidates(record, category, functions, answer, full):
        valid, error_type = official_verdict(category, functions, candidate, answer)
        if official_verdict(category, view, candidate, answer) != (valid, error_type):
            raise SystemExit(f"{record_id} {kind}: the cut-down functions judge differently")
        if kind in HEADLINE_KINDS and not valid:
            rejected = True
        if kind in ("truth_reversed", "truth_last_option", "truth_int_for_float") and not valid:
            row[f"{kind}_rejected_ids"].append(record["id"])
        if not (kind.startswith("truth") or kind in ("no_call", "empty_call")):
            row["wrong_candidates"] += 1
            row["wrong_accepted"] += valid
        verdict = {
            "kind": "verdict",
            "record_id": record_id,
            "candidate_kind": kind,
            "candidate": candidate,
            "official_valid": valid,
            "official_error_type": error_type,
        }
        if written and (full or kind in HEADLINE_KINDS):
            out.write(_line(verdict))
    if rejected:
        row["official_rejects_valid"] += 1
        row["official_rejected_ids"].append(record["id"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--records", type=Path, required=True, help="<policy>_seed<N>.jsonl here")
    parser.add_argument("--out", type=Path, required=True, help="verdicts, gzipped JSONL")
    parser.add_argument("--summary", type=Path, required=True, help="headline numbers, JSON")
    parser.add_argument(
        "--wrong-seeds",
        default="0",
        help="seeds whose records get every candidate kind written (default 0); the others "
        "are judged on all of them too, but only their truth verdicts are written",
    )
    args = parser.parse_args(argv)
    wrong_seeds = {int(s) for s in args.wrong_seeds.split(",") if s}
    sources: list[tuple[str, int | None, Path | None]] = [("original", None, None)]
    for path in sorted(args.records.glob("*.jsonl")):
        match = RECORDS_FILE.match(path.name)
        if match is None:
            raise SystemExit(f"{path}: expected <policy>_seed<N>.jsonl")
        sources.append((match["policy"], int(match["seed"]), path))
    if len(sources) == 1:
        raise SystemExit(f"no <policy>_seed<N>.jsonl files in {args.records}")
    meta = {
        "bfcl_eval": importlib.metadata.version("bfcl_eval"),
        "checker": "bfcl_eval.eval_checker.ast_eval.ast_checker.ast_checker",
        "model_name": MODEL_NAME,
        "wrong_seeds": sorted(wrong_seeds),
    }
    runs: list[dict[str, Any]] = []
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(args.out, "wb", mtime=0) as out:
        out.write(_line({"kind": "meta", **meta}))
        for policy, seed, path in sources:
            if path is None:
                records = original_cases()
            else:
                records = [json.loads(line) for line in path.open(encoding="utf-8")]
            counts: dict[str, dict[str, Any]] = defaultdict(_empty_row)
            for record in records:
                row = counts[record["category"]]
                row["records"] += 1
                if not record["valid"]:
                    row["refused"] += 1
                    kinds = sorted({refusal_kind(p) for p in record["problems"]})
                    row["refused_reasons"]["; ".join(kinds)] += 1
                    continue
                row["valid"] += 1
                record_id = f"{policy}:{seed}:{record['id']}"
                if path is None:
                    record_id = f"original:{record['id']}"
                full = path is None or seed in wrong_seeds
                judge_record({**record, "_run": (policy, seed)}, record_id, full, row, out)
            for category in CATEGORIES:
                row = counts[category]
                row["refused_reasons"] = dict(sorted(row["refused_reasons"].items()))
                runs.append({"policy": policy, "seed": seed, "category": category, **row})
            valid = sum(r["valid"] for r in counts.values())
            rejects = sum(r["official_rejects_valid"] for r in counts.values())
            print(f"{policy:<26} seed {seed!s:>4}  valid {valid:>5}  rejects {rejects:>4}")
    summary = {**meta, "runs": runs}
    args.summary.parent.mkdir(parents=True, exist_ok=True)
    args.summary.write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
