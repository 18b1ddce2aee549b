# Copyright 2023 The Google Research Authors.
# Copyright 2026 HAT Console authors (modifications: see NOTICE).
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""Strict and loose verdicts and the four IFEval accuracies.

Ported from ``evaluation_lib.py`` of Google's instruction_following_eval (lm-eval 0.4.13's
``utils.py``). A response *follows* an instruction strictly when it is not blank and the
checker accepts it; loosely when the checker accepts any non-blank one of eight variants: the
response, without its first line, without its last line, without both, and each of those with
every ``*`` removed. Prompt-level accuracy is the share of prompts whose every instruction is
followed; instruction-level accuracy the share of all instructions followed.

Only speed differs from the reference: each prompt's checkers are built once for both modes,
a loose variant equal to an earlier one is not checked twice (checkers are pure functions of
the text), and text measurements are memoised (``text.clear_caches``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from training_app.evals.ifeval.instructions import Instruction
from training_app.evals.ifeval.registry import build_instruction


@dataclass(frozen=True)
class InputExample:
    """One IFEval prompt: its instructions and each one's arguments."""

    key: int
    instruction_id_list: tuple[str, ...]
    prompt: str
    kwargs: tuple[Mapping[str, Any], ...]

    def build_instructions(self) -> list[Instruction]:
        """The prompt's checkers (``InstructionArgumentError``/``UnknownInstruction`` when an
        instruction cannot be built)."""
        return [
            build_instruction(instruction_id, kwargs)
            for instruction_id, kwargs in zip(self.instruction_id_list, self.kwargs, strict=True)
        ]


@dataclass(frozen=True)
class OutputExample:
    """One prompt's verdicts in one mode (strict or loose)."""

    instruction_id_list: tuple[str, ...]
    prompt: str
    response: str
    follow_all_instructions: bool
    follow_instruction_list: tuple[bool, ...]

    def to_json_line(self) -> str:
        """The reference's result line: its writer emits the public attributes in ``dir()``
        order, i.e. sorted by name, with ``json.dumps`` defaults."""
        return json.dumps(
            {
                "follow_all_instructions": self.follow_all_instructions,
                "follow_instruction_list": list(self.follow_instruction_list),
                "instruction_id_list": list(self.instruction_id_list),
                "prompt": self.prompt,
                "response": self.response,
            }
        )


@dataclass(frozen=True)
class Accuracies:
    """IFEval's four accuracies, in [0, 1], over ``prompts`` prompts and ``instructions``
    instructions."""

    prompt_level_strict: float
    instruction_level_strict: float
    prompt_level_loose: float
    instruction_level_loose: float
    prompts: int
    instructions: int


@dataclass(frozen=True)
class IFEvalResult:
    """Per-prompt verdicts (in input order) in both modes, and the accuracies."""

    strict: tuple[OutputExample, ...]
    loose: tuple[OutputExample, ...]
    accuracies: Accuracies


def loose_variants(response: str) -> list[str]:
    """The reference's eight loose variants, in its order, each distinct one once."""
    r = response.split("\n")
    response_remove_first = "\n".join(r[1:]).strip()
    response_remove_last = "\n".join(r[:-1]).strip()
    response_remove_both = "\n".join(r[1:-1]).strip()
    all_responses = [
        response,
        response.replace("*", ""),
        response_remove_first,
        response_remove_last,
        response_remove_both,
        response_remove_first.replace("*", ""),
        response_remove_last.replace("*", ""),
        response_remove_both.replace("*", ""),
    ]
    return list(dict.fromkeys(all_responses))


def _output(inp: InputExample, response: str, verdicts: list[bool]) -> OutputExample:
    return OutputExample(
        instruction_id_list=inp.instruction_id_list,
        prompt=inp.prompt,
        response=response,
        follow_all_instructions=all(verdicts),
        follow_instruction_list=tuple(verdicts),
    )


def follow_strict(
    inp: InputExample, response: str, instructions: Sequence[Instruction] | None = None
) -> OutputExample:
    """Strict verdicts (the reference's ``test_instruction_following_strict``)."""
    checkers = inp.build_instructions() if instructions is None else instructions
    blank = not response.strip()
    verdicts = [not blank and checker.check_following(response) for checker in checkers]
    return _output(inp, response, verdicts)


def follow_loose(
    inp: InputExample, response: str, instructions: Sequence[Instruction] | None = None
) -> OutputExample:
    """Loose verdicts, an upper bound (the reference's ``test_instruction_following_loose``)."""
    checkers = inp.build_instructions() if instructions is None else instructions
    variants = [v for v in loose_variants(response) if v.strip()]
    verdicts = [any(checker.check_following(v) for v in variants) for checker in checkers]
    return _output(inp, response, verdicts)


def score_response(inp: InputExample, response: str) -> tuple[OutputExample, OutputExample]:
    """(strict, loose) verdicts of one response to one prompt."""
    checkers = inp.build_instructions()
    return (
        follow_strict(inp, response, checkers),
        follow_loose(inp, response, checkers),
    )


def accuracies(strict: Sequence[OutputExample], loose: Sequence[OutputExample]) -> Accuracies:
    """The four accuracies of per-prompt results (the same prompts in both modes)."""
    if not strict or len(strict) != len(loose):
        raise ValueError("accuracies need the same, non-empty list of prompts in both modes")

    def prompt_level(outputs: Iterable[OutputExample]) -> float:
        return sum(o.follow_all_instructions for o in outputs) / len(strict)

    def instruction_level(outputs: Iterable[OutputExample]) -> tuple[float, int]:
        flat = [v for o in outputs for v in o.follow_instruction_list]
        return (sum(flat) / len(flat) if flat else 0.0), len(flat)

    instruction_strict, count = instruction_level(strict)
    instruction_loose, _ = instruction_level(loose)
    return Accuracies(
        prompt_level_strict=prompt_level(strict),
        instruction_level_strict=instruction_strict,
        prompt_level_loose=prompt_level(loose),
        instruction_level_loose=instruction_loose,
        prompts=len(strict),
        instructions=count,
    )


def score(inputs: Sequence[InputExample], responses: Mapping[str, str]) -> IFEvalResult:
    """Score ``responses`` (prompt text -> response, as the reference's response file maps
    them) on every prompt of ``inputs``; a prompt without a response is a ``KeyError``, as in
    the reference."""
    missing = [inp.key for inp in inputs if inp.prompt not in responses]
    if missing:
        raise KeyError(f"no response for {len(missing)} prompt(s), keys {missing[:5]}")
    strict: list[OutputExample] = []
    loose: list[OutputExample] = []
    for inp in inputs:
        strict_out, loose_out = score_response(inp, responses[inp.prompt])
        strict.append(strict_out)
        loose.append(loose_out)
    return IFEvalResult(
        strict=tuple(strict), loose=tuple(loose), accuracies=accuracies(strict, loose)
    )
