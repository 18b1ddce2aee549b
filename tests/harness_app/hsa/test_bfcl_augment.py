"""BFCL v4 single-turn categories under tool-schema HSA, checked independently of the engine.

Every record marked valid is re-checked by ``bfcl_rule.record_problems`` (its own JSON Schema
conversion, ``jsonschema``, and a re-implementation of BFCL's ast_checker rules), so the
engine's verifier is never the judge of its own output.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness_app.harness.bfcl import tool_from_bfcl
from harness_app.harness.model import Harness, Tool
from harness_app.hsa.augment import augment, example_seed
from harness_app.hsa.bfcl_augment import (
    BfclAugmentReport,
    GroundTruthCall,
    augment_case,
    gold_from_ground_truth,
    ground_truth_problems,
    main,
    mentioned_names,
)
from harness_app.hsa.bfcl_data import CATEGORIES, load_category
from harness_app.hsa.mapping import RenameMapping
from harness_app.hsa.naming import (
    NamingContext,
    candidate_name,
    cut_at_word_boundary,
    is_python_param_name,
    is_python_tool_name,
    tokens,
    using_naming,
)
from harness_app.hsa.policy import (
    BFCL_TOOL_SCHEMAS,
    BFCL_TOOL_SCHEMAS_HELDOUT,
    AugmentationPolicy,
)
from harness_app.hsa.transforms.tool_schemas import distractor_may_answer
from harness_app.hsa.verify import mapping_problems
from tests.harness_app.hsa.bfcl_rule import record_problems

# Ground truths BFCL itself gets wrong, per category (the same for every seed): a value
# outside its own enum or of the wrong type, a parameter the function does not have, a
# required parameter with no acceptable value.
ORIGINAL_INVALID = {
    "simple_python": 3,
    "multiple": 1,
    "parallel": 1,
    "parallel_multiple": 7,
    "live_simple": 2,
    "live_multiple": 31,
    "live_parallel": 0,
    "live_parallel_multiple": 1,
    "irrelevance": 0,
    "live_irrelevance": 0,
}
SEEDS = range(5)
# BFCL judges a single-call category against the first offered function (ast_checker.py:57-61
# of bfcl-eval 2026.3.23, see test_bfcl_official_agreement.py); the engine still puts
# distractor tools before the ground-truth function there. Reported to the lead; strict, so
# the marker goes as soon as the engine is fixed.
_FIRST_FUNCTION_BUG = pytest.mark.xfail(
    strict=True, reason="simple categories: a distractor before the ground-truth function"
)
SWEPT = [
    pytest.param(c, marks=_FIRST_FUNCTION_BUG) if c in ("simple_python", "live_simple") else c
    for c in CATEGORIES
]


def _sweep(category: str, policy: AugmentationPolicy, *, stride: bool) -> BfclAugmentReport:
    """Augment the category (with ``stride``, case i only under seed i % 5, so every case
    and every seed is covered once) and check every record independently."""
    cases, answers = load_category(category)
    report = BfclAugmentReport(category=category)
    checked = 0
    for seed in SEEDS:
        for index, case in enumerate(cases):
            if stride and index % len(SEEDS) != seed:
                continue
            answer = answers.get(case["id"])
            record = augment_case(
                case,
                answer,
                category,
                seed=example_seed(seed, index, 0),
                policy=policy,
                report=report,
            )
            record = json.loads(json.dumps(record))
            if record["valid"]:
                assert record["problems"] == []
                assert record_problems(record, case, answer) == [], (case["id"], seed)
                checked += 1
            else:
                assert record["problems"], case["id"]  # every refusal carries its reason
    assert checked == report.valid
    return report


@pytest.mark.parametrize("category", SWEPT)
def test_every_category_augments_and_every_valid_record_passes_the_independent_check(
    category: str,
) -> None:
    report = _sweep(category, BFCL_TOOL_SCHEMAS, stride=True)
    cases = len(load_category(category)[0])
    assert report.cases == cases
    assert report.import_failures == []
    assert len(report.original_invalid) == ORIGINAL_INVALID[category]
    assert report.augmentation_errors == report.invalid_after_augmentation == []
    assert report.valid == cases - ORIGINAL_INVALID[category]


@pytest.mark.slow
@pytest.mark.parametrize("policy", [BFCL_TOOL_SCHEMAS, BFCL_TOOL_SCHEMAS_HELDOUT])
@pytest.mark.parametrize("category", SWEPT)
def test_full_five_seed_sweep(category: str, policy: AugmentationPolicy) -> None:
    report = _sweep(category, policy, stride=False)
    assert len(report.original_invalid) == len(SEEDS) * ORIGINAL_INVALID[category]
    assert report.augmentation_errors == report.invalid_after_augmentation == []


def test_held_out_policy_sample_passes_the_independent_check() -> None:
    report = _sweep("live_parallel_multiple", BFCL_TOOL_SCHEMAS_HELDOUT, stride=True)
    assert report.valid == 23
    assert all(name.startswith("tool_schemas.") for name in report.transforms)


def test_records_keep_every_function_and_every_call() -> None:
    """live_multiple_2-1-0 used to lose uber.ride2; parallel_0 used to keep one of two calls."""
    records = {}
    for category, case_id in (("live_multiple", "live_multiple_2-1-0"), ("parallel", "parallel_0")):
        cases, answers = load_category(category)
        case = next(c for c in cases if c["id"] == case_id)
        records[case_id] = augment_case(
            case,
            answers[case_id],
            category,
            seed=1,
            policy=BFCL_TOOL_SCHEMAS,
            report=BfclAugmentReport(),
        )
    multi = records["live_multiple_2-1-0"]
    renames = multi["mapping"]["tool_renames"]
    offered = {f["name"] for f in multi["function"]}
    assert {renames.get(n, n) for n in ("uber.ride", "uber.ride2")} <= offered
    parallel = records["parallel_0"]
    assert len(parallel["ground_truth"]) == 2 and parallel["valid"]
    artists = [next(iter(call.values())) for call in parallel["ground_truth"]]
    assert sorted(str(a) for args in artists for a in args.values()) == sorted(
        ["['Taylor Swift']", "[20]", "['Maroon 5']", "[15]"]
    )


# ------------------------------------------------------------------ ground-truth rules


def _tool(properties: dict[str, Any], required: list[str]) -> Tool:
    return tool_from_bfcl(
        {
            "name": "sculpture.create",
            "description": "Make a sculpture.",
            "parameters": {"type": "dict", "properties": properties, "required": required},
        }
    )


def test_a_value_outside_its_own_enum_is_refused_with_the_reason() -> None:
    tool = _tool({"material": {"type": "string", "enum": ["Bronze", "Marble"]}}, ["material"])
    problems = ground_truth_problems(
        tool, GroundTruthCall("sculpture.create", {"material": ["bronze"]})
    )
    assert problems and "'bronze' is not accepted" in problems[0]


def test_empty_string_means_may_be_omitted_also_on_required_parameters() -> None:
    tool = _tool(
        {
            "size": {"type": "integer", "default": 3},
            "unit": {"type": "string", "enum": ["cm", "m"], "default": "cm"},
            "note": {"type": "string"},
        },
        ["size", "unit"],
    )
    call = GroundTruthCall("sculpture.create", {"size": ["", 3], "unit": ["cm", ""], "note": [""]})
    assert ground_truth_problems(tool, call) == []
    gold = gold_from_ground_truth([tool], [call])
    # required arguments are never dropped, even when their first option is "" or the default
    assert gold.tool_calls[0].arguments == {"size": 3, "unit": "cm"}
    only_empty = GroundTruthCall("sculpture.create", {"size": [""], "unit": ["m"]})
    assert any("no acceptable value" in p for p in ground_truth_problems(tool, only_empty))
    empty_list = GroundTruthCall("sculpture.create", {"size": [], "unit": ["m"]})
    assert any("no acceptable value" in p for p in ground_truth_problems(tool, empty_list))
    missing = GroundTruthCall("sculpture.create", {"unit": ["m"]})
    assert any("does not list it" in p for p in ground_truth_problems(tool, missing))


def test_unknown_parameter_and_nested_values_are_checked() -> None:
    tool = _tool(
        {
            "body": {
                "type": "dict",
                "properties": {"mode": {"type": "string", "enum": ["COOL", "DRY"]}},
                "required": ["mode"],
            }
        },
        ["body"],
    )
    assert (
        ground_truth_problems(
            tool, GroundTruthCall("sculpture.create", {"body": [{"mode": ["DRY"]}]})
        )
        == []
    )
    bad = GroundTruthCall("sculpture.create", {"body": [{"mode": ["HOT"]}]})
    assert any("'HOT' is not accepted" in p for p in ground_truth_problems(tool, bad))
    unknown = GroundTruthCall("sculpture.create", {"body": [{"mode": ["DRY"]}], "speed": [1]})
    assert any("not a parameter" in p for p in ground_truth_problems(tool, unknown))
    renamed = unknown.remapped(
        RenameMapping(
            tool_renames={"sculpture.create": "makeSculpture"},
            param_renames={"sculpture.create": {"speed": "pace"}},
        )
    )
    assert renamed == GroundTruthCall("makeSculpture", {"body": [{"mode": ["DRY"]}], "pace": [1]})


# ------------------------------------------------------------------------ name legality


def test_python_name_rules() -> None:
    assert is_python_tool_name("uber.ride2") and is_python_tool_name("Movies_3_FindMovies")
    for bad in ("get-weather", "uber.3ride", "class.get", "a" * 65, "wéather", "a..b"):
        assert not is_python_tool_name(bad), bad
    assert is_python_param_name("max_results") and not is_python_param_name("max-results")
    assert not is_python_param_name("from")


def test_python_format_renames_are_always_legal_and_cut_at_word_boundaries() -> None:
    rng = random.Random(0)
    names = ["get-weather", "uber.ride", "aws.lexv2_models.list_exports", "Movies_3_FindMovies"]
    names.append("retrieve_" + "_".join(["extraordinarily_long_parameter"] * 3))
    with using_naming(NamingContext(name_format="python")):
        for _ in range(300):
            for name in names:
                for mode in ("synonym", "style", "random", "translate"):
                    for split in ("train", "heldout"):
                        tool = candidate_name(name, "tool", mode, split, rng)  # type: ignore[arg-type]
                        param = candidate_name(name, "param", mode, split, rng)  # type: ignore[arg-type]
                        assert len(tool) <= 64 and len(param) <= 64
                        assert "-" not in tool and "-" not in param
                        assert param.isidentifier()
    assert cut_at_word_boundary("fetch_weather_forecast_data", 20) == "fetch_weather"
    assert cut_at_word_boundary("fetchWeatherForecastData", 19) == "fetchWeather"
    assert cut_at_word_boundary("short", 20) == "short"


# ------------------------------------------------------------------ renames never collide


def test_a_freed_parameter_name_is_never_added_back() -> None:
    """live_multiple_20-4-12, seed 1: `max_results` renamed to `maxResults`, then
    optional_params added a new `max_results`, so two names mapped back to one."""
    tool = tool_from_bfcl(
        {
            "name": "search_items",
            "description": "Search.",
            "parameters": {
                "type": "dict",
                "properties": {"max_results": {"type": "integer"}, "q": {"type": "string"}},
                "required": ["q"],
            },
        }
    )
    harness = Harness(tools=(tool,))
    call = GroundTruthCall("search_items", {"q": ["shoes"], "max_results": [5]})
    gold = gold_from_ground_truth([tool], [call])
    policy = AugmentationPolicy(
        name="collide",
        weights=(),
        k=0,
        always=("tool_schemas.rename_params", "tool_schemas.optional_params"),
        name_format="python",
    )
    renamed_away = 0
    for seed in range(300):
        example = augment(harness, gold, policy, seed)
        new_name = example.mapping.param("search_items", "max_results")
        properties = set(example.harness.tools[0].input_schema["properties"])
        if new_name != "max_results":
            renamed_away += 1
            assert "max_results" not in properties, seed
    assert renamed_away > 50


def test_the_verifier_catches_a_mapping_that_is_not_one_to_one() -> None:
    original = Harness(
        tools=(
            Tool("a_tool", "A.", {"type": "object", "properties": {"max_results": {}}}),
            Tool("b_tool", "B.", {"type": "object", "properties": {}}),
        )
    )
    collided = Harness(
        tools=(
            Tool(
                "a_tool",
                "A.",
                {"type": "object", "properties": {"maxResults": {}, "max_results": {}}},
            ),
            Tool("b_tool", "B.", {"type": "object", "properties": {}}),
        )
    )
    mapping = RenameMapping(param_renames={"a_tool": {"max_results": "maxResults"}})
    assert any("not one-to-one" in p for p in mapping_problems(original, collided, mapping))
    merged = RenameMapping(tool_renames={"a_tool": "c_tool", "b_tool": "c_tool"})
    assert any("same name" in p for p in mapping_problems(original, collided, merged))
    added = Harness(tools=(*collided.tools, Tool("d_tool", "D.")))
    renamed = RenameMapping(tool_renames={"a_tool": "d_tool", "b_tool": "a_tool"})
    assert mapping_problems(original, added, renamed)


# ------------------------------------------------------------------ question consistency


def _case(question: str, functions: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "t_0",
        "question": [[{"role": "user", "content": question}]],
        "function": functions,
    }


_LIST_FILES = {
    "name": "list_files",
    "description": "List files in a folder.",
    "parameters": {
        "type": "dict",
        "properties": {"folder_path": {"type": "string"}, "file_type": {"type": "string"}},
        "required": ["folder_path"],
    },
}


def test_a_mentioned_function_is_rewritten_and_a_mentioned_parameter_is_kept() -> None:
    case = _case("Use list_files with folder_path set to /tmp.", [_LIST_FILES])
    answer = {"ground_truth": [{"list_files": {"folder_path": ["/tmp"], "file_type": [""]}}]}
    rewritten = 0
    for seed in range(20):
        record = augment_case(
            case, answer, "t", seed=seed, policy=BFCL_TOOL_SCHEMAS, report=BfclAugmentReport()
        )
        assert record["valid"], record["problems"]
        text = record["question"][0][0]["content"]
        new_name = record["mapping"]["tool_renames"].get("list_files", "list_files")
        assert f"Use {new_name} with folder_path" in text
        assert "folder_path" not in record["mapping"]["param_renames"].get("list_files", {})
        rewritten += new_name != "list_files"
    assert rewritten == 20


def test_a_name_that_is_also_an_argument_value_or_written_in_another_case_is_kept() -> None:
    tools = [tool_from_bfcl(_LIST_FILES)]
    in_value = [GroundTruthCall("list_files", {"folder_path": ["list_files"]})]
    assert mentioned_names(["run list_files"], tools, in_value) == (
        frozenset(),
        frozenset({"list_files"}),
    )
    calls = [GroundTruthCall("list_files", {"folder_path": ["/"]})]
    assert mentioned_names(["Functions: ['LIST_FILES']"], tools, calls)[1] == {"list_files"}
    add = [tool_from_bfcl({**_LIST_FILES, "name": "add"})]
    assert mentioned_names(["Functions to use: ['add', 'sub']"], add, [])[1] == {"add"}
    assert mentioned_names(["add two numbers"], add, []) == (frozenset(), frozenset())


def _distractors_added(function: dict[str, Any], question: str, call: GroundTruthCall) -> set[str]:
    tool = tool_from_bfcl(function)
    gold = gold_from_ground_truth([tool], [call], question)
    policy = AugmentationPolicy(
        name="distract", weights=(), k=0, always=("tool_schemas.unseen_distractor_tools",)
    )
    names: set[str] = set()
    for seed in range(60):
        example = augment(Harness(tools=(tool,)), gold, policy, seed)
        names |= {"_".join(tokens(t.name)) for t in example.harness.tools if t.name != tool.name}
    return names


def test_a_distractor_that_could_answer_the_question_is_never_added() -> None:
    """Seen: a held-out weather distractor beside a weather question whose gold accepts only
    Weather_1_GetWeather."""
    params = {"type": "dict", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    weather = {"name": "Weather_1_GetWeather", "description": "Weather.", "parameters": params}
    music = {"name": "Music_3_PlayMedia", "description": "Play.", "parameters": params}
    near_weather = _distractors_added(
        weather,
        "What is the weather in Paris?",
        GroundTruthCall(weather["name"], {"city": ["Paris"]}),
    )
    elsewhere = _distractors_added(
        music, "Play jazz in Paris.", GroundTruthCall(music["name"], {"city": ["Paris"]})
    )
    assert "obtain_forecast" in elsewhere  # the rule, not chance, keeps it away
    assert "obtain_forecast" not in near_weather and near_weather
    gold = gold_from_ground_truth([], [], "Will it rain in Paris tomorrow? Check the weather.")
    assert distractor_may_answer("obtain_forecast", "Return the weather forecast.", Harness(), gold)
    assert not distractor_may_answer("book_studio", "Reserve the live studio.", Harness(), gold)


# -------------------------------------------------------------------- held-out renames


@pytest.mark.parametrize("mode", ["translate", "synonym"])
def test_held_out_renames_change_a_word_in_at_least_80_percent_of_live_multiple_functions(
    mode: str,
) -> None:
    cases, _answers = load_category("live_multiple")
    names = [function["name"] for case in cases for function in case["function"]]
    rng = random.Random(0)
    with using_naming(NamingContext(name_format="python")):
        changed = sum(
            set(tokens(candidate_name(name, "tool", mode, "heldout", rng))) != set(tokens(name))  # type: ignore[arg-type]
            for name in names
        )
    assert changed / len(names) >= 0.8, changed / len(names)


# --------------------------------------------------------------------------- CLI


def test_cli_writes_one_record_per_case_and_is_reproducible(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert main(["--category", "live_parallel", "--seed", "5", "--out", str(first)]) == 0
    assert main(["--category", "live_parallel", "--seed", "5", "--out", str(second)]) == 0
    assert first.read_bytes() == second.read_bytes()
    records = [json.loads(line) for line in first.read_text("utf-8").splitlines()]
    assert len(records) == 16 and all(
        r["valid"] and r["category"] == "live_parallel" for r in records
    )
    assert {"question", "function", "ground_truth", "mapping", "provenance", "problems"} <= set(
        records[0]
    )
    assert records[0]["provenance"]["policy"] == "bfcl-tool-schemas"


# ------------------------------------------------------------------ property tests

_TYPES = ("string", "integer", "float", "boolean", "array")
_WORDS = ("get", "find", "movie", "hotel", "weather", "city", "date", "play", "music", "book")


def _value(kind: str, rng: random.Random) -> Any:
    if kind == "string":
        return "".join(rng.choice(string.ascii_letters) for _ in range(rng.randint(1, 6)))
    if kind == "integer":
        return rng.randint(-5, 50)
    if kind == "float":
        return rng.choice([0.5, 1.25, 3.0])
    if kind == "boolean":
        return rng.random() < 0.5
    return [_value("string", rng) for _ in range(rng.randint(0, 2))]


@st.composite
def bfcl_cases(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    rng = random.Random(draw(st.integers(0, 10**6)))
    functions = []
    used: set[str] = set()
    for index in range(draw(st.integers(1, 4))):
        words = rng.sample(_WORDS, rng.randint(1, 3))
        name = rng.choice(["_", "."]).join(words) + f"_{index}"
        used.add(name)
        properties: dict[str, Any] = {}
        for p in range(rng.randint(1, 4)):
            kind = rng.choice(_TYPES)
            spec: dict[str, Any] = {"type": kind, "description": f"The {rng.choice(_WORDS)}."}
            if kind == "array":
                spec["items"] = {"type": "string"}
            if kind == "string" and rng.random() < 0.3:
                spec["enum"] = ["Alpha", "Beta", "Gamma"]
            properties[f"{rng.choice(_WORDS)}_{p}"] = spec
        required = [n for n in properties if rng.random() < 0.6]
        functions.append(
            {
                "name": name,
                "description": f"{' '.join(words).capitalize()} things.",
                "parameters": {"type": "dict", "properties": properties, "required": required},
            }
        )
    calls = []
    for _ in range(draw(st.integers(0, 3))):
        function = rng.choice(functions)
        params: dict[str, list[Any]] = {}
        for name, spec in function["parameters"]["properties"].items():
            is_required = name in function["parameters"]["required"]
            if not is_required and rng.random() < 0.3:
                continue
            value = rng.choice(spec["enum"]) if "enum" in spec else _value(spec["type"], rng)
            options = [value]
            if rng.random() < 0.4:
                options.insert(rng.randint(0, 1), "")  # may be omitted (required too)
            params[name] = options
        calls.append({function["name"]: params})
    case = {
        "id": "gen_0",
        "question": [[{"role": "user", "content": "Do it."}]],
        "function": functions,
    }
    return case, {"id": "gen_0", "ground_truth": calls}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    bfcl_cases(),
    st.integers(0, 2**32),
    st.sampled_from([BFCL_TOOL_SCHEMAS, BFCL_TOOL_SCHEMAS_HELDOUT]),
)
def test_generated_multi_function_and_parallel_cases(
    generated: tuple[dict[str, Any], dict[str, Any]], seed: int, policy: AugmentationPolicy
) -> None:
    case, answer = generated
    category = "parallel_multiple" if answer["ground_truth"] else "irrelevance"
    record = augment_case(
        case,
        answer if answer["ground_truth"] else None,
        category,
        seed=seed,
        policy=policy,
        report=BfclAugmentReport(),
    )
    assert record["valid"], record["problems"]
    assert record_problems(json.loads(json.dumps(record)), case, answer) == []
    assert len(record["ground_truth"]) == len(answer["ground_truth"])
