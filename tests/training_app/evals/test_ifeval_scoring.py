"""The IFEval package's own behaviour: accuracies, loose variants, arguments, no downloads,
deterministic language detection. Agreement with the reference is in
test_ifeval_reference_agreement.py."""

from __future__ import annotations

import socket
from importlib import resources

import langdetect
import nltk
import pytest

from training_app.evals.ifeval import (
    INSTRUCTION_IDS,
    InputExample,
    InstructionArgumentError,
    OutputExample,
    accuracies,
    build_instruction,
    clear_caches,
    load_prompts,
    loose_variants,
    parse_input_data,
    score,
    score_response,
    text,
)


def _out(verdicts: list[bool]) -> OutputExample:
    return OutputExample(("x",) * len(verdicts), "p", "r", all(verdicts), tuple(verdicts))


def test_shipped_prompts_are_the_541_with_their_licences() -> None:
    prompts = load_prompts()
    assert len(prompts) == 541
    assert sum(len(p.instruction_id_list) for p in prompts) == 834
    assert {i for p in prompts for i in p.instruction_id_list} == set(INSTRUCTION_IDS)
    package = resources.files("training_app.evals.ifeval")
    for name in ("LICENSE", "NOTICE", "data/LICENSE", "punkt_tab/PROVENANCE.md"):
        assert package.joinpath(name).is_file(), name
    assert "Apache License" in package.joinpath("data", "LICENSE").read_text("utf-8")


def test_accuracies_as_ifeval_defines_them() -> None:
    # given: three prompts with 2, 1 and 3 instructions
    strict = [_out([True, False]), _out([True]), _out([False, False, True])]
    loose = [_out([True, True]), _out([True]), _out([True, False, True])]
    # when
    result = accuracies(strict, loose)
    # then: prompt level = prompts with every instruction followed / prompts;
    # instruction level = followed instructions / instructions, pooled over prompts
    assert result.prompt_level_strict == pytest.approx(1 / 3)
    assert result.instruction_level_strict == pytest.approx(3 / 6)
    assert result.prompt_level_loose == pytest.approx(2 / 3)
    assert result.instruction_level_loose == pytest.approx(5 / 6)
    assert (result.prompts, result.instructions) == (3, 6)


def test_loose_variants_are_the_reference_eight_without_repeats() -> None:
    assert loose_variants("Sure:\n*a* b\nbye") == [
        "Sure:\n*a* b\nbye",
        "Sure:\na b\nbye",
        "*a* b\nbye",
        "Sure:\n*a* b",
        "*a* b",
        "a b\nbye",
        "Sure:\na b",
        "a b",
    ]
    assert loose_variants("one line") == ["one line", ""]


def test_blank_response_follows_nothing_even_where_a_check_would_pass() -> None:
    inp = InputExample(1, ("keywords:forbidden_words",), "p", ({"forbidden_words": ["x"]},))
    strict, loose = score_response(inp, "   \n ")
    assert strict.follow_instruction_list == (False,)
    assert loose.follow_instruction_list == (False,)


def test_score_needs_a_response_for_every_prompt() -> None:
    prompts = load_prompts()[:2]
    with pytest.raises(KeyError, match="no response for 1 prompt"):
        score(prompts, {prompts[0].prompt: "hello"})


def test_letter_frequency_counts_a_character_that_is_not_a_letter() -> None:
    # prompt 1122 asks for at least 4 '#'; the reference would count a random letter
    checker = build_instruction(
        "keywords:letter_frequency", {"letter": "#", "let_frequency": 4, "let_relation": "at least"}
    )
    assert checker.check_following("#one #two #three #four")
    assert not checker.check_following("#one #two #three")


@pytest.mark.parametrize(
    ("instruction_id", "kwargs", "argument", "message"),
    [
        ("length_constraints:number_words", {"relation": "at least"}, "num_words", "integer"),
        (
            "length_constraints:number_words",
            {"num_words": 0, "relation": "at least"},
            "num_words",
            "empty",
        ),
        (
            "length_constraints:number_words",
            {"num_words": 9, "relation": "at most"},
            "relation",
            "must be in ('less than', 'at least')",
        ),
        ("language:response_language", {"language": "xx"}, "language", "ISO 639-1"),
        (
            "length_constraints:nth_paragraph_first_word",
            {"num_paragraphs": 2, "nth_paragraph": 3, "first_word": "so"},
            "nth_paragraph",
            "at most num_paragraphs (2)",
        ),
        (
            "keywords:letter_frequency",
            {"letter": "ab", "let_frequency": 2, "let_relation": "at least"},
            "letter",
            "one character",
        ),
        ("punctuation:no_comma", {"num_words": 3}, "num_words", "not an argument"),
    ],
)
def test_arguments_the_reference_would_replace_by_chance_are_refused(
    instruction_id: str, kwargs: dict[str, object], argument: str, message: str
) -> None:
    with pytest.raises(InstructionArgumentError) as refused:
        build_instruction(instruction_id, kwargs)
    assert refused.value.argument == argument
    assert message in refused.value.message


def test_hugging_face_style_kwargs_with_none_values_are_accepted() -> None:
    line = (
        '{"key": 7, "prompt": "Say hi.", "instruction_id_list": ["punctuation:no_comma", '
        '"length_constraints:number_words"], "kwargs": [{"num_words": null, "relation": null}, '
        '{"num_words": 3, "relation": "less than", "language": null}]}'
    )
    (inp,) = parse_input_data([line])
    strict, _ = score_response(inp, "hi there")
    assert strict.follow_instruction_list == (True, True)


def test_scoring_never_downloads_or_opens_a_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"called with {args}")

    monkeypatch.setattr(nltk, "download", refuse)
    monkeypatch.setattr(nltk.data, "find", refuse)
    monkeypatch.setattr(nltk.data, "load", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    text.sentence_tokenizer.cache_clear()
    clear_caches()
    prompts = {p.key: p for p in load_prompts()}
    # sentences (Punkt), capital words (Punkt + Treebank), language (langdetect)
    sentences = next(
        p
        for p in prompts.values()
        if "length_constraints:number_sentences" in p.instruction_id_list
    )
    strict, _ = score_response(sentences, "Dr. Smith arrived at 5 p.m. on Monday. He sat down.")
    assert len(strict.follow_instruction_list) == len(sentences.instruction_id_list)
    assert text.count_sentences("Dr. Smith arrived at 5 p.m. on Monday. He sat down.") == 2
    assert text.word_tokenize("THE END. Of it.") == ("THE", "END", ".", "Of", "it", ".")
    assert text.detect_language("Das ist ein kurzer deutscher Satz über Berlin.") == "de"


def test_language_detection_is_deterministic_and_leaves_langdetect_alone() -> None:
    # a short, ambiguous text: unseeded langdetect answers differently from run to run
    sample = "ok si no ya"
    answers = set()
    for _ in range(15):
        clear_caches()
        answers.add(text.detect_language(sample))
    assert len(answers) == 1
    assert langdetect.DetectorFactory.seed is None


def test_benchmark_scores_the_gpt4_response_to_every_prompt() -> None:
    from bench.ifeval_scoring import _all_eight, gpt4_responses

    responses = gpt4_responses()
    assert set(responses) == {p.prompt for p in load_prompts()}
    # the baseline tries the reference's eight variants, repeats included
    assert list(dict.fromkeys(_all_eight("a\n*b*\nc"))) == loose_variants("a\n*b*\nc")
    assert len(_all_eight("one line")) == 8
