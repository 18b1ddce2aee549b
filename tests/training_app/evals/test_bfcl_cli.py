"""``python -m training_app.evals.bfcl``: the output it writes, and bad input refused with exit
status 2, a message naming the file, line and field, and nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from training_app.evals.bfcl.__main__ import main
from training_app.evals.bfcl.cases import MAX_LINE_BYTES

ROOT = Path(__file__).resolve().parents[3]
# simple_python_0 asks for calculate_triangle_area(base=10, height=5[, unit='units'])
RIGHT = "[calculate_triangle_area(base=10, height=5)]"


def nested_lists(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
        "utf-8",
    )
    return path


def run(tmp_path: Path, lines: list[Any], *extra: str) -> tuple[int, Path]:
    results = write_lines(tmp_path / "results.jsonl", lines)
    out = tmp_path / "out" / "scores.jsonl"
    code = main(
        ["--category", "simple_python", "--results", str(results), "--out", str(out), *extra]
    )
    return code, out


def test_scores_are_written_per_result_in_input_order(tmp_path: Path, capsys: Any) -> None:
    code, out = run(
        tmp_path,
        [
            {"id": "simple_python_0", "result": RIGHT},
            {"id": "simple_python_1", "result": "I do not know."},
            {"id": "simple_python_2", "result": [], "latency": 1.2},
        ],
    )

    assert code == 0
    lines = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert [(line["id"], line["valid"], line["error_type"]) for line in lines] == [
        ("simple_python_0", True, None),
        ("simple_python_1", False, "ast_decoder:decoder_failed"),
        ("simple_python_2", False, "simple_function_checker:wrong_count"),
    ]
    assert lines[0]["error"] is None
    assert lines[1]["error"].startswith("undecodable output: not Python call syntax")
    printed = capsys.readouterr().out
    assert "simple_python: accuracy 0.3333 (1 of 3 results valid)" in printed
    assert "note: 397 of the 400 cases have no result" in printed


BAD_INPUTS = [
    (
        ['{"id": "simple_python_0", "result": [}'],
        "line 1: not valid JSON (Expecting value at column",
    ),
    ([{"result": RIGHT}], "line 1: missing field 'id'"),
    ([{"id": 7, "result": RIGHT}], "line 1: field 'id' must be a string, got 7"),
    ([{"id": "simple_python_0"}], "line 1: missing field 'result'"),
    ([["simple_python_0", RIGHT]], "line 1: expected a JSON object with fields 'id' and 'result'"),
    (
        [{"id": "parallel_0", "result": RIGHT}],
        "line 1: field 'id': unknown id 'parallel_0' for category simple_python in the shipped "
        "BFCL v4 data (ids look like 'simple_python_0')",
    ),
    (
        [{"id": "simple_python_0", "result": RIGHT}, "", {"id": "simple_python_0", "result": "[]"}],
        "line 3: field 'id': duplicate id 'simple_python_0' (first on line 1)",
    ),
    (
        [{"id": "simple_python_0", "result": nested_lists(70)}],
        "line 1: field 'result"
        + "[0]" * 63
        + "' is nested deeper than 64 levels of arrays/objects",
    ),
    (
        ['{"id": "simple_python_0", "result": ' + "[" * 100_000 + "]" * 100_000 + "}"],
        "line 1: field 'result" + "[0]" * 63 + "' is nested deeper than 64 levels",
    ),
    (
        [{"id": "simple_python_0", "result": "x" * MAX_LINE_BYTES}],
        f"line 1: {MAX_LINE_BYTES + 40:,} bytes; a line may hold at most {MAX_LINE_BYTES:,}",
    ),
    ([], "no results (expected JSON lines with 'id')"),
]


@pytest.mark.parametrize(("lines", "message"), BAD_INPUTS)
def test_bad_results_are_refused_naming_line_and_field(
    tmp_path: Path, capsys: Any, lines: list[Any], message: str
) -> None:
    code, out = run(tmp_path, lines)

    assert code == 2
    err = capsys.readouterr().err
    assert f"error: results {tmp_path / 'results.jsonl'} {message}" in err or (
        not lines and f"error: results {tmp_path / 'results.jsonl'}: {message}" in err
    ), err
    assert not out.exists()


def test_reading_stops_at_a_line_that_is_not_json(tmp_path: Path, capsys: Any) -> None:
    code, _ = run(tmp_path, [{"result": RIGHT}, "{", {"id": "nope", "result": "[]"}])
    # (nothing after a line that is not JSON can be trusted to be where it should be)
    assert code == 2
    err = capsys.readouterr().err.splitlines()
    assert [line.split(" line ")[1][:2] for line in err] == ["1:", "2:"]


def test_problems_of_parsed_lines_are_all_listed(tmp_path: Path, capsys: Any) -> None:
    code, _ = run(
        tmp_path, [{"result": RIGHT}, {"id": "nope", "result": "[]"}, {"id": "simple_python_1"}]
    )
    assert code == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3
    assert ["line 1:" in err[0], "line 2:" in err[1], "line 3:" in err[2]] == [True] * 3


def test_an_unknown_category_is_refused(tmp_path: Path, capsys: Any) -> None:
    results = write_lines(tmp_path / "r.jsonl", [{"id": "x", "result": "[]"}])
    with pytest.raises(SystemExit) as exit_info:
        main(["--category", "simple_java", "--results", str(results), "--out", "o.jsonl"])
    assert exit_info.value.code == 2
    assert "argument --category: invalid choice: 'simple_java'" in capsys.readouterr().err


def augmented_set(tmp_path: Path, records: list[Any]) -> Path:
    return write_lines(tmp_path / "augmented.jsonl", records)


def record(record_id: str, **fields: Any) -> dict[str, Any]:
    function = {
        "name": "area_v2",
        "parameters": {"type": "dict", "properties": {"b": {"type": "integer"}}, "required": ["b"]},
    }
    return {
        "id": record_id,
        "category": "simple_python",
        "function": [function],
        "ground_truth": [{"area_v2": {"b": [10]}}],
        "valid": True,
        "problems": [],
    } | fields


def test_an_augmented_set_is_scored_on_its_own_functions(tmp_path: Path, capsys: Any) -> None:
    records = augmented_set(
        tmp_path,
        [
            record("simple_python_0-hsa"),
            record("multiple_0-hsa", category="multiple"),  # another category: skipped
            record("simple_python_1-hsa", valid=False, function=None, problems=["outside enum"]),
        ],
    )
    code, out = run(
        tmp_path,
        [{"id": "simple_python_0-hsa", "result": "area_v2(b=10)"}],
        "--augmented",
        str(records),
    )
    assert code == 0
    assert json.loads(out.read_text("utf-8"))["valid"] is True
    assert "against the augmented set" in capsys.readouterr().out

    code, out = run(
        tmp_path, [{"id": "simple_python_1-hsa", "result": "[]"}], "--augmented", str(records)
    )
    assert code == 2
    assert (
        "line 1: field 'id': 'simple_python_1-hsa' is a record bfcl_augment refused "
        "(outside enum); it has no functions to score against"
    ) in capsys.readouterr().err


@pytest.mark.parametrize(
    ("records", "message"),
    [
        (
            [record("a", function="nope")],
            "line 1: field 'function' must be an array of function docs",
        ),
        ([record("a", ground_truth=[{"f": [1]}])], "line 1: field 'ground_truth' must be an array"),
        ([record("a", ground_truth=[])], "line 1: field 'ground_truth' is empty"),
        ([record("a", category="simple")], "line 1: field 'category' is 'simple'; one of"),
        ([record("a"), record("a")], "line 2: field 'id': duplicate id 'a' (first on line 1)"),
        ([record("a", valid="yes")], "line 1: field 'valid' must be true or false"),
        ([{"category": "simple_python"}], "line 1: field 'id' must be a non-empty string"),
        (["{oops"], "line 1: not valid JSON"),
        (
            [record("a", category="parallel")],
            "no record of category simple_python (categories: parallel)",
        ),
    ],
)
def test_a_bad_augmented_set_is_refused(
    tmp_path: Path, capsys: Any, records: list[Any], message: str
) -> None:
    path = augmented_set(tmp_path, records)
    code, out = run(tmp_path, [{"id": "a", "result": "[]"}], "--augmented", str(path))
    assert code == 2
    err = capsys.readouterr().err
    assert f"augmented set {path}" in err
    assert message in err
    assert not out.exists()


def test_the_command_exits_2_with_the_message(tmp_path: Path) -> None:
    results = write_lines(
        tmp_path / "results.jsonl", [{"id": "simple_python_0", "result": RIGHT}] * 2
    )
    run_ = subprocess.run(
        [
            *(sys.executable, "-m", "training_app.evals.bfcl", "--category", "simple_python"),
            *("--results", str(results), "--out", str(tmp_path / "out.jsonl")),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert run_.returncode == 2
    assert run_.stderr == (
        f"error: results {results} line 2: field 'id': duplicate id 'simple_python_0' "
        "(first on line 1)\n"
    )
    assert not (tmp_path / "out.jsonl").exists()
