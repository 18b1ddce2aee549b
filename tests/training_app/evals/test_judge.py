"""The judge's strict parser, messages and both-order verdict (pure, no database)."""

from __future__ import annotations

import json

import pytest

from training_app.evals.judge import (
    CRITERIA,
    DEFAULT_RUBRIC,
    PAIR_FORMAT,
    REPLY_FORMAT,
    PairAnswer,
    ReplyJudgment,
    Unparsed,
    combine_orders,
    effectiveness_value,
    pair_messages,
    parse_pair_answer,
    parse_reply_judgment,
    reply_messages,
)


def _scores(**overrides: object) -> dict[str, object]:
    answer: dict[str, object] = {name: {"score": 4, "reason": f"{name} fine"} for name in CRITERIA}
    answer.update(overrides)
    return answer


def test_a_bare_json_answer_is_parsed_into_every_criterion() -> None:
    judgment = parse_reply_judgment(json.dumps(_scores(tone={"score": 2, "reason": "curt"})))
    assert isinstance(judgment, ReplyJudgment)
    assert judgment.accuracy.score == 4
    assert judgment.tone.score == 2 and judgment.tone.reason == "curt"
    assert judgment.to_dict()["effectiveness"] == {"score": 4, "reason": "effectiveness fine"}


def test_a_fenced_json_answer_is_parsed() -> None:
    text = "```json\n" + json.dumps(_scores()) + "\n```"
    assert isinstance(parse_reply_judgment(text), ReplyJudgment)
    assert isinstance(
        parse_reply_judgment("  ```\n" + json.dumps(_scores()) + "\n```\n"), ReplyJudgment
    )


@pytest.mark.parametrize(
    ("text", "reason_part"),
    [
        ("The reply deserves 4/5.", "not a JSON object"),
        ("Sure! " + json.dumps(_scores()), "not a JSON object"),
        (json.dumps(_scores()) + " Hope this helps", "invalid JSON"),
        ("[1, 2]", "not a JSON object"),
        (json.dumps(_scores(accuracy={"score": 4.0, "reason": "x"})), "must be an integer"),
        (json.dumps(_scores(accuracy={"score": "4", "reason": "x"})), "must be an integer"),
        (json.dumps(_scores(accuracy={"score": True, "reason": "x"})), "must be an integer"),
        (json.dumps(_scores(accuracy={"score": 6, "reason": "x"})), "must be 1-5"),
        (json.dumps(_scores(accuracy={"score": 0, "reason": "x"})), "must be 1-5"),
        (json.dumps(_scores(accuracy={"score": 3, "reason": ""})), "non-empty string"),
        (json.dumps(_scores(accuracy={"score": 3})), "missing reason"),
        (json.dumps(_scores(accuracy=3)), "must be an object"),
        (json.dumps(_scores(overall={"score": 3, "reason": "x"})), "unexpected overall"),
        (json.dumps({"accuracy": {"score": 3, "reason": "x"}}), "missing effectiveness"),
        ('{"accuracy": 1, "accuracy": 2}', "duplicate key"),
        ("```json\n" + json.dumps(_scores()) + "\n```\nand more", "not a JSON object"),
        ("", "not a JSON object"),
    ],
)
def test_anything_off_format_is_unparsed_with_the_raw_text(text: str, reason_part: str) -> None:
    result = parse_reply_judgment(text)
    assert isinstance(result, Unparsed)
    assert reason_part in result.reason
    assert result.raw == text


def test_a_number_in_prose_is_never_scraped() -> None:
    assert isinstance(parse_reply_judgment("accuracy: 5, effectiveness: 4"), Unparsed)
    assert isinstance(parse_pair_answer("Reply 1 is better."), Unparsed)


@pytest.mark.parametrize("choice", ["1", "2", "tie"])
def test_a_pair_answer_accepts_exactly_the_three_choices(choice: str) -> None:
    answer = parse_pair_answer(json.dumps({"verdict": choice, "reason": "because"}))
    assert answer == PairAnswer(choice, "because")


@pytest.mark.parametrize(
    "body",
    [
        {"verdict": 1, "reason": "x"},
        {"verdict": "A", "reason": "x"},
        {"verdict": "Tie", "reason": "x"},
        {"verdict": "1"},
        {"verdict": "1", "reason": "x", "confidence": 0.9},
        {"winner": "1", "reason": "x"},
    ],
)
def test_a_pair_answer_off_format_is_unparsed(body: dict[str, object]) -> None:
    assert isinstance(parse_pair_answer(json.dumps(body)), Unparsed)


def test_messages_carry_the_rubric_the_format_and_the_inputs() -> None:
    messages = reply_messages(
        DEFAULT_RUBRIC, comment="How much?", facts={"price": 89}, reply="It is 89."
    )
    assert messages[0]["role"] == "system"
    assert messages[0]["content"].startswith(DEFAULT_RUBRIC.strip())
    assert messages[0]["content"].endswith(REPLY_FORMAT)
    assert "How much?" in messages[1]["content"]
    assert '"price": 89' in messages[1]["content"]
    assert "It is 89." in messages[1]["content"]
    pair = pair_messages("my rubric", comment="c", facts=None, reply_1="first", reply_2="second")
    assert pair[0]["content"] == f"my rubric\n\n{PAIR_FORMAT}"
    body = pair[1]["content"]
    assert body.index("Reply 1:\nfirst") < body.index("Reply 2:\nsecond")
    assert "(no catalog facts given)" in body


def _answer(choice: str) -> PairAnswer:
    return PairAnswer(choice, "r")


def test_both_orders_agreeing_give_that_side() -> None:
    # forward: side one is reply 1; backward: side two is reply 1
    verdict = combine_orders(_answer("1"), _answer("2"))
    assert (verdict.forward, verdict.backward, verdict.verdict) == ("one", "one", "one")
    assert verdict.order_disagreement is False
    assert combine_orders(_answer("2"), _answer("1")).verdict == "two"
    assert combine_orders(_answer("tie"), _answer("tie")).verdict == "tie"


def test_orders_that_disagree_are_a_tie_flagged_as_position_bias() -> None:
    # "reply 1 is better" both times: the judge prefers the first position, not a side
    verdict = combine_orders(_answer("1"), _answer("1"))
    assert (verdict.forward, verdict.backward) == ("one", "two")
    assert verdict.verdict == "tie" and verdict.order_disagreement is True
    half = combine_orders(_answer("1"), _answer("tie"))
    assert half.verdict == "tie" and half.order_disagreement is True


def test_an_unparsed_order_gives_no_verdict() -> None:
    verdict = combine_orders(_answer("1"), Unparsed("bad", "x"))
    assert verdict.verdict is None and not verdict.parsed
    assert verdict.forward == "one" and verdict.backward is None
    assert verdict.order_disagreement is False
    assert verdict.to_dict() == {
        "forward": "one",
        "backward": None,
        "verdict": None,
        "order_disagreement": False,
    }


@pytest.mark.parametrize(("score", "value"), [(1, 0.0), (2, 0.25), (3, 0.5), (4, 0.75), (5, 1.0)])
def test_effectiveness_maps_1_to_5_onto_0_to_1(score: int, value: float) -> None:
    judgment = parse_reply_judgment(
        json.dumps(_scores(effectiveness={"score": score, "reason": "r"}))
    )
    assert isinstance(judgment, ReplyJudgment)
    assert effectiveness_value(judgment) == value
