"""Tool-schema HSA on the BFCL "live simple" cases, with their ground truths rewritten.

Each case becomes a one-tool harness (``harness.bfcl.tool_from_bfcl``); its ground truth
becomes a concrete gold call; ``augment`` applies the tool-schema transforms (renames always,
then two more sampled) and verifies the pair; the BFCL ground truth is then rewritten through
the mapping and checked on its own terms against the augmented schema.

A BFCL ground truth lists acceptable values per parameter. It *validates* against a tool when:
the function name is the tool's; every parameter is a top-level property; a required
parameter has at least one option that is not "omit"; and every option validates against the
parameter's schema, where ``""`` means "omit" (allowed for optional parameters only), a value
equal to the parameter's declared ``default`` means "use the default" (likewise), and a dict
option for an object parameter (or a list of dicts for an array of objects) is itself a
ground truth for the nested schema, checked recursively.

CLI: ``python -m harness_app.hsa.bfcl_augment --out PATH --seed N`` writes the augmented set as
JSONL and prints the summary as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from harness_app.harness.bfcl import tool_from_bfcl
from harness_app.harness.model import Harness, Tool
from harness_app.harness.serialization import canonical_json
from harness_app.hsa.augment import AugmentationError, augment, example_seed
from harness_app.hsa.harness_check import argument_validator, schema_errors
from harness_app.hsa.mapping import RenameMapping
from harness_app.hsa.policy import BFCL_TOOL_SCHEMAS, AugmentationPolicy
from harness_app.hsa.trajectory import GoldTrajectory, ToolCall

DEFAULT_DATA_DIR: Final = Path(__file__).resolve().parents[3] / "shared" / "data" / "bfcl"
CASES_FILE: Final = "live_simple.jsonl"
ANSWERS_FILE: Final = "live_simple_answers.jsonl"
OMIT: Final = ""


@dataclass(frozen=True)
class GroundTruthCall:
    """One BFCL ground-truth call: function name and acceptable values per parameter."""

    name: str
    params: dict[str, list[Any]]

    @classmethod
    def from_bfcl(cls, entry: Mapping[str, Any]) -> GroundTruthCall:
        if len(entry) != 1:
            raise ValueError("a ground-truth call must have exactly one function name")
        ((name, params),) = entry.items()
        if not isinstance(params, Mapping) or not all(isinstance(v, list) for v in params.values()):
            raise ValueError(f"ground truth of {name}: parameters must map to lists")
        return cls(str(name), {str(k): list(v) for k, v in params.items()})

    def to_bfcl(self) -> dict[str, Any]:
        return {self.name: {key: list(values) for key, values in self.params.items()}}

    def remapped(self, mapping: RenameMapping) -> GroundTruthCall:
        """Function and top-level parameter names rewritten; acceptable values unchanged."""
        return GroundTruthCall(
            mapping.tool(self.name),
            {mapping.param(self.name, key): values for key, values in self.params.items()},
        )


def _types(schema: Mapping[str, Any]) -> set[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    return set()


def _is_nested_truth(value: object) -> bool:
    return isinstance(value, dict) and all(isinstance(v, list) for v in value.values())


def _options(schema: Mapping[str, Any], options: list[Any]) -> list[Any]:
    """The acceptable values to check. Two live-simple cases list *no* acceptable value for a
    required array parameter (``"bank_hours_start": []``), which no answer could satisfy; the
    only answerable reading is "the empty array", so an empty list on an array parameter is
    read as ``[[]]`` (reported by ``empty_array_readings``; the data itself is not changed)."""
    if not options and "array" in _types(schema):
        return [[]]
    return options


def empty_array_readings(
    schema: Mapping[str, Any], params: Mapping[str, Any], where: str
) -> list[str]:
    """Paths where ``_options`` read an empty acceptable-value list as the empty array."""
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    found: list[str] = []
    for name, options in params.items():
        sub = properties.get(name)
        if not isinstance(sub, dict) or not isinstance(options, list):
            continue
        if not options and "array" in _types(sub):
            found.append(f"{where}.{name}")
        for option in options:
            if "object" in _types(sub) and _is_nested_truth(option):
                found += empty_array_readings(sub, option, f"{where}.{name}")
    return found


def _is_nested_object(schema: Mapping[str, Any], value: Any) -> bool:
    """``value`` is a nested ground truth (parameter -> acceptable values) for an object schema."""
    properties = schema.get("properties")
    return "object" in _types(schema) and isinstance(properties, dict) and _is_nested_truth(value)


def _is_nested_object_list(schema: Mapping[str, Any], value: Any) -> bool:
    """``value`` is a non-empty list of nested ground truths for an array of objects."""
    items = schema.get("items")
    return (
        "array" in _types(schema)
        and isinstance(items, dict)
        and isinstance(items.get("properties"), dict)
        and isinstance(value, list)
        and bool(value)
        and all(_is_nested_truth(v) for v in value)
    )


def _option_problems(schema: Mapping[str, Any], value: Any, where: str) -> list[str]:
    """Problems of one acceptable value (not an omission marker) against a property schema."""
    if _is_nested_object(schema, value):
        return _params_problems(schema, value, where)
    if _is_nested_object_list(schema, value):
        problems: list[str] = []
        for index, element in enumerate(value):
            problems += _params_problems(schema["items"], element, f"{where}[{index}]")
        return problems
    validator = argument_validator(dict(schema))
    if validator.is_valid(value):
        return []
    error = next(iter(validator.iter_errors(value)))
    return [f"{where}: {value!r} is not accepted ({error.message})"]


def _params_problems(
    schema: Mapping[str, Any], params: Mapping[str, list[Any]], where: str
) -> list[str]:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    required_names = set(required) if isinstance(required, list) else set()
    problems: list[str] = []
    for name in sorted(required_names):
        sub = properties.get(name)
        options = params.get(name)
        if options is not None and isinstance(sub, dict):
            options = _options(sub, options)
        if options is None or all(option == OMIT for option in options):
            problems.append(f"{where}.{name}: required but the ground truth allows omitting it")
    for name, options in params.items():
        path = f"{where}.{name}"
        sub = properties.get(name)
        if not isinstance(sub, dict):
            problems.append(f"{path}: not a parameter of the schema")
            continue
        options = _options(sub, options)
        if not options:
            problems.append(f"{path}: no acceptable value")
        for option in options:
            omits = option == OMIT or ("default" in sub and option == sub["default"])
            if omits and name not in required_names:
                continue  # "omit" / "use the default" is valid for an optional parameter
            problems += _option_problems(sub, option, path)
    return problems


def ground_truth_problems(tool: Tool, call: GroundTruthCall) -> list[str]:
    """Why ``call`` does not validate against ``tool`` ([] when it does; see module doc)."""
    if call.name != tool.name:
        return [f"function '{call.name}' is not the tool '{tool.name}'"]
    if schema_errors(tool.input_schema):
        return [f"tool '{tool.name}' has an invalid input schema"]
    return _params_problems(tool.input_schema, call.params, call.name)


def _concrete_value(schema: Mapping[str, Any], value: Any) -> Any:
    if _is_nested_object(schema, value):
        return _concrete_params(schema, value)
    if _is_nested_object_list(schema, value):
        return [_concrete_params(schema["items"], element) for element in value]
    return value


def _concrete_params(schema: Mapping[str, Any], params: Mapping[str, list[Any]]) -> dict[str, Any]:
    """The call that takes the first real option of each parameter (omitting it when its
    first option is "omit" or the default)."""
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    arguments: dict[str, Any] = {}
    for name, options in params.items():
        sub = properties.get(name, {})
        for option in _options(sub if isinstance(sub, dict) else {}, options):
            if option == OMIT or (isinstance(sub, dict) and option == sub.get("default", OMIT)):
                break
            arguments[name] = _concrete_value(sub if isinstance(sub, dict) else {}, option)
            break
    return arguments


def gold_from_ground_truth(tool: Tool, call: GroundTruthCall) -> GoldTrajectory:
    """The concrete gold trajectory HSA verifies: one call, no skill, no reply."""
    return GoldTrajectory(
        skill=None,
        tool_calls=(ToolCall(call.name, _concrete_params(tool.input_schema, call.params)),),
    )


def tool_to_bfcl(tool: Tool) -> dict[str, Any]:
    """A harness tool as a BFCL-style function (parameters as JSON Schema)."""
    return {"name": tool.name, "description": tool.description, "parameters": tool.input_schema}


@dataclass
class BfclAugmentReport:
    cases: int = 0
    augmented: int = 0
    original_ground_truths_valid: int = 0
    augmented_ground_truths_valid: int = 0
    inverse_mapping_exact: int = 0
    tool_renamed: int = 0
    params_renamed: int = 0
    distractor_tools_added: int = 0
    empty_array_readings: list[str] = field(default_factory=list)
    transforms: Counter[str] = field(default_factory=Counter)
    failures: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "augmented": self.augmented,
            "original_ground_truths_valid": self.original_ground_truths_valid,
            "augmented_ground_truths_valid": self.augmented_ground_truths_valid,
            "inverse_mapping_exact": self.inverse_mapping_exact,
            "cases_with_tool_renamed": self.tool_renamed,
            "cases_with_params_renamed": self.params_renamed,
            "cases_with_distractor_tools": self.distractor_tools_added,
            "empty_value_lists_read_as_empty_array": self.empty_array_readings,
            "transforms_applied": dict(sorted(self.transforms.items())),
            "failures": [{"id": case, "reason": reason} for case, reason in self.failures],
        }


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every non-blank line (the last line of the BFCL files has no newline)."""
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def augment_case(
    case: Mapping[str, Any],
    answer: Mapping[str, Any],
    *,
    seed: int,
    policy: AugmentationPolicy,
    report: BfclAugmentReport,
) -> dict[str, Any] | None:
    """The augmented JSONL record of one case (None, with a failure recorded, if it fails)."""
    case_id = str(case.get("id"))
    report.cases += 1
    tool = tool_from_bfcl(case["function"][0])
    call = GroundTruthCall.from_bfcl(answer["ground_truth"][0])
    report.empty_array_readings += [
        f"{case_id}: {path}"
        for path in empty_array_readings(tool.input_schema, call.params, call.name)
    ]
    original_problems = ground_truth_problems(tool, call)
    if original_problems:
        report.failures.append((case_id, "original: " + "; ".join(original_problems)))
        return None
    report.original_ground_truths_valid += 1
    harness = Harness(tools=(tool,))
    try:
        example = augment(harness, gold_from_ground_truth(tool, call), policy, seed)
    except AugmentationError as exc:
        report.failures.append((case_id, str(exc)))
        return None
    report.augmented += 1
    new_call = call.remapped(example.mapping)
    new_tool = example.harness.tool(new_call.name)
    problems = (
        ground_truth_problems(new_tool, new_call)
        if new_tool is not None
        else [f"no tool named {new_call.name}"]
    )
    if problems:
        report.failures.append((case_id, "augmented: " + "; ".join(problems)))
    else:
        report.augmented_ground_truths_valid += 1
    if new_call.remapped(example.mapping.inverse()) == call:
        report.inverse_mapping_exact += 1
    else:
        report.failures.append((case_id, "the inverse mapping does not restore the ground truth"))
    report.tool_renamed += new_call.name != call.name
    report.params_renamed += any(example.mapping.param_renames.values())
    report.distractor_tools_added += len(example.harness.tools) > 1
    report.transforms.update(example.provenance["transforms"])
    return {
        "id": f"{case_id}-hsa",
        "source_id": case_id,
        "question": case.get("question"),
        "function": [tool_to_bfcl(t) for t in example.harness.tools],
        "ground_truth": [new_call.to_bfcl()],
        "mapping": example.mapping.to_dict(),
        "provenance": example.provenance,
        "valid": not problems,
    }


