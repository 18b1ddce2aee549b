"""Tool-schema HSA on every single-turn BFCL v4 category, with the ground truths rewritten.

A case is one harness holding *all* its offered functions (``harness.bfcl.tool_from_bfcl``);
its gold holds *every* ground-truth call (an order-insensitive step: BFCL scores parallel
calls in any order); the irrelevance categories keep "no call". ``augment`` applies the
policy's tool-schema transforms and verifies the pair; the BFCL ground truth is then rewritten
through the mapping and checked again on its own terms against the augmented functions.

A BFCL ground truth lists acceptable values per parameter; ``""`` among them means "may be
omitted", on required parameters too (BFCL's own data uses it so). A ground truth is *valid*
against the offered functions when: each call names an offered function; every parameter is a
top-level property; every required parameter is listed and has an acceptable value other than
``""``; and every acceptable value other than ``""`` validates against the parameter's schema
(a value equal to the declared ``default`` of an optional parameter that may be omitted means
"use the default" and is not checked), a dict value for an object parameter (or a list of
dicts for an array of objects) being itself a ground truth for the nested schema. A ground
truth BFCL gets wrong (a value outside its own enum, a required parameter with no acceptable
value) is reported with its reason and never emitted as valid.

The concrete gold call takes, per parameter, nothing when an optional parameter's first option
is ``""``, else the first option that validates (so a required argument whose first option is
``""`` or equals its default is never dropped).

Names stay legal for the format they are scored in (policy ``name_format="python"``): function
names are Python identifiers joined by dots, parameter names identifiers, and both stay
OpenAI-legal once dots become underscores. A function or parameter name the question mentions
literally (an identifier-looking name such as ``list_files``) is rewritten in the question
through the same mapping (function names) or not renamed at all (parameter names, and names
that also occur inside a ground-truth value).

CLI: ``python -m harness_app.hsa.bfcl_augment --category NAME|all --seed N --out FILE``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from harness_app.harness.bfcl import bfcl_function_from_tool, tool_from_bfcl
from harness_app.harness.model import Harness, Tool
from harness_app.harness.serialization import canonical_json
from harness_app.harness.validation import validate_harness
from harness_app.hsa.augment import AugmentationError, augment, example_seed
from harness_app.hsa.bfcl_data import CATEGORIES, DATA_DIR, NO_CALL_CATEGORIES, load_category
from harness_app.hsa.harness_check import argument_validator, schema_errors
from harness_app.hsa.mapping import RenameMapping
from harness_app.hsa.naming import (
    is_python_param_name,
    is_python_tool_name,
    looks_like_identifier,
)
from harness_app.hsa.policy import BFCL_TOOL_SCHEMAS, POLICIES, AugmentationPolicy
from harness_app.hsa.renaming import identifier_candidates, rewrite_text
from harness_app.hsa.trajectory import GoldTrajectory, ToolCall

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


# ------------------------------------------------------------------------ ground-truth rules


def _types(schema: Mapping[str, Any]) -> set[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    return set()


def _is_nested_truth(value: object) -> bool:
    return isinstance(value, dict) and all(isinstance(v, list) for v in value.values())


def _properties_of(schema: Mapping[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties")
    return properties if isinstance(properties, dict) else {}


def _required_of(schema: Mapping[str, Any]) -> set[str]:
    required = schema.get("required")
    return {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()


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


def _is_default(schema: Mapping[str, Any], option: Any) -> bool:
    return "default" in schema and option == schema["default"]


def _params_problems(
    schema: Mapping[str, Any], params: Mapping[str, list[Any]], where: str
) -> list[str]:
    properties = _properties_of(schema)
    required = _required_of(schema)
    problems: list[str] = []
    for name in sorted(required - set(params)):
        problems.append(f"{where}.{name}: required but the ground truth does not list it")
    for name, raw_options in params.items():
        path = f"{where}.{name}"
        sub = properties.get(name)
        if not isinstance(sub, dict):
            problems.append(f"{path}: not a parameter of the schema")
            continue
        options = raw_options
        if not options:
            # (live_simple_106-63-0 and _112-68-0: BFCL's checker accepts no answer at all)
            problems.append(f"{path}: no acceptable value (an empty list)")
            continue
        is_required = name in required
        option_problems: list[str] = []
        good = 0
        for option in options:
            if option == OMIT:
                continue  # "may be omitted"
            if not is_required and OMIT in options and _is_default(sub, option):
                good += 1
                continue  # "use the default", i.e. leave it out, which "" allows
            found = _option_problems(sub, option, path)
            option_problems += found
            good += not found
        if is_required and good == 0 and not option_problems:
            problems.append(f'{path}: required parameter with no acceptable value (only "")')
        problems += option_problems
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
    """One call the ground truth accepts: an optional parameter whose first option is ``""``
    is left out; otherwise the first option other than ``""`` that validates is passed."""
    properties = _properties_of(schema)
    required = _required_of(schema)
    arguments: dict[str, Any] = {}
    for name, raw_options in params.items():
        sub = properties.get(name)
        sub = sub if isinstance(sub, dict) else {}
        options = raw_options
        if options and options[0] == OMIT and name not in required:
            continue
        for option in options:
            if option != OMIT and not _option_problems(sub, option, name):
                arguments[name] = _concrete_value(sub, option)
                break
    return arguments


def gold_from_ground_truth(
    tools: Sequence[Tool], calls: Sequence[GroundTruthCall], question: str = ""
) -> GoldTrajectory:
    """The concrete gold trajectory HSA verifies: every call, no skill, no reply; the
    question is the comment (what a distractor must not be able to answer)."""
    by_name = {tool.name: tool for tool in tools}
    return GoldTrajectory(
        skill=None,
        tool_calls=tuple(
            ToolCall(call.name, _concrete_params(by_name[call.name].input_schema, call.params))
            for call in calls
        ),
        comment=question,
    )


# ------------------------------------------------------------------------------- question


def question_texts(question: Any) -> list[str]:
    """Every message content of a BFCL question (a list of turns, each a list of messages)."""
    texts: list[str] = []
    for turn in question if isinstance(question, list) else ():
        for message in turn if isinstance(turn, list) else (turn,):
            if isinstance(message, dict) and isinstance(message.get("content"), str):
                texts.append(message["content"])
    return texts


def rewrite_question(question: Any, renames: Mapping[str, str]) -> Any:
    """The question with every literal mention of a renamed function rewritten."""
    if not renames or not isinstance(question, list):
        return question
    turns = []
    for turn in question:
        messages = []
        for message in turn if isinstance(turn, list) else ():
            if isinstance(message, dict) and isinstance(message.get("content"), str):
                message = {**message, "content": rewrite_text(message["content"], renames)}
            messages.append(message)
        turns.append(messages)
    return turns


def _string_values(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _string_values(item)
    elif isinstance(value, list):
        for item in value:
            yield from _string_values(item)


def _quoted_or_called(texts: Sequence[str], name: str) -> bool:
    """A plain word used as a name: quoted (``'add'``, ``"add"``, `` `add` ``) or called
    (``add(``)."""
    pattern = re.compile(
        rf"""(['"`]){re.escape(name)}\1|(?<![A-Za-z0-9_.]){re.escape(name)}\s*\("""
    )
    return any(pattern.search(text) for text in texts)


def mentioned_names(
    texts: Sequence[str], tools: Sequence[Tool], calls: Sequence[GroundTruthCall]
) -> tuple[frozenset[str], frozenset[str]]:
    """(function names to rewrite in the question, names to keep) among the function and
    parameter names the question mentions literally. An identifier-looking function name
    (``list_files``) written exactly is rewritten through the mapping. Kept (not renamed),
    because a rewrite could not keep question, values and functions consistent: a mentioned
    parameter name, a name that is also inside a ground-truth value, an identifier-looking
    name written in another case (``FAHRENHEIT_TO_CELSIUS`` for ``fahrenheit_to_celsius``),
    and a plain-word name quoted or called (``'add'``, ``add(``)."""
    candidates = frozenset().union(*(identifier_candidates(text) for text in texts))
    folded = {candidate.lower() for candidate in candidates}
    tool_names = {tool.name for tool in tools}
    param_names = {name for tool in tools for name in _properties_of(tool.input_schema)}
    values = " ".join(s for call in calls for s in _string_values(call.params))
    rewrite: set[str] = set()
    keep: set[str] = set()
    for name in tool_names | param_names:
        if looks_like_identifier(name):
            if name in candidates:
                if name in tool_names and name not in param_names and name not in values:
                    rewrite.add(name)
                else:
                    keep.add(name)
            elif name.lower() in folded:
                keep.add(name)
        elif name.lower() in folded and _quoted_or_called(texts, name):
            keep.add(name)
    return frozenset(rewrite), frozenset(keep)


def stale_mentions(texts: Sequence[str], renamed: Mapping[str, str]) -> list[str]:
    """Renamed names the question still mentions literally (exactly, as identifiers)."""
    candidates = frozenset().union(*(identifier_candidates(text) for text in texts))
    return sorted(
        name
        for name in renamed
        if (looks_like_identifier(name) and name in candidates)
        or (not looks_like_identifier(name) and _quoted_or_called(texts, name))
    )


# ---------------------------------------------------------------------------------- report


@dataclass
class BfclAugmentReport:
    category: str = ""
    cases: int = 0
    functions: int = 0
    import_failures: list[tuple[str, str]] = field(default_factory=list)
    original_invalid: list[tuple[str, str]] = field(default_factory=list)
    augmented: int = 0
    valid: int = 0
    invalid_after_augmentation: list[tuple[str, str]] = field(default_factory=list)
    augmentation_errors: list[tuple[str, str]] = field(default_factory=list)
    ground_truth_calls: int = 0
    tool_renamed: int = 0
    params_renamed: int = 0
    distractor_tools_added: int = 0
    question_mentions_rewritten: int = 0
    names_kept_for_question: int = 0
    transforms: Counter[str] = field(default_factory=Counter)

    def refusals(self) -> list[tuple[str, str]]:
        return (
            self.import_failures
            + self.original_invalid
            + self.augmentation_errors
            + self.invalid_after_augmentation
        )

    def to_dict(self) -> dict[str, Any]:
        def listed(items: list[tuple[str, str]]) -> list[dict[str, str]]:
            return [{"id": case, "reason": reason} for case, reason in items]

        return {
            "category": self.category,
            "cases": self.cases,
            "functions": self.functions,
            "ground_truth_calls": self.ground_truth_calls,
            "import_failures": listed(self.import_failures),
            "original_ground_truth_invalid": listed(self.original_invalid),
            "augmentation_errors": listed(self.augmentation_errors),
            "invalid_after_augmentation": listed(self.invalid_after_augmentation),
            "augmented": self.augmented,
            "valid": self.valid,
            "cases_with_tool_renamed": self.tool_renamed,
            "cases_with_params_renamed": self.params_renamed,
            "cases_with_distractor_tools": self.distractor_tools_added,
            "cases_with_question_mentions_rewritten": self.question_mentions_rewritten,
            "cases_with_names_kept_for_the_question": self.names_kept_for_question,
            "transforms_applied": dict(sorted(self.transforms.items())),
        }


# ------------------------------------------------------------------------------ one case


def name_problems(harness: Harness) -> list[str]:
    """Names a BFCL scorer could not parse (Python call syntax) or an OpenAI-format endpoint
    would reject, and function names that collide once dots become underscores."""
    problems: list[str] = []
    underscored: dict[str, str] = {}
    for tool in harness.tools:
        if not is_python_tool_name(tool.name):
            problems.append(f"function name '{tool.name}' is not a dotted Python identifier")
        other = underscored.setdefault(tool.name.replace(".", "_"), tool.name)
        if other != tool.name:
            problems.append(f"'{tool.name}' and '{other}' collide as OpenAI names")
        for param in _properties_of(tool.input_schema):
            if not is_python_param_name(param):
                problems.append(f"parameter '{param}' of '{tool.name}' is not an identifier")
    return problems


def judged_against_first_function(category: str) -> bool:
    """BFCL scores a category with neither "parallel" nor "multiple" in its name against the
    case's *first* function (``ast_checker`` -> ``simple_function_checker(func_description[0],
    ...)``, which takes the expected name from that doc), so there the ground-truth function
    must stay first whatever distractors HSA adds."""
    return (
        category not in NO_CALL_CATEGORIES
        and "parallel" not in category
        and "multiple" not in category
    )


def _truth_first(tools: Sequence[Tool], name: str) -> list[Tool]:
    return sorted(tools, key=lambda tool: tool.name != name)  # stable: the rest keep order


def _record(
    case: Mapping[str, Any],
    category: str,
    *,
    valid: bool,
    problems: list[str],
    functions: list[dict[str, Any]] | None = None,
    question: Any = None,
    ground_truth: list[dict[str, Any]] | None = None,
    mapping: RenameMapping | None = None,
    provenance: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "id": f"{case.get('id')}-hsa",
        "source_id": str(case.get("id")),
        "category": category,
        "question": question,
        "function": functions,
        "ground_truth": ground_truth,
        # BFCL scores the calls of one turn in any order (parallel_function_checker_no_order).
        "call_order": "any",
        "mapping": mapping.to_dict() if mapping is not None else None,
        "provenance": provenance,
        "valid": valid,
        "problems": problems,
    }


def augment_case(
    case: Mapping[str, Any],
    answer: Mapping[str, Any] | None,
    category: str,
    *,
    seed: int,
    policy: AugmentationPolicy,
    report: BfclAugmentReport,
) -> dict[str, Any]:
    """The JSONL record of one case: augmented and ``valid``, or refused with its problems."""
    case_id = str(case.get("id"))
    report.cases += 1
    functions = case.get("function") or []
    report.functions += len(functions)
    tools = tuple(tool_from_bfcl(f) for f in functions)
    harness = Harness(tools=tools)
    import_errors = [str(e) for e in validate_harness(harness)]
    if import_errors:
        report.import_failures.append((case_id, "; ".join(import_errors)))
        return _record(
            case, category, valid=False, problems=["import: " + p for p in import_errors]
        )
    calls: list[GroundTruthCall] = []
    if category not in NO_CALL_CATEGORIES:
        if answer is None:
            report.original_invalid.append((case_id, "no ground truth"))
            return _record(case, category, valid=False, problems=["original: no ground truth"])
        calls = [GroundTruthCall.from_bfcl(entry) for entry in answer["ground_truth"]]
    report.ground_truth_calls += len(calls)
    by_name = {tool.name: tool for tool in tools}
    original_problems: list[str] = []
    for index, call in enumerate(calls):
        tool = by_name.get(call.name)
        if tool is None:
            original_problems.append(f"call {index}: function '{call.name}' is not offered")
            continue
        original_problems += ground_truth_problems(tool, call)
    if original_problems:
        report.original_invalid.append((case_id, "; ".join(original_problems)))
        return _record(
            case, category, valid=False, problems=["original: " + p for p in original_problems]
        )
    texts = question_texts(case.get("question"))
    to_rewrite, keep = mentioned_names(texts, tools, calls)
    gold = gold_from_ground_truth(tools, calls, "\n".join(texts))
    try:
        example = augment(harness, gold, policy, seed, keep_names=keep)
    except AugmentationError as exc:
        report.augmentation_errors.append((case_id, str(exc)))
        return _record(case, category, valid=False, problems=["augment: " + str(exc)])
    report.augmented += 1
    mapping = example.mapping
    new_harness = example.harness
    new_calls = [call.remapped(mapping) for call in calls]
    problems: list[str] = []
    for index, new_call in enumerate(new_calls):
        new_tool = new_harness.tool(new_call.name)
        if new_tool is None:
            problems.append(f"call {index}: no function named {new_call.name}")
            continue
        problems += ground_truth_problems(new_tool, new_call)
    if [c.remapped(mapping.inverse()) for c in new_calls] != calls:
        problems.append("the inverse mapping does not restore the ground truth")
    offered = {tool.name for tool in new_harness.tools}
    problems += [
        f"function '{tool.name}' is no longer offered"
        for tool in tools
        if mapping.tool(tool.name) not in offered
    ]
    if policy.name_format == "python":
        problems += name_problems(new_harness)
    rewrites = {old: new for old, new in mapping.tool_renames.items() if old in to_rewrite}
    question = rewrite_question(case.get("question"), rewrites)
    problems += [
        f"the question still names the renamed function '{name}'"
        for name in stale_mentions(question_texts(question), mapping.tool_renames)
    ]
    valid = not problems
    if valid:
        report.valid += 1
    else:
        report.invalid_after_augmentation.append((case_id, "; ".join(problems)))
    report.tool_renamed += bool(mapping.tool_renames)
    report.params_renamed += any(mapping.param_renames.values())
    offered_tools = list(new_harness.tools)
    if judged_against_first_function(category) and new_calls:
        offered_tools = _truth_first(offered_tools, new_calls[0].name)
    report.distractor_tools_added += len(new_harness.tools) > len(tools)
    report.question_mentions_rewritten += bool(rewrites)
    report.names_kept_for_question += bool(keep)
    report.transforms.update(example.provenance["transforms"])
    provenance = {**example.provenance, "source": f"bfcl-eval BFCL_v4_{category}", "case": case_id}
    return _record(
        case,
        category,
        valid=valid,
        problems=problems,
        functions=[bfcl_function_from_tool(tool) for tool in offered_tools],
        question=question,
        ground_truth=[call.to_bfcl() for call in new_calls],
        mapping=mapping,
        provenance=provenance,
    )


def augment_bfcl(
    category: str = "live_simple",
    *,
    seed: int = 0,
    policy: AugmentationPolicy = BFCL_TOOL_SCHEMAS,
    data_dir: Path = DATA_DIR,
) -> tuple[list[dict[str, Any]], BfclAugmentReport]:
    """One record per case of ``category`` (file order), and the report."""
    cases, answers = load_category(category, data_dir)
    report = BfclAugmentReport(category=category)
    records = [
        augment_case(
            case,
            answers.get(str(case.get("id"))),
            category,
            seed=example_seed(seed, index, 0),
            policy=policy,
            report=report,
        )
        for index, case in enumerate(cases)
    ]
    return records, report


def iter_lines(records: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    for record in records:
        yield canonical_json(record) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m harness_app.hsa.bfcl_augment",
        description="Apply HSA tool-schema transforms to BFCL v4 single-turn categories and "
        "rewrite the ground truths.",
    )
    parser.add_argument("--category", default="live_simple", choices=[*CATEGORIES, "all"])
    parser.add_argument("--out", required=True, type=Path, help="JSONL file to write")
    parser.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    parser.add_argument(
        "--policy",
        default=BFCL_TOOL_SCHEMAS.name,
        choices=[name for name, p in POLICIES.items() if p.name_format == "python"],
    )
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    policy = POLICIES[args.policy]
    categories = CATEGORIES if args.category == "all" else (args.category,)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    summaries = []
    with args.out.open("w", encoding="utf-8") as handle:
        for category in categories:
            records, report = augment_bfcl(
                category, seed=args.seed, policy=policy, data_dir=args.data_dir
            )
            handle.writelines(iter_lines(records))
            summary = report.to_dict()
            summaries.append(summary)
            print(
                f"{category:<24} cases {report.cases:>5}  valid {report.valid:>5}  "
                f"refused {len(report.refusals()):>4}",
                file=sys.stderr,
            )
    print(
        json.dumps(
            {
                "out": str(args.out),
                "seed": args.seed,
                "policy": policy.name,
                "categories": summaries,
            },
            indent=2,
            ensure_ascii=False,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
