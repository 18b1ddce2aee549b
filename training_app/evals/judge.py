"""Agent-as-a-Judge, the pure part: the default rubric, the messages sent to the judge, the
strict parser of its answers, the both-order pair verdict and the Effectiveness mapping.

- ``reply_messages(rubric, comment=, facts=, reply=)`` / ``pair_messages(rubric, comment=,
  facts=, reply_1=, reply_2=)`` -> chat messages. The rubric (operator-editable, versioned by
  the Django side) is the system prompt; the answer contract (``REPLY_FORMAT`` /
  ``PAIR_FORMAT``) is appended by code, so an edited rubric cannot lose it.
- ``parse_reply_judgment(text)`` -> ``ReplyJudgment | Unparsed``; ``parse_pair_answer(text)``
  -> ``PairAnswer | Unparsed``. Strict: the answer is one JSON object, bare or in one fenced
  block (```` ```json ````), with exactly the specified keys, integer scores 1-5 (not 4.0,
  not "4", not true), non-empty string reasons, a verdict in {"1", "2", "tie"}. Anything else
  is ``Unparsed(reason, raw)``: nothing is guessed or scraped out of the text.
- ``combine_orders(forward, backward)`` -> ``PairVerdict``: the pair is asked as (side one,
  side two) and as (side two, side one). Agreement gives that side; disagreement gives a tie
  with ``order_disagreement=True`` (position bias); an unparsed order gives no verdict.
- ``effectiveness_value(judgment)`` -> the Effectiveness score in [0, 1]: (score - 1) / 4, so
  1 -> 0.0, 3 -> 0.5, 5 -> 1.0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

PROMPT_FORMAT_VERSION = "judge-format-v1"
CRITERIA: tuple[str, ...] = ("accuracy", "effectiveness", "compliance", "tone")
SCORE_MIN = 1
SCORE_MAX = 5
MAX_REASON_CHARS = 1000
PAIR_CHOICES: tuple[str, ...] = ("1", "2", "tie")

Side = Literal["one", "two", "tie"]

DEFAULT_RUBRIC = """\
You are a strict reviewer of replies a live-stream shopping assistant gave to viewers.
Judge each reply only on the facts given to you (the product and catalog facts); never
assume a fact that is not given.

Criteria, each scored 1 (bad) to 5 (excellent):
- accuracy: every price, stock level, size, material, shipping or coupon detail in the
  reply agrees with the catalog facts; a stated fact that is not in the facts counts
  against it.
- effectiveness: the reply answers what the viewer asked and helps them decide or buy.
- compliance: no false promises, no pressure tactics, no off-platform payment or contact,
  no medical or legal claims, nothing the platform's rules forbid.
- tone: friendly, concise and respectful, suited to a live-stream chat.
"""

REPLY_FORMAT = """\
Answer with one JSON object and nothing else, exactly these keys:
{"accuracy": {"score": <integer 1-5>, "reason": "<one short sentence>"},
 "effectiveness": {"score": <integer 1-5>, "reason": "<one short sentence>"},
 "compliance": {"score": <integer 1-5>, "reason": "<one short sentence>"},
 "tone": {"score": <integer 1-5>, "reason": "<one short sentence>"}}"""

PAIR_FORMAT = """\
Compare reply 1 and reply 2 on the criteria above, taken together.
Answer with one JSON object and nothing else, exactly these keys:
{"verdict": "1" | "2" | "tie", "reason": "<one short sentence>"}
"1" means reply 1 is better, "2" means reply 2 is better, "tie" means neither is better."""

_FENCED = re.compile(r"\A```(?:json)?[ \t]*\n(?P<body>.*)\n```\Z", re.DOTALL)


@dataclass(frozen=True)
class Unparsed:
    """An answer that does not follow the format: why, and the raw text (kept verbatim)."""

    reason: str
    raw: str


@dataclass(frozen=True)
class CriterionScore:
    score: int
    reason: str


@dataclass(frozen=True)
class ReplyJudgment:
    """A reply scored on every criterion of ``CRITERIA``."""

    accuracy: CriterionScore
    effectiveness: CriterionScore
    compliance: CriterionScore
    tone: CriterionScore

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {
            name: {"score": getattr(self, name).score, "reason": getattr(self, name).reason}
            for name in CRITERIA
        }


@dataclass(frozen=True)
class PairAnswer:
    """One order's answer: ``choice`` "1", "2" or "tie" in the positions it was asked in."""

    choice: str
    reason: str


@dataclass(frozen=True)
class PairVerdict:
    """A pair judged in both orders, in side terms ("one" / "two" / "tie"; None: unparsed).

    ``forward`` asked (side one as reply 1, side two as reply 2), ``backward`` the reverse.
    """

    forward: Side | None
    backward: Side | None
    verdict: Side | None
    order_disagreement: bool

    @property
    def parsed(self) -> bool:
        return self.verdict is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "forward": self.forward,
            "backward": self.backward,
            "verdict": self.verdict,
            "order_disagreement": self.order_disagreement,
        }


# --- messages ----------------------------------------------------------------------------------


def _facts_text(facts: Mapping[str, Any] | Sequence[Any] | str | None) -> str:
    if facts is None or facts == "" or facts == {} or facts == []:
        return "(no catalog facts given)"
    if isinstance(facts, str):
        return facts
    return json.dumps(facts, ensure_ascii=False, sort_keys=True, indent=1)


