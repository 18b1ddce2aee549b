"""``python -m training_app.evals.ifeval``: a real subprocess on files in a temp folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from training_app.evals.ifeval import load_prompts
from training_app.evals.ifeval.__main__ import main

ROOT = Path(__file__).resolve().parents[3]
PROMPTS = load_prompts()
# Two shipped prompts and one answer each that follows / breaks their instructions.
NO_COMMA = next(p for p in PROMPTS if p.instruction_id_list == ("punctuation:no_comma",))
LOWER = next(p for p in PROMPTS if p.instruction_id_list == ("change_case:english_lowercase",))


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "training_app.evals.ifeval", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _input_line(inp: object) -> dict[str, object]:
    return {
        "key": inp.key,  # type: ignore[attr-defined]
        "prompt": inp.prompt,  # type: ignore[attr-defined]
        "instruction_id_list": list(inp.instruction_id_list),  # type: ignore[attr-defined]
        "kwargs": [dict(k) for k in inp.kwargs],  # type: ignore[attr-defined]
    }


@pytest.fixture
def two_prompts(tmp_path: Path) -> Path:
    return _jsonl(tmp_path / "input_data.jsonl", [_input_line(NO_COMMA), _input_line(LOWER)])


def test_cli_writes_the_reference_result_lines_and_prints_the_accuracies(
    tmp_path: Path, two_prompts: Path
) -> None:
    # given: the comma prompt answered with a comma (fails strict and loose); the lowercase
    # prompt answered in lower case after a capitalised first line (fails strict, follows
    # loose once the first line is dropped)
    responses = _jsonl(
        tmp_path / "responses.jsonl",
        [
            {"prompt": NO_COMMA.prompt, "response": "Hark, a journey to Japan awaits thee."},
            {
                "prompt": LOWER.prompt,
                "response": "Sure! Here it is.\nthe weather was lovely and we walked by the "
                "river all afternoon talking about books and music.",
            },
        ],
    )
    # when
    done = _run("--input-data", two_prompts, "--responses", responses, "--out", tmp_path / "out")
    # then
    assert done.returncode == 0, done.stderr
    assert "IFEval: 2 prompts, 2 instructions" in done.stdout
    assert "prompt-level strict accuracy:      0.0000" in done.stdout
    assert "instruction-level strict accuracy: 0.0000" in done.stdout
    assert "prompt-level loose accuracy:       0.5000" in done.stdout
    assert "instruction-level loose accuracy:  0.5000" in done.stdout
    strict = (tmp_path / "out" / "eval_results_strict.jsonl").read_text("utf-8").splitlines()
    loose = (tmp_path / "out" / "eval_results_loose.jsonl").read_text("utf-8").splitlines()
    first = json.loads(strict[0])
    assert list(first) == [
        "follow_all_instructions",
        "follow_instruction_list",
        "instruction_id_list",
        "prompt",
        "response",
    ]
    assert first["prompt"] == NO_COMMA.prompt
    assert [json.loads(line)["follow_instruction_list"] for line in strict] == [[False], [False]]
    assert [json.loads(line)["follow_all_instructions"] for line in loose] == [False, True]


def test_cli_defaults_to_the_541_shipped_prompts_and_requires_every_response(
    tmp_path: Path,
) -> None:
    responses = _jsonl(
        tmp_path / "r.jsonl", [{"prompt": NO_COMMA.prompt, "response": "No commas here."}]
    )
    refused = _run("--responses", responses, "--out", tmp_path / "out")
    assert refused.returncode == 2
    assert "no response for 540 of 541 prompts" in refused.stderr
    assert not (tmp_path / "out").exists()

    partial = _run("--responses", responses, "--out", tmp_path / "out", "--allow-missing")
    assert partial.returncode == 0, partial.stderr
    assert "IFEval: 1 prompts, 1 instructions" in partial.stdout
    assert "(540 prompts without a response were not scored)" in partial.stdout


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"prompt": "x", "response": "y"'], "responses.jsonl line 1: not valid JSON"),
        (['["a list"]'], "responses.jsonl line 1: expected a JSON object, got list"),
        (
            ["", '{"response": "y"}'],
            "responses.jsonl line 2, field 'prompt': missing",
        ),
        (
            ['{"prompt": "PROMPT", "response": 3}'],
            "responses.jsonl line 1, field 'response': expected str, got int",
        ),
        (
            ['{"prompt": "Write a haiku.", "response": "y"}'],
            "responses.jsonl line 1, field 'prompt': not a prompt of the input data: "
            "'Write a haiku.'",
        ),
        (
            ['{"prompt": "PROMPT", "response": "a"}', '{"prompt": "PROMPT", "response": "b"}'],
            "responses.jsonl line 2, field 'prompt': a second response to the prompt of line 1",
        ),
    ],
)
def test_cli_names_the_line_and_field_of_a_bad_response_file(
    tmp_path: Path,
    two_prompts: Path,
    lines: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # in process (main), to keep the suite quick; the subprocess path is tested above/below
    text = "\n".join(lines).replace("PROMPT", json.dumps(NO_COMMA.prompt)[1:-1]) + "\n"
    responses = tmp_path / "responses.jsonl"
    responses.write_text(text, encoding="utf-8")
    code = main(
        ["--input-data", str(two_prompts), "--responses", str(responses), "--out", str(tmp_path)]
    )
    captured = capsys.readouterr()
    assert code == 2
    assert message in captured.err
    assert captured.out == ""
    assert not (tmp_path / "eval_results_strict.jsonl").exists()


def test_cli_refuses_a_bad_input_data_file(tmp_path: Path) -> None:
    line = _input_line(NO_COMMA) | {"kwargs": [{"num_words": 0}]}
    data = _jsonl(tmp_path / "input.jsonl", [line])
    responses = _jsonl(tmp_path / "r.jsonl", [{"prompt": NO_COMMA.prompt, "response": "y"}])
    done = _run("--input-data", data, "--responses", responses, "--out", tmp_path / "out")
    assert done.returncode == 2
    assert (
        "input.jsonl line 1, field 'kwargs[0].num_words': punctuation:no_comma: not an argument "
        "of this instruction (it takes: none)"
    ) in done.stderr


def test_cli_reports_a_missing_file(tmp_path: Path) -> None:
    done = _run("--responses", tmp_path / "absent.jsonl", "--out", tmp_path / "out")
    assert done.returncode == 2
    assert "absent.jsonl: No such file or directory" in done.stderr
