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

"""The IFEval instruction checkers.

Ported from ``instructions.py`` of Google's instruction_following_eval as lm-eval 0.4.13
carries it (``lm_eval/tasks/ifeval``). Every ``check_following`` keeps the reference's rule
line for line. What differs (see NOTICE):

- Where the reference *draws a random value* for an argument that is missing, zero, negative
  or out of range (it does so to generate new prompts), this port raises
  ``InstructionArgumentError`` naming the argument: a verdict must not depend on chance.
  The one case in the 541 prompts is ``keywords:letter_frequency`` with a letter that is not
  a-z (``#`` in prompt 1122, ``!`` in 1129): the reference swaps in a random ASCII letter,
  this port counts the character the prompt names.
- Checkers are built from the prompt's arguments once and may be reused (``EndChecker`` no
  longer rewrites its phrase inside ``check_following``; the result is the same).
- The four checkers that the reference's registry leaves out (ConstrainedStartChecker,
  RephraseChecker, KeySentenceChecker, RephraseParagraph) are not ported.
"""

from __future__ import annotations

import collections
import json
import logging
import re
from collections.abc import Callable
from typing import Any, ClassVar

from training_app.evals.ifeval import text

logger = logging.getLogger(__name__)

# The relational operation for comparison.
_COMPARISON_RELATION = ("less than", "at least")

# The options of constrained response.
_CONSTRAINED_RESPONSE_OPTIONS = (
    "My answer is yes.",
    "My answer is no.",
    "My answer is maybe.",
)


class InstructionArgumentError(ValueError):
    """An instruction's argument is missing or not one the checker can use."""

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(f"{argument}: {message}")
        self.argument = argument
        self.message = message


