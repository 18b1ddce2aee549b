"""Scoring one Live-Stream QA answer: named rule checks with reasons, the four reward
components, and the item's verdict.

Inputs are plain data: the agent's trace (``ReplyTrace.to_dict()``), the item's gold
trajectory (``trajectory_to_dict``, already in the names of the harness the item ran on) and
the item's gold facts. The components are the HSA-RL reward functions of
``training_app.pipeline.rewards`` (the same numbers training optimises); the rule checks say
*why* an answer is wrong, one named check at a time, and decide ``passed`` (every required
check passes). Required always:

- ``answered``: the model itself answered (no fallback: hook, model failure, step limit);
- ``reply_length``: the reply has 1..``MAX_REPLY_CHARS`` characters;
- ``prices_grounded``: every price the reply states was returned by a tool (or is a gold
  catalog price).

Required when the gold needs it:

- ``skill``: the gold skill was loaded (with no gold skill: informational, none loaded);
- ``gold_tool_calls``: every gold call was made with the same name and arguments and
  succeeded;
- ``gold_prices_quoted``: every price of the gold answer is stated;
- ``facts_stated``: every gold fact is stated.

Informational (never required): ``readable`` (every model answer could be parsed),
``hooks_allowed`` (no hook had to retry, block or fall back), ``extra_tool_calls`` (no
repeated, failed or unneeded call). ``judge`` (the runner adds it when a judge is used) is
required.

Gold facts (``gold_facts``) are what the correct answer states that it could only know from
the tools: every number of the gold answer that also occurs in a gold tool result (prices,
units, delivery days), and every short text value (1-4 words: titles, materials, carriers,
coupon codes, regions, sizes; not values made only of numbers and units, such as ``2-4`` or
``170-178 cm, 60-70 kg``, whose numbers are facts already) of a gold tool result that the
gold answer repeats. A reply states a number fact when it contains the same number (``89`` =
``89.00``) and a text fact when it contains it as a whole phrase, ignoring case and spacing
(codes of one or two characters, such as sizes, must match in case).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from inference.agents.session import catalog_prices, quoted_prices
from training_app.pipeline.rewards import (
    MAX_REPLY_CHARS,
    accuracy,
    effectiveness,
    skill_selection,
    tool_rationality,
)

Trace = Mapping[str, Any]
Gold = Mapping[str, Any]

COMPONENTS: tuple[str, ...] = ("accuracy", "effectiveness", "tool_rationality", "skill_selection")
CHECKS: tuple[str, ...] = (
    "answered",
    "reply_length",
    "skill",
    "gold_tool_calls",
    "extra_tool_calls",
    "gold_prices_quoted",
    "prices_grounded",
    "facts_stated",
    "readable",
    "hooks_allowed",
    "judge",
)
# A number not glued to an identifier (the 1001 of SW-1001 is not one; the 4 of 2-4 is).
_NUMBER = re.compile(r"(?<![A-Za-z]-)(?<![\w.])\d+(?:\.\d+)?(?!\w)")
_FACT_MAX_WORDS = 4
_UNITS = frozenset({"cm", "mm", "kg", "day", "days", "min", "pcs"})
_PRICE_TOLERANCE = 0.005


@dataclass(frozen=True)
class RuleCheck:
    """One named check of an answer. ``reason`` says what was wrong (or what was checked)."""

    name: str
    passed: bool
    required: bool
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RuleCheck:
        return cls(
            str(data["name"]), bool(data["passed"]), bool(data["required"]), str(data["reason"])
        )


@dataclass(frozen=True)
class ItemScores:
    """The HSA-RL reward components of one answer, each in [0, 1]."""

    accuracy: float
    effectiveness: float
    tool_rationality: float
    skill_selection: float

    def to_dict(self) -> dict[str, float]:
        return {name: float(getattr(self, name)) for name in COMPONENTS}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ItemScores:
        return cls(**{name: float(data[name]) for name in COMPONENTS})


def item_scores(trace: Trace, gold: Gold) -> ItemScores:
    """The reward functions of ``training_app.pipeline.rewards`` on one trace."""
    return ItemScores(
        accuracy=accuracy(trace, gold),
        effectiveness=effectiveness(trace, gold),
        tool_rationality=tool_rationality(trace, gold),
        skill_selection=skill_selection(trace, gold),
    )


def all_required_passed(checks: Iterable[RuleCheck]) -> bool:
    return all(check.passed for check in checks if check.required)


# --- facts -----------------------------------------------------------------------------------


def _numbers(text: str) -> list[float]:
    return [float(match) for match in _NUMBER.findall(text)]


def _leaves(value: Any) -> Iterable[Any]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _normalise(text: str) -> str:
    return " ".join(text.lower().split())


def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    """``phrase`` as a whole, any spacing; case ignored except for short codes (``M``,
    ``XL``), which would otherwise match ordinary words."""
    words = phrase.split()
    body = r"\s+".join(re.escape(w) for w in words)
    flags = 0 if len(phrase.strip()) <= 2 else re.IGNORECASE
    return re.compile(r"(?<!\w)" + body + r"(?!\w)", flags)


def _contains_phrase(text: str, phrase: str) -> bool:
    return _phrase_pattern(phrase).search(text) is not None


def _has_word(text: str) -> bool:
    """Whether ``text`` has a word that is not a unit: ``2-4`` and ``170-178 cm, 60-70 kg``
    are covered by their numbers; ``XS`` and ``100% merino wool`` are facts of their own."""
    words = re.findall(r"[A-Za-z]+", text)
    return any(w.lower() not in _UNITS for w in words)


def _is_number(fact: str) -> bool:
    return re.fullmatch(r"\d+(?:\.\d+)?", fact) is not None


def gold_facts(gold: Gold) -> tuple[str, ...]:
    """The facts the gold answer states from its tool results, in order of first mention
    (module docstring). Empty for answers that need no tool."""
    answer = str(gold.get("final_answer") or "")
    results = [c.get("result") for c in gold.get("tool_calls", ()) if c.get("result")]
    if not answer or not results:
        return ()
    result_numbers: set[float] = set()
    phrases: list[str] = []
    for leaf in _leaves(results):
        if isinstance(leaf, bool) or leaf is None:
            continue
        if isinstance(leaf, int | float):
            result_numbers.add(float(leaf))
            continue
        text = str(leaf)
        result_numbers.update(_numbers(text))
        words = text.split()
        if (
            0 < len(words) <= _FACT_MAX_WORDS
            and (len(text.strip()) >= 2 or text.strip().isupper())
            and _has_word(text)
            and _contains_phrase(answer, text)
        ):
            phrases.append(" ".join(words))
    found: list[tuple[int, str]] = []
    for match in _NUMBER.finditer(answer):
        if float(match.group()) in result_numbers:
            found.append((match.start(), match.group()))
    for phrase in phrases:
        at = _phrase_pattern(phrase).search(answer)
        found.append((at.start() if at else len(answer), phrase))
    facts: list[str] = []
    seen: set[str] = set()
    for _position, fact in sorted(found, key=lambda pair: pair[0]):
        key = str(float(fact)) if _is_number(fact) else _normalise(fact)
        if key not in seen:
            seen.add(key)
            facts.append(fact)
    return tuple(facts)


def fact_stated(fact: str, reply: str) -> bool:
    """Whether ``reply`` states ``fact``: the same number, or the phrase as a whole."""
    if _is_number(fact):
        return float(fact) in {float(n) for n in _numbers(reply)}
    return _contains_phrase(reply, fact)


# --- the checks ------------------------------------------------------------------------------


def _steps(trace: Trace, kind: str) -> list[Mapping[str, Any]]:
    return [s for s in trace.get("steps", ()) if s.get("kind") == kind]


def _call_text(name: str, arguments: Any) -> str:
    args = arguments if isinstance(arguments, Mapping) else {}
    return f"{name} {json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)}"


def _same_price(a: float, b: float) -> bool:
    return abs(a - b) < _PRICE_TOLERANCE


def _brief(items: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def rule_checks(trace: Trace, gold: Gold, facts: Sequence[str] = ()) -> tuple[RuleCheck, ...]:
    """Every check of ``CHECKS`` except ``judge``, in that order."""
    reply = str(trace.get("reply") or "").strip()
    fallback = bool(trace.get("fallback_used"))
    checks = [
        RuleCheck(
            "answered",
            not fallback and bool(reply),
            True,
            f"fallback: {trace.get('fallback_reason') or 'unknown'}"
            if fallback
            else ("" if reply else "the reply is empty"),
        ),
        RuleCheck(
            "reply_length",
            0 < len(reply) <= MAX_REPLY_CHARS,
            True,
            f"{len(reply)} characters (allowed 1-{MAX_REPLY_CHARS})",
        ),
        _skill_check(trace, gold),
        *_tool_checks(trace, gold),
        *_price_checks(trace, gold, reply, fallback),
        _facts_check(facts, reply, fallback),
    ]
    unreadable = [s for s in _steps(trace, "error") if s.get("name") == "unreadable_output"]
    checks.append(
        RuleCheck(
            "readable",
            not unreadable,
            False,
            f"{len(unreadable)} unreadable answer(s): "
            + _brief([str(s.get("detail", {}).get("problem", "")) for s in unreadable], 1)
            if unreadable
            else "",
        )
    )
    interventions = [f"retry by {s.get('name')}" for s in _steps(trace, "retry")] + [
        f"{s.get('detail', {}).get('action')} by {s.get('detail', {}).get('hook')}"
        for s in _steps(trace, "hook")
        if s.get("detail", {}).get("action") in ("block", "fallback_reply")
    ]
    checks.append(RuleCheck("hooks_allowed", not interventions, False, _brief(interventions)))
    return tuple(checks)


def _skill_check(trace: Trace, gold: Gold) -> RuleCheck:
    wanted = gold.get("skill")
    loaded = [
        str(s.get("name")) for s in _steps(trace, "skill_load") if s.get("detail", {}).get("ok")
    ]
    if not wanted:
        return RuleCheck(
            "skill",
            not loaded,
            False,
            f"no skill needed; loaded {_brief(loaded)}" if loaded else "no skill needed",
        )
    if wanted in loaded:
        late = loaded[0] != wanted
        return RuleCheck("skill", True, True, f"loaded after {loaded[0]}" if late else "")
    return RuleCheck(
        "skill",
        False,
        True,
        f"{wanted} was not loaded" + (f" (loaded: {_brief(loaded)})" if loaded else ""),
    )


def _tool_checks(trace: Trace, gold: Gold) -> list[RuleCheck]:
    gold_calls = [
        _call_text(str(c["name"]), c.get("arguments") or {}) for c in gold.get("tool_calls", ())
    ]
    made = [
        (_call_text(str(s.get("name")), s.get("detail", {}).get("arguments")), s)
        for s in _steps(trace, "tool_call")
    ]
    succeeded = {text for text, step in made if step.get("detail", {}).get("ok")}
    missing = [c for c in dict.fromkeys(gold_calls) if c not in succeeded]
    checks = [
        RuleCheck(
            "gold_tool_calls",
            not missing,
            bool(gold_calls),
            f"missing: {_brief(missing)}" if missing else ("" if gold_calls else "no tool needed"),
        )
    ]
    remaining = set(gold_calls)
    extra: list[str] = []
    for text, step in made:
        detail = step.get("detail", {})
        if detail.get("ok") and text in remaining:
            remaining.discard(text)
        elif not detail.get("ok"):
            extra.append(f"{text} failed: {detail.get('error') or 'error'}")
        else:
            extra.append(f"{text} not needed")
    checks.append(RuleCheck("extra_tool_calls", not extra, False, _brief(extra)))
    return checks


def _price_checks(trace: Trace, gold: Gold, reply: str, fallback: bool) -> list[RuleCheck]:
    stated = quoted_prices(reply) if not fallback else []
    wanted = [float(p) for p in gold.get("quoted_prices", ())]
    unquoted = [w for w in wanted if not any(_same_price(w, s) for s in stated)]
    known = [
        p
        for s in _steps(trace, "tool_call")
        for p in catalog_prices(s.get("detail", {}).get("result"))
    ]
    known += [float(p) for p in gold.get("catalog_prices", ())]
    ungrounded = [s for s in stated if not any(_same_price(s, k) for k in known)]
    return [
        RuleCheck(
            "gold_prices_quoted",
            not unquoted,
            bool(wanted),
            f"not stated: {_brief([f'{p:.2f}' for p in unquoted])}" if unquoted else "",
        ),
        RuleCheck(
            "prices_grounded",
            not ungrounded,
            True,
            f"no tool returned {_brief([f'{p:.2f}' for p in ungrounded])}" if ungrounded else "",
        ),
    ]


def _facts_check(facts: Sequence[str], reply: str, fallback: bool) -> RuleCheck:
    if not facts:
        return RuleCheck("facts_stated", True, False, "no gold facts")
    missing = [f for f in facts if fallback or not fact_stated(f, reply)]
    return RuleCheck(
        "facts_stated", not missing, True, f"not stated: {_brief(missing)}" if missing else ""
    )
