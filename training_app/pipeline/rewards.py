"""HSA-RL rewards: plain functions of one rollout's trace and its (augmented) gold trajectory.

Each component scores one thing and returns a float; ``reward_functions`` wraps them in the
shape TRL's ``GRPOTrainer`` calls (``func(prompts=, completions=, **columns) -> list[float]``),
reading the ``trace``, ``gold`` and ``reasoning_tokens`` columns the rollout adds. TRL logs
each as ``rewards/<name>/mean`` and ``/std``, and weights them with ``reward_weights``.

- ``accuracy``: the facts the gold needs were looked up and stated: gold tool calls made
  (name and arguments), gold prices quoted, and no price quoted that no tool returned.
- ``effectiveness``: rule checks on the outcome: the model itself answered (no fallback),
  every answer was readable, no hook had to step in (retry or block), and the reply is short
  enough to read out on air.
- ``tool_rationality``: of the tool calls made, the share that were valid and needed by the
  gold (each gold call counted once; repeats, invalid calls and calls the gold does not need
  lower it). Calling nothing when the gold needs tools scores 0.
- ``skill_selection``: the right skill was loaded first (1), only after a wrong one (0.5), or
  not at all (0); when the gold needs no skill, loading none scores 1.
- ``length_penalty``: on the reasoning text a turn writes before its action block: 0 inside
  ``[low, high]`` tokens, falling linearly outside (by ``1/low`` per missing token below,
  ``1/high`` per extra token above), floored at -1; averaged over the rollout's model turns.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inference.agents.session import catalog_prices, quoted_prices

# A reply longer than this is too long to read out in a live room.
MAX_REPLY_CHARS = 400
_JSON_FENCE = re.compile(r"```[ \t]*json", re.IGNORECASE)

Trace = Mapping[str, Any]
Gold = Mapping[str, Any]


def _steps(trace: Trace, kind: str) -> list[Mapping[str, Any]]:
    return [s for s in trace.get("steps", ()) if s.get("kind") == kind]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _call_key(name: str, arguments: Any) -> tuple[str, str]:
    return name, _canonical(arguments if isinstance(arguments, Mapping) else {})


def _gold_calls(gold: Gold) -> list[tuple[str, str]]:
    return [_call_key(c["name"], c.get("arguments") or {}) for c in gold.get("tool_calls", ())]


def _made_calls(trace: Trace) -> list[tuple[tuple[str, str], bool]]:
    """(call key, ok) of every tool call the rollout executed (skill loads are not tools)."""
    return [
        (_call_key(s["name"], s.get("detail", {}).get("arguments")), bool(s["detail"].get("ok")))
        for s in _steps(trace, "tool_call")
    ]


def _same_price(a: float, b: float) -> bool:
    return abs(a - b) < 0.005


def accuracy(trace: Trace, gold: Gold) -> float:
    if trace.get("fallback_used"):
        return 0.0
    parts: list[float] = []
    gold_calls = _gold_calls(gold)
    if gold_calls:
        made_ok = {key for key, ok in _made_calls(trace) if ok}
        parts.append(sum(1 for key in set(gold_calls) if key in made_ok) / len(set(gold_calls)))
    reply = str(trace.get("reply") or "")
    stated = quoted_prices(reply)
    wanted = [float(p) for p in gold.get("quoted_prices", ())]
    if wanted:
        parts.append(sum(1 for w in wanted if any(_same_price(w, s) for s in stated)) / len(wanted))
    if stated:
        known = [
            p for s in _steps(trace, "tool_call") for p in catalog_prices(s["detail"].get("result"))
        ]
        known += [float(p) for p in gold.get("catalog_prices", ())]
        parts.append(sum(1 for s in stated if any(_same_price(s, k) for k in known)) / len(stated))
    if not parts:  # nothing to look up, nothing to quote: answering at all is accurate
        return 1.0 if reply.strip() else 0.0
    return sum(parts) / len(parts)


def effectiveness(trace: Trace, gold: Gold | None = None) -> float:
    reply = str(trace.get("reply") or "").strip()
    checks = [
        not trace.get("fallback_used") and bool(reply),
        not any(s.get("name") == "unreadable_output" for s in _steps(trace, "error")),
        not _steps(trace, "retry")
        and not any(
            s.get("detail", {}).get("action") in ("block", "retry_with_feedback", "fallback_reply")
            for s in _steps(trace, "hook")
        ),
        0 < len(reply) <= MAX_REPLY_CHARS,
    ]
    return sum(checks) / len(checks)


def tool_rationality(trace: Trace, gold: Gold) -> float:
    needed = set(_gold_calls(gold))
    made = _made_calls(trace)
    if not made:
        return 0.0 if needed else 1.0
    remaining = set(needed)
    good = 0
    for key, ok in made:
        if ok and key in remaining:
            good += 1
            remaining.discard(key)
    return good / len(made)


def skill_selection(trace: Trace, gold: Gold) -> float:
    wanted = gold.get("skill")
    loads = [s for s in _steps(trace, "skill_load") if s.get("detail", {}).get("ok")]
    if not wanted:
        return 0.0 if loads else 1.0
    if not loads:
        return 0.0
    if loads[0]["name"] == wanted:
        return 1.0
    return 0.5 if any(s["name"] == wanted for s in loads) else 0.0


@dataclass(frozen=True)
class LengthBand:
    low: int = 100
    high: int = 200

    def __post_init__(self) -> None:
        if not 0 < self.low <= self.high:
            raise ValueError(f"length band needs 0 < low <= high, got [{self.low}, {self.high}]")


def length_penalty(reasoning_tokens: Sequence[int], band: LengthBand = LengthBand()) -> float:
    """Mean per-turn penalty (<= 0) for reasoning lengths outside ``band``."""
    if not reasoning_tokens:
        return 0.0
    total = 0.0
    for n in reasoning_tokens:
        if n < band.low:
            total += max(-1.0, -(band.low - n) / band.low)
        elif n > band.high:
            total += max(-1.0, -(n - band.high) / band.high)
    return total / len(reasoning_tokens)


def reasoning_text(turn_text: str) -> str:
    """The text a model turn writes before its ```json action block (all of it when there is
    no block: a plain-prose turn is all reasoning and reply)."""
    match = _JSON_FENCE.search(turn_text)
    return (turn_text[: match.start()] if match else turn_text).strip()


# --- TRL wrappers ----------------------------------------------------------------------------

COMPONENTS = ("accuracy", "effectiveness", "tool_rationality", "skill_selection", "length_penalty")


def _per_rollout(score: Callable[[Trace, Gold], float], name: str) -> Callable[..., list[float]]:
    def reward(*, trace: Sequence[Trace], gold: Sequence[Gold], **_: Any) -> list[float]:
        return [float(score(t, g)) for t, g in zip(trace, gold, strict=True)]

    reward.__name__ = name
    return reward


def _length_reward(band: LengthBand) -> Callable[..., list[float]]:
    def length_penalty_reward(
        *, reasoning_tokens: Sequence[Sequence[int]], **_: Any
    ) -> list[float]:
        return [length_penalty(n, band) for n in reasoning_tokens]

    length_penalty_reward.__name__ = "length_penalty"
    return length_penalty_reward


def reward_functions(
    components: Sequence[str], band: LengthBand | None
) -> list[Callable[..., list[float]]]:
    """TRL reward functions for ``components`` (names from ``COMPONENTS``), in that order.
    ``band`` None leaves the length penalty out even if it is listed."""
    funcs: list[Callable[..., list[float]]] = []
    for name in components:
        if name == "accuracy":
            funcs.append(_per_rollout(accuracy, name))
        elif name == "effectiveness":
            funcs.append(_per_rollout(lambda t, g: effectiveness(t, g), name))
        elif name == "tool_rationality":
            funcs.append(_per_rollout(tool_rationality, name))
        elif name == "skill_selection":
            funcs.append(_per_rollout(skill_selection, name))
        elif name == "length_penalty":
            if band is None:
                continue
            funcs.append(_length_reward(band))
        else:
            raise ValueError(f"unknown reward component {name!r}; known: {', '.join(COMPONENTS)}")
    return funcs