def _count(name: str, value: Any, *, minimum: int | None = 0) -> int:
    """An integer argument; the reference draws a random one when it is missing or below
    ``minimum`` (after its caller dropped falsy values, so 0 counts as missing)."""
    if value is None or isinstance(value, bool) or not isinstance(value, int):
        raise InstructionArgumentError(name, f"expected an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise InstructionArgumentError(name, f"must be at least {minimum}, got {value}")
    return value


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InstructionArgumentError(name, f"expected a non-empty string, got {value!r}")
    return value


def _words(name: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(w, str) and w for w in value):
        raise InstructionArgumentError(
            name, f"expected a non-empty list of non-empty strings, got {value!r}"
        )
    return list(value)


def _relation(name: str, value: Any) -> str:
    if value is None:
        raise InstructionArgumentError(name, f"expected one of {list(_COMPARISON_RELATION)}")
    if value not in _COMPARISON_RELATION:
        raise InstructionArgumentError(
            name,
            "The supported relation for comparison must be in "
            f"{_COMPARISON_RELATION}, but {value} is given.",
        )
    return str(value)


class Instruction:
    """An instruction template."""

    # The keyword arguments build_description accepts.
    ARGUMENTS: ClassVar[tuple[str, ...]] = ()

    def __init__(self, instruction_id: str) -> None:
        self.id = instruction_id

    # Each checker's own keyword arguments (ARGUMENTS); sets its parameters and returns the
    # instruction's text.
    build_description: Callable[..., str]

    def get_instruction_args(self) -> dict[str, Any] | None:
        return None

    def get_instruction_args_keys(self) -> list[str]:
        return list(self.ARGUMENTS)

    def check_following(self, value: str) -> bool:
        raise NotImplementedError("`check_following` not implemented.")


class ResponseLanguageChecker(Instruction):
    """Check the language of the entire response."""

    ARGUMENTS = ("language",)

    def build_description(self, *, language: Any = None) -> str:
        if language not in text.LANGUAGE_CODES:
            raise InstructionArgumentError(
                "language",
                f"expected one of the ISO 639-1 codes {sorted(text.LANGUAGE_CODES)}, "
                f"got {language!r}",
            )
        self._language: str = language
        return (
            f"Your ENTIRE response should be in {text.LANGUAGE_CODES[self._language]} "
            "language, no other language is allowed."
        )

    def get_instruction_args(self) -> dict[str, Any]:
        return {"language": self._language}

    def check_following(self, value: str) -> bool:
        assert isinstance(value, str)
        try:
            return text.detect_language(value) == self._language
        except text.LanguageNotDetected as e:
            # Count as instruction is followed.
            logger.debug("Unable to detect language for text %s due to %s", value[:80], e)
            return True


class NumberOfSentences(Instruction):
    """Check the number of sentences."""

    ARGUMENTS = ("num_sentences", "relation")

    def build_description(self, *, num_sentences: Any = None, relation: Any = None) -> str:
        self._num_sentences_threshold = _count("num_sentences", num_sentences)
        self._comparison_relation = _relation("relation", relation)
        return (
            f"Your response should contain {self._comparison_relation} "
            f"{self._num_sentences_threshold} sentences."
        )

    def get_instruction_args(self) -> dict[str, Any]:
        return {
            "num_sentences": self._num_sentences_threshold,
            "relation": self._comparison_relation,
        }

    def check_following(self, value: str) -> bool:
        num_sentences = text.count_sentences(value)
        if self._comparison_relation == _COMPARISON_RELATION[0]:
            return num_sentences < self._num_sentences_threshold
        return num_sentences >= self._num_sentences_threshold


class PlaceholderChecker(Instruction):
    """Check the placeholders in template writing."""

    ARGUMENTS = ("num_placeholders",)

    def build_description(self, *, num_placeholders: Any = None) -> str:
        self._num_placeholders = _count("num_placeholders", num_placeholders)
        return (
            f"The response must contain at least {self._num_placeholders} placeholders "
            "represented by square brackets, such as [address]."
        )

    def get_instruction_args(self) -> dict[str, Any]:
        return {"num_placeholders": self._num_placeholders}

    def check_following(self, value: str) -> bool:
        placeholders = re.findall(r"\[.*?\]", value)
        return len(placeholders) >= self._num_placeholders


class BulletListChecker(Instruction):
    """Checks the bullet list in the prompt."""

    ARGUMENTS = ("num_bullets",)

    def build_description(self, *, num_bullets: Any = None) -> str:
        self._num_bullets = _count("num_bullets", num_bullets)
        return (
            f"Your answer must contain exactly {self._num_bullets} bullet points. "
            "Use the markdown bullet points such as:\n"
            "* This is point 1. \n"
            "* This is point 2"
        )

    def get_instruction_args(self) -> dict[str, Any]:
        return {"num_bullets": self._num_bullets}

    def check_following(self, value: str) -> bool:
        bullet_lists = re.findall(r"^\s*\*[^\*].*$", value, flags=re.MULTILINE)
        bullet_lists_2 = re.findall(r"^\s*-.*$", value, flags=re.MULTILINE)
        return len(bullet_lists) + len(bullet_lists_2) == self._num_bullets


class ConstrainedResponseChecker(Instruction):
    """Checks the constrained response."""

    def build_description(self) -> str:
        self._constrained_responses = _CONSTRAINED_RESPONSE_OPTIONS
        return f"Answer with one of the following options: {self._constrained_responses}"

    def check_following(self, value: str) -> bool:
        value = value.strip()
        return any(option in value for option in self._constrained_responses)


class HighlightSectionChecker(Instruction):
    """Checks the highlighted section."""

    ARGUMENTS = ("num_highlights",)

    def build_description(self, *, num_highlights: Any = None) -> str:
        self._num_highlights = _count("num_highlights", num_highlights)
        return (
            f"Highlight at least {self._num_highlights} sections in your answer with "
            "markdown, i.e. *highlighted section*."
        )

    def get_instruction_args(self) -> dict[str, Any]:
        return {"num_highlights": self._num_highlights}

    def check_following(self, value: str) -> bool:
        num_highlights = 0
        highlights = re.findall(r"\*[^\n\*]*\*", value)
        double_highlights = re.findall(r"\*\*[^\n\*]*\*\*", value)
        for highlight in highlights:
            if highlight.strip("*").strip():
                num_highlights += 1
        for highlight in double_highlights:
            if highlight.removeprefix("**").removesuffix("**").strip():
                num_highlights += 1
        return num_highlights >= self._num_highlights


class SectionChecker(Instruction):
    """Checks the sections."""

    ARGUMENTS = ("section_spliter", "num_sections")

    def build_description(self, *, section_spliter: Any = None, num_sections: Any = None) -> str:
        self._section_spliter = _text("section_spliter", section_spliter).strip()
        self._num_sections = _count("num_sections", num_sections)
        return (
            f"Your response must have {self._num_sections} sections. Mark the beginning "
            f"of each section with {self._section_spliter} X, such as:\n"
            f"{self._section_spliter} 1\n"
            "[content of section 1]\n"
            f"{self._section_spliter} 2\n"
            "[content of section 2]"
        )

    def get_instruction_args(self) -> dict[str, Any]:
        return {"section_spliter": self._section_spliter, "num_sections": self._num_sections}

    def check_following(self, value: str) -> bool:
        section_splitter_patten = r"\s?" + self._section_spliter + r"\s?\d+\s?"
        sections = re.split(section_splitter_patten, value)
        return len(sections) - 1 >= self._num_sections


class ParagraphChecker(Instruction):
    """Checks the paragraphs."""

    ARGUMENTS = ("num_paragraphs",)

    def build_description(self, *, num_paragraphs: Any = None) -> str:
        self._num_paragraphs = _count("num_paragraphs", num_paragraphs)
        return (
            f"There should be {self._num_paragraphs} paragraphs. "
            "Paragraphs are separated with the markdown divider: ***"
        )

    def get_instruction_args(self) -> dict[str, Any]:
        return {"num_paragraphs": self._num_paragraphs}

    def check_following(self, value: str) -> bool:
        paragraphs = re.split(r"\s?\*\*\*\s?", value)
        num_paragraphs = len(paragraphs)
        for index, paragraph in enumerate(paragraphs):
            if not paragraph.strip():
                if index == 0 or index == len(paragraphs) - 1:
                    num_paragraphs -= 1
                else:
                    return False
        return num_paragraphs == self._num_paragraphs


class PostscriptChecker(Instruction):
    """Checks the postscript."""

    ARGUMENTS = ("postscript_marker",)

    def build_description(self, *, postscript_marker: Any = None) -> str:
        self._postscript_marker = _text("postscript_marker", postscript_marker).strip()
        return (
            "At the end of your response, please explicitly add a postscript "
            f"starting with {self._postscript_marker}"
        )

    def get_instruction_args(self) -> dict[str, Any]:
        return {"postscript_marker": self._postscript_marker}

    def check_following(self, value: str) -> bool:
        value = value.lower()
        if self._postscript_marker == "P.P.S":
            postscript_pattern = r"\s*p\.\s?p\.\s?s.*$"
        elif self._postscript_marker == "P.S.":
            postscript_pattern = r"\s*p\.\s?s\..*$"
        else:
            postscript_pattern = r"\s*" + self._postscript_marker.lower() + r".*$"
        postscript = re.findall(postscript_pattern, value, flags=re.MULTILINE)
        return bool(postscript)


class KeywordChecker(Instruction):
    """Check the existence of certain keywords."""

    ARGUMENTS = ("keywords",)

    def build_description(self, *, keywords: Any = None) -> str:
        self._keywords = sorted(_words("keywords", keywords))
        return f"Include keywords {self._keywords} in the response."

    def get_instruction_args(self) -> dict[str, Any]:
        return {"keywords": self._keywords}

    def check_following(self, value: str) -> bool:
        return all(re.search(keyword, value, flags=re.IGNORECASE) for keyword in self._keywords)


class KeywordFrequencyChecker(Instruction):
    """Check the keyword frequency."""

    ARGUMENTS = ("keyword", "frequency", "relation")

    def build_description(
        self, *, keyword: Any = None, frequency: Any = None, relation: Any = None
    ) -> str:
        self._keyword = _text("keyword", keyword).strip()
        self._frequency = _count("frequency", frequency)
        self._comparison_relation = _relation("relation", relation)
        return (
            f"In your response, the word {self._keyword} should appear "
            f"{self._comparison_relation} {self._frequency} times."
        )

    def get_instruction_args(self) -> dict[str, Any]:
        return {
            "keyword": self._keyword,
            "frequency": self._frequency,
            "relation": self._comparison_relation,
        }

    def check_following(self, value: str) -> bool:
        actual_occurrences = len(re.findall(self._keyword, value, flags=re.IGNORECASE))
        if self._comparison_relation == _COMPARISON_RELATION[0]:
            return actual_occurrences < self._frequency
        return actual_occurrences >= self._frequency


class NumberOfWords(Instruction):
    """Checks the number of words."""

    ARGUMENTS = ("num_words", "relation")

    def build_description(self, *, num_words: Any = None, relation: Any = None) -> str:
        self._num_words = _count("num_words", num_words)
        self._comparison_relation = _relation("relation", relation)
        return f"Answer with {self._comparison_relation} {self._num_words} words."

    def get_instruction_args(self) -> dict[str, Any]:
        return {"num_words": self._num_words, "relation": self._comparison_relation}

    def check_following(self, value: str) -> bool:
        num_words = text.count_words(value)
        if self._comparison_relation == _COMPARISON_RELATION[0]:
            return num_words < self._num_words
        return num_words >= self._num_words


class JsonFormat(Instruction):
    """Check the Json format."""

    def build_description(self) -> str:
        return (
            "Entire output should be wrapped in JSON format. You can use markdown"
            " ticks such as ```."
        )

    def check_following(self, value: str) -> bool:
        value = (
            value.strip()
            .removeprefix("```json")
            .removeprefix("```Json")
            .removeprefix("```JSON")
            .removeprefix("```")
            .removesuffix("```")
            .strip()
        )
        try:
            json.loads(value)
        except ValueError:
            return False
        return True


class ParagraphFirstWordCheck(Instruction):
    """Check the paragraph and the first word of the nth paragraph."""

    ARGUMENTS = ("num_paragraphs", "nth_paragraph", "first_word")

    def build_description(
        self, *, num_paragraphs: Any = None, nth_paragraph: Any = None, first_word: Any = None
    ) -> str:
        self._num_paragraphs = _count("num_paragraphs", num_paragraphs)
        self._nth_paragraph = _count("nth_paragraph", nth_paragraph, minimum=1)
        if self._nth_paragraph > self._num_paragraphs:
            raise InstructionArgumentError(
                "nth_paragraph",
                f"must be at most num_paragraphs ({self._num_paragraphs}), "
                f"got {self._nth_paragraph}",
            )
        self._first_word = _text("first_word", first_word).lower()
        return (
            f"There should be {self._num_paragraphs} paragraphs. "
            "Paragraphs and only paragraphs are separated with each other by two "
            "new lines as if it was '\\n\\n' in python. "
            f"Paragraph {self._nth_paragraph} must start with word {self._first_word}."
        )

    def get_instruction_args(self) -> dict[str, Any]:
        return {
            "num_paragraphs": self._num_paragraphs,
            "nth_paragraph": self._nth_paragraph,
            "first_word": self._first_word,
        }

    def check_following(self, value: str) -> bool:
        paragraphs = re.split(r"\n\n", value)
        num_paragraphs = len(paragraphs)
        for paragraph in paragraphs:
            if not paragraph.strip():
                num_paragraphs -= 1

        # check that index doesn't go out of bounds
        if self._nth_paragraph <= num_paragraphs:
            paragraph = paragraphs[self._nth_paragraph - 1].strip()
            if not paragraph:
                return False
        else:
            return False

        first_word = ""
        punctuation = {".", ",", "?", "!", "'", '"'}
        # get first word and remove punctuation
        word = paragraph.split()[0].strip()
        word = word.lstrip("'")
        word = word.lstrip('"')
        for letter in word:
            if letter in punctuation:
                break
            first_word += letter.lower()

        return num_paragraphs == self._num_paragraphs and first_word == self._first_word


class ForbiddenWords(Instruction):
    """Checks that specified words are not used in response."""

    ARGUMENTS = ("forbidden_words",)

    def build_description(self, *, forbidden_words: Any = None) -> str:
        self._forbidden_words = sorted(set(_words("forbidden_words", forbidden_words)))
        return f"Do not include keywords {self._forbidden_words} in the response."

    def get_instruction_args(self) -> dict[str, Any]:
        return {"forbidden_words": self._forbidden_words}

    def check_following(self, value: str) -> bool:
        return not any(
            re.search(r"\b" + word + r"\b", value, flags=re.IGNORECASE)
            for word in self._forbidden_words
        )


class TwoResponsesChecker(Instruction):
    """Check that two responses were given."""

    def build_description(self) -> str:
        return (
            "Give two different responses. Responses and only responses should"
            " be separated by 6 asterisk symbols: ******."
        )

    def check_following(self, value: str) -> bool:
        valid_responses = []
        responses = value.split("******")
        for index, response in enumerate(responses):
            if not response.strip():
                if index != 0 and index != len(responses) - 1:
                    return False
            else:
                valid_responses.append(response)
        return (
            len(valid_responses) == 2 and valid_responses[0].strip() != valid_responses[1].strip()
        )


class RepeatPromptThenAnswer(Instruction):
    """Checks that Prompt is first repeated then answered."""

    ARGUMENTS = ("prompt_to_repeat",)

    def build_description(self, *, prompt_to_repeat: Any = None) -> str:
        if not prompt_to_repeat or not isinstance(prompt_to_repeat, str):
            raise InstructionArgumentError("prompt_to_repeat", "prompt_to_repeat must be set.")
        self._prompt_to_repeat = prompt_to_repeat
        self._prompt_lower = prompt_to_repeat.strip().lower()
        return (
            "First repeat the request word for word without change,"
            " then give your answer (1. do not say any words or characters"
            " before repeating the request; 2. the request you need to repeat"
            " does not include this sentence)"
        )

    def get_instruction_args(self) -> dict[str, Any]:
        return {"prompt_to_repeat": self._prompt_to_repeat}

    def check_following(self, value: str) -> bool:
        return value.strip().lower().startswith(self._prompt_lower)


class EndChecker(Instruction):
    """Checks that the prompt ends with a given phrase."""

    ARGUMENTS = ("end_phrase",)

    def build_description(self, *, end_phrase: Any = None) -> str:
        self._end_phrase = _text("end_phrase", end_phrase).strip()
        # The reference lowercases the phrase inside check_following; done once here.
        self._end_phrase_lower = self._end_phrase.strip().lower()
        return (
            f"Finish your response with this exact phrase {self._end_phrase}. "
            "No other words should follow this phrase."
        )

    def get_instruction_args(self) -> dict[str, Any]:
        return {"end_phrase": self._end_phrase}

    def check_following(self, value: str) -> bool:
        value = value.strip().strip('"').lower()
        return value.endswith(self._end_phrase_lower)


class TitleChecker(Instruction):
    """Checks the response for a title."""

    _pattern = re.compile(r"<<[^\n]+>>")

    def build_description(self) -> str:
        return (
            "Your answer must contain a title, wrapped in double angular brackets,"
            " such as <<poem of joy>>."
        )

    def check_following(self, value: str) -> bool:
        titles = re.findall(self._pattern, value)
        return any(title.lstrip("<").rstrip(">").strip() for title in titles)


class LetterFrequencyChecker(Instruction):
    """Checks letter frequency."""

    ARGUMENTS = ("letter", "let_frequency", "let_relation")

    def build_description(
        self, *, letter: Any = None, let_frequency: Any = None, let_relation: Any = None
    ) -> str:
        if not isinstance(letter, str) or len(letter) != 1:
            raise InstructionArgumentError("letter", f"expected one character, got {letter!r}")
        # The reference keeps only a-z/A-Z and draws a random letter otherwise; a
        # character the prompt names is counted as it is here (see the module doc).
        self._letter = letter.lower()
        self._frequency = _count("let_frequency", let_frequency)
        self._comparison_relation = _relation("let_relation", let_relation)
        return (
            f"In your response, the letter {self._letter} should appear {self._comparison_relation}"
            f" {self._frequency} times."
        )

    def get_instruction_args(self) -> dict[str, Any]:
        return {
            "letter": self._letter,
            "let_frequency": self._frequency,
            "let_relation": self._comparison_relation,
        }

    def check_following(self, value: str) -> bool:
        value = value.lower()
        letters = collections.Counter(value)
        if self._comparison_relation == _COMPARISON_RELATION[0]:
            return letters[self._letter] < self._frequency
        return letters[self._letter] >= self._frequency


class CapitalLettersEnglishChecker(Instruction):
    """Checks that the response is in english and is in all capital letters."""

    def build_description(self) -> str:
        return "Your entire response should be in English, and in all capital letters."

    def check_following(self, value: str) -> bool:
        assert isinstance(value, str)
        try:
            return value.isupper() and text.detect_language(value) == "en"
        except text.LanguageNotDetected as e:
            # Count as instruction is followed.
            logger.debug("Unable to detect language for text %s due to %s", value[:80], e)
            return True


class LowercaseLettersEnglishChecker(Instruction):
    """Checks that the response is in english and is in all lowercase letters."""

    def build_description(self) -> str:
        return (
            "Your entire response should be in English, and in all lowercase"
            " letters. No capital letters are allowed."
        )

    def check_following(self, value: str) -> bool:
        assert isinstance(value, str)
        try:
            return value.islower() and text.detect_language(value) == "en"
        except text.LanguageNotDetected as e:
            # Count as instruction is followed.
            logger.debug("Unable to detect language for text %s due to %s", value[:80], e)
            return True


class CommaChecker(Instruction):
    """Checks the response for no commas."""

    def build_description(self) -> str:
        return "In your entire response, refrain from the use of any commas."

    def check_following(self, value: str) -> bool:
        return not re.search(r"\,", value)


class CapitalWordFrequencyChecker(Instruction):
    """Checks frequency of words with all capital letters."""

    ARGUMENTS = ("capital_frequency", "capital_relation")

    def build_description(
        self, *, capital_frequency: Any = None, capital_relation: Any = None
    ) -> str:
        # The reference keeps any integer here, negative ones included.
        self._frequency = _count("capital_frequency", capital_frequency, minimum=None)
        self._comparison_relation = _relation("capital_relation", capital_relation)
        return (
            "In your response, words with all capital letters should appear"
            f" {self._comparison_relation} {self._frequency} times."
        )

    def get_instruction_args(self) -> dict[str, Any]:
        return {
            "capital_frequency": self._frequency,
            "capital_relation": self._comparison_relation,
        }

    def check_following(self, value: str) -> bool:
        # Hyphenated words will count as one word
        words = text.word_tokenize(value)
        capital_words = sum(1 for word in words if word.isupper())
        if self._comparison_relation == _COMPARISON_RELATION[0]:
            return capital_words < self._frequency
        return capital_words >= self._frequency


class QuotationChecker(Instruction):
    """Checks response is wrapped with double quotation marks."""

    def build_description(self) -> str:
        return "Wrap your entire response with double quotation marks."

    def check_following(self, value: str) -> bool:
        value = value.strip()
        return len(value) > 1 and value[0] == '"' and value[-1] == '"'
