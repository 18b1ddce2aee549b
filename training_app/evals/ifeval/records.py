"""Reading IFEval's JSONL files: the prompts (``input_data.jsonl``) and responses
(``{"prompt", "response"}`` lines, the reference's own format), with errors that name the
file, the line and the field.

The reference reads both files with a bare ``json.loads`` per line and keys responses by
prompt text, so a duplicate silently replaces the earlier one; here a duplicate, an unknown
prompt or an instruction that cannot be built is refused before anything is scored.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from training_app.evals.ifeval.evaluation import InputExample
from training_app.evals.ifeval.instructions import InstructionArgumentError
from training_app.evals.ifeval.registry import INSTRUCTION_DICT, build_instruction

__all__ = ["InputDataError", "load_prompts", "parse_input_data", "parse_responses"]

_PREVIEW = 60


class InputDataError(ValueError):
    """A line of an input file that cannot be used."""

    def __init__(self, source: str, line: int, field: str | None, message: str) -> None:
        where = f"{source} line {line}" + (f", field '{field}'" if field else "")
        super().__init__(f"{where}: {message}")
        self.source = source
        self.line = line
        self.field = field
        self.message = message


def _preview(text: str) -> str:
    return repr(text if len(text) <= _PREVIEW else text[:_PREVIEW] + "...")


def _objects(lines: Iterable[str], source: str) -> Iterable[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise InputDataError(source, number, None, f"not valid JSON ({exc})") from None
        if not isinstance(value, dict):
            raise InputDataError(
                source, number, None, f"expected a JSON object, got {type(value).__name__}"
            )
        yield number, value


def _required(record: dict[str, Any], name: str, kind: type, source: str, line: int) -> Any:
    if name not in record:
        raise InputDataError(source, line, name, "missing")
    value = record[name]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InputDataError(
            source, line, name, f"expected {kind.__name__}, got {type(value).__name__}"
        )
    return value


def _input_example(record: dict[str, Any], source: str, line: int) -> InputExample:
    key = _required(record, "key", int, source, line)
    prompt = _required(record, "prompt", str, source, line)
    if not prompt.strip():
        raise InputDataError(source, line, "prompt", "empty")
    ids = _required(record, "instruction_id_list", list, source, line)
    kwargs = _required(record, "kwargs", list, source, line)
    if not ids:
        raise InputDataError(source, line, "instruction_id_list", "empty")
    for index, instruction_id in enumerate(ids):
        if instruction_id not in INSTRUCTION_DICT:
            raise InputDataError(
                source,
                line,
                f"instruction_id_list[{index}]",
                f"unknown instruction {instruction_id!r} (known: {', '.join(INSTRUCTION_DICT)})",
            )
    if len(kwargs) != len(ids):
        raise InputDataError(
            source,
            line,
            "kwargs",
            f"expected {len(ids)} objects (one per instruction), got {len(kwargs)}",
        )
    for index, arguments in enumerate(kwargs):
        if not isinstance(arguments, dict):
            raise InputDataError(
                source, line, f"kwargs[{index}]", f"expected an object, got {arguments!r}"
            )
    example = InputExample(
        key=key,
        instruction_id_list=tuple(ids),
        prompt=prompt,
        kwargs=tuple(dict(a) for a in kwargs),
    )
    for index, (instruction_id, arguments) in enumerate(zip(ids, kwargs, strict=True)):
        try:
            build_instruction(instruction_id, arguments)
        except InstructionArgumentError as exc:
            raise InputDataError(
                source, line, f"kwargs[{index}].{exc.argument}", f"{instruction_id}: {exc.message}"
            ) from None
    return example


def parse_input_data(lines: Iterable[str], source: str = "input data") -> tuple[InputExample, ...]:
    """Prompts from ``input_data.jsonl`` lines (``key``, ``prompt``, ``instruction_id_list``,
    ``kwargs``); every instruction is built once to check its arguments."""
    examples: list[InputExample] = []
    key_lines: dict[int, int] = {}
    prompt_lines: dict[str, int] = {}
    for line, record in _objects(lines, source):
        example = _input_example(record, source, line)
        if example.key in key_lines:
            raise InputDataError(
                source, line, "key", f"{example.key} repeats line {key_lines[example.key]}"
            )
        if example.prompt in prompt_lines:
            raise InputDataError(
                source,
                line,
                "prompt",
                f"repeats the prompt of line {prompt_lines[example.prompt]} "
                "(responses are matched to prompts by their text)",
            )
        key_lines[example.key] = line
        prompt_lines[example.prompt] = line
        examples.append(example)
    if not examples:
        raise InputDataError(source, 0, None, "no prompts")
    return tuple(examples)


def parse_responses(
    lines: Iterable[str], inputs: Sequence[InputExample], source: str = "responses"
) -> dict[str, str]:
    """``{"prompt", "response"}`` lines -> prompt text -> response, each prompt one of
    ``inputs`` and answered at most once."""
    known = {inp.prompt for inp in inputs}
    responses: dict[str, str] = {}
    seen: dict[str, int] = {}
    for line, record in _objects(lines, source):
        prompt = _required(record, "prompt", str, source, line)
        response = _required(record, "response", str, source, line)
        if prompt not in known:
            raise InputDataError(
                source, line, "prompt", f"not a prompt of the input data: {_preview(prompt)}"
            )
        if prompt in seen:
            raise InputDataError(
                source, line, "prompt", f"a second response to the prompt of line {seen[prompt]}"
            )
        seen[prompt] = line
        responses[prompt] = response
    return responses


def read_input_data(path: Path) -> tuple[InputExample, ...]:
    with path.open(encoding="utf-8") as f:
        return parse_input_data(f, str(path))


def read_responses(path: Path, inputs: Sequence[InputExample]) -> dict[str, str]:
    with path.open(encoding="utf-8") as f:
        return parse_responses(f, inputs, str(path))


@functools.cache
def load_prompts() -> tuple[InputExample, ...]:
    """The 541 IFEval prompts shipped with this package (``data/input_data.jsonl``)."""
    data = resources.files(__package__).joinpath("data", "input_data.jsonl")
    with data.open(encoding="utf-8") as f:
        return parse_input_data(f, "ifeval/data/input_data.jsonl")


def prompts_by_key(inputs: Sequence[InputExample]) -> Mapping[int, InputExample]:
    return {inp.key: inp for inp in inputs}