def reply_messages(
    rubric: str,
    *,
    comment: str,
    facts: Mapping[str, Any] | Sequence[Any] | str | None,
    reply: str,
) -> list[dict[str, str]]:
    """The chat messages that ask the judge to score one reply on the rubric."""
    user = (
        f"Viewer comment:\n{comment}\n\n"
        f"Product and catalog facts:\n{_facts_text(facts)}\n\n"
        f"Reply to judge:\n{reply}\n\n"
        "Score the reply."
    )
    return [
        {"role": "system", "content": f"{rubric.strip()}\n\n{REPLY_FORMAT}"},
        {"role": "user", "content": user},
    ]


def pair_messages(
    rubric: str,
    *,
    comment: str,
    facts: Mapping[str, Any] | Sequence[Any] | str | None,
    reply_1: str,
    reply_2: str,
) -> list[dict[str, str]]:
    """The chat messages that ask the judge which of two replies is better."""
    user = (
        f"Viewer comment:\n{comment}\n\n"
        f"Product and catalog facts:\n{_facts_text(facts)}\n\n"
        f"Reply 1:\n{reply_1}\n\n"
        f"Reply 2:\n{reply_2}\n\n"
        "Which reply is better?"
    )
    return [
        {"role": "system", "content": f"{rubric.strip()}\n\n{PAIR_FORMAT}"},
        {"role": "user", "content": user},
    ]


# --- strict parsing ------------------------------------------------------------------------------


class _Refused(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Refused(f"duplicate key {key!r}")
        out[key] = value
    return out


def _no_constants(name: str) -> Any:
    raise _Refused(f"{name} is not JSON")


def _json_object(text: str) -> dict[str, Any]:
    """The one JSON object ``text`` is (bare, or the whole of one fenced block)."""
    stripped = text.strip()
    fenced = _FENCED.match(stripped)
    body = fenced.group("body").strip() if fenced else stripped
    if not body.startswith("{"):
        raise _Refused("the answer is not a JSON object (bare or in one ```json block)")
    try:
        value = json.loads(body, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise _Refused(f"invalid JSON: {exc.msg} at char {exc.pos}") from None
    if not isinstance(value, dict):
        raise _Refused("the answer is not a JSON object")
    return value


def _exact_keys(value: Mapping[str, Any], keys: Sequence[str], where: str) -> None:
    missing = [k for k in keys if k not in value]
    extra = sorted(k for k in value if k not in keys)
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing {', '.join(missing)}")
        if extra:
            parts.append(f"unexpected {', '.join(extra)}")
        raise _Refused(f"{where}: {'; '.join(parts)}")


def _reason(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Refused(f"{where}.reason must be a non-empty string")
    if len(value) > MAX_REASON_CHARS:
        raise _Refused(f"{where}.reason is longer than {MAX_REASON_CHARS} characters")
    return value.strip()


def parse_reply_judgment(text: str) -> ReplyJudgment | Unparsed:
    """The judge's rubric scores, or ``Unparsed`` saying what broke the format."""
    try:
        value = _json_object(text)
        _exact_keys(value, CRITERIA, "answer")
        scores: dict[str, CriterionScore] = {}
        for name in CRITERIA:
            entry = value[name]
            if not isinstance(entry, dict):
                raise _Refused(f"{name} must be an object with score and reason")
            _exact_keys(entry, ("score", "reason"), name)
            score = entry["score"]
            if type(score) is not int:  # bool is an int subclass; 4.0 and "4" are refused
                raise _Refused(f"{name}.score must be an integer, got {json.dumps(score)}")
            if not SCORE_MIN <= score <= SCORE_MAX:
                raise _Refused(f"{name}.score must be {SCORE_MIN}-{SCORE_MAX}, got {score}")
            scores[name] = CriterionScore(score, _reason(entry["reason"], name))
    except _Refused as exc:
        return Unparsed(str(exc), text)
    return ReplyJudgment(**scores)


def parse_pair_answer(text: str) -> PairAnswer | Unparsed:
    """The judge's pair choice in the order it was asked, or ``Unparsed``."""
    try:
        value = _json_object(text)
        _exact_keys(value, ("verdict", "reason"), "answer")
        choice = value["verdict"]
        if not isinstance(choice, str) or choice not in PAIR_CHOICES:
            raise _Refused(f'verdict must be "1", "2" or "tie", got {json.dumps(choice)}')
        return PairAnswer(choice, _reason(value["reason"], "answer"))
    except _Refused as exc:
        return Unparsed(str(exc), text)


# --- verdicts ------------------------------------------------------------------------------------


def _side(answer: PairAnswer | Unparsed, *, reversed_order: bool) -> Side | None:
    if isinstance(answer, Unparsed):
        return None
    if answer.choice == "tie":
        return "tie"
    first: Side = "two" if reversed_order else "one"
    second: Side = "one" if reversed_order else "two"
    return first if answer.choice == "1" else second


def combine_orders(forward: PairAnswer | Unparsed, backward: PairAnswer | Unparsed) -> PairVerdict:
    """Both orders' answers in side terms and the combined verdict: agreement -> that side,
    disagreement -> tie with ``order_disagreement``, an unparsed order -> no verdict."""
    one = _side(forward, reversed_order=False)
    other = _side(backward, reversed_order=True)
    if one is None or other is None:
        return PairVerdict(one, other, None, False)
    if one == other:
        return PairVerdict(one, other, one, False)
    return PairVerdict(one, other, "tie", True)


def effectiveness_value(judgment: ReplyJudgment) -> float:
    """Effectiveness in [0, 1] from the 1-5 effectiveness score: (score - 1) / 4."""
    return (judgment.effectiveness.score - SCORE_MIN) / (SCORE_MAX - SCORE_MIN)
