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

"""Registry of the instructions (the reference's ``instructions_registry.INSTRUCTION_DICT``),
and building a checker from a prompt's arguments the way the reference's evaluation does.

The reference's INSTRUCTION_CONFLICTS table serves prompt generation only and is not ported.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from training_app.evals.ifeval import instructions
from training_app.evals.ifeval.instructions import Instruction, InstructionArgumentError

_KEYWORD = "keywords:"
_LANGUAGE = "language:"
_LENGTH = "length_constraints:"
_CONTENT = "detectable_content:"
_FORMAT = "detectable_format:"
_COMBINATION = "combination:"
_STARTEND = "startend:"
_CHANGE_CASES = "change_case:"
_PUNCTUATION = "punctuation:"

INSTRUCTION_DICT: Mapping[str, type[Instruction]] = MappingProxyType(
    {
        _KEYWORD + "existence": instructions.KeywordChecker,
        _KEYWORD + "frequency": instructions.KeywordFrequencyChecker,
        _KEYWORD + "forbidden_words": instructions.ForbiddenWords,
        _KEYWORD + "letter_frequency": instructions.LetterFrequencyChecker,
        _LANGUAGE + "response_language": instructions.ResponseLanguageChecker,
        _LENGTH + "number_sentences": instructions.NumberOfSentences,
        _LENGTH + "number_paragraphs": instructions.ParagraphChecker,
        _LENGTH + "number_words": instructions.NumberOfWords,
        _LENGTH + "nth_paragraph_first_word": instructions.ParagraphFirstWordCheck,
        _CONTENT + "number_placeholders": instructions.PlaceholderChecker,
        _CONTENT + "postscript": instructions.PostscriptChecker,
        _FORMAT + "number_bullet_lists": instructions.BulletListChecker,
        _FORMAT + "constrained_response": instructions.ConstrainedResponseChecker,
        _FORMAT + "number_highlighted_sections": instructions.HighlightSectionChecker,
        _FORMAT + "multiple_sections": instructions.SectionChecker,
        _FORMAT + "json_format": instructions.JsonFormat,
        _FORMAT + "title": instructions.TitleChecker,
        _COMBINATION + "two_responses": instructions.TwoResponsesChecker,
        _COMBINATION + "repeat_prompt": instructions.RepeatPromptThenAnswer,
        _STARTEND + "end_checker": instructions.EndChecker,
        _CHANGE_CASES + "capital_word_frequency": instructions.CapitalWordFrequencyChecker,
        _CHANGE_CASES + "english_capital": instructions.CapitalLettersEnglishChecker,
        _CHANGE_CASES + "english_lowercase": instructions.LowercaseLettersEnglishChecker,
        _PUNCTUATION + "no_comma": instructions.CommaChecker,
        _STARTEND + "quotation": instructions.QuotationChecker,
    }
)

INSTRUCTION_IDS: tuple[str, ...] = tuple(sorted(INSTRUCTION_DICT))


class UnknownInstruction(KeyError):
    """An instruction id the registry does not hold."""


def build_instruction(instruction_id: str, kwargs: Mapping[str, Any]) -> Instruction:
    """The checker for one instruction of a prompt, built as the reference's evaluation
    builds it: arguments whose value is None are dropped (the Hugging Face copy of the data
    lists every argument name with None), then ``build_description(**kwargs)``.

    The reference also drops 0, "" and [] and then draws a random value; here such a value,
    an argument the checker does not take, or one it cannot use raises
    ``InstructionArgumentError``.
    """
    try:
        cls = INSTRUCTION_DICT[instruction_id]
    except KeyError:
        raise UnknownInstruction(instruction_id) from None
    present = {name: value for name, value in kwargs.items() if value is not None}
    for name, value in present.items():
        if name not in cls.ARGUMENTS:
            allowed = ", ".join(cls.ARGUMENTS) or "none"
            raise InstructionArgumentError(
                name, f"not an argument of this instruction (it takes: {allowed})"
            )
        if not value:
            raise InstructionArgumentError(
                name,
                f"{value!r} is empty (the reference drops it and draws a random value)",
            )
    instruction = cls(instruction_id)
    instruction.build_description(**present)
    return instruction