def augment_bfcl(
    data_dir: Path = DEFAULT_DATA_DIR,
    *,
    seed: int = 0,
    policy: AugmentationPolicy = BFCL_TOOL_SCHEMAS,
) -> tuple[list[dict[str, Any]], BfclAugmentReport]:
    """Augment every case of ``live_simple.jsonl``; records in file order, and the report."""
    cases = read_jsonl(data_dir / CASES_FILE)
    answers = {str(a["id"]): a for a in read_jsonl(data_dir / ANSWERS_FILE)}
    report = BfclAugmentReport()
    records = []
    for index, case in enumerate(cases):
        answer = answers.get(str(case.get("id")))
        if answer is None:
            report.cases += 1
            report.failures.append((str(case.get("id")), "no ground truth"))
            continue
        record = augment_case(
            case, answer, seed=example_seed(seed, index, 0), policy=policy, report=report
        )
        if record is not None:
            records.append(record)
    return records, report


def iter_lines(records: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    for record in records:
        yield canonical_json(record) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m harness_app.hsa.bfcl_augment",
        description="Apply HSA tool-schema transforms to BFCL live-simple and rewrite the "
        "ground truths.",
    )
    parser.add_argument("--out", required=True, type=Path, help="JSONL file to write")
    parser.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=DEFAULT_DATA_DIR,
        help=f"folder with {CASES_FILE} and {ANSWERS_FILE} (default: {DEFAULT_DATA_DIR})",
    )
    args = parser.parse_args(argv)
    records, report = augment_bfcl(args.data_dir, seed=args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as handle:
        handle.writelines(iter_lines(records))
    summary = {"out": str(args.out), "seed": args.seed, "policy": BFCL_TOOL_SCHEMAS.name}
    summary |= report.to_dict()
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    valid = report.augmented_ground_truths_valid == report.cases == report.inverse_mapping_exact
    return 0 if valid else 1


if __name__ == "__main__":
    sys.exit(main())
