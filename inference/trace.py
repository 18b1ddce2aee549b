"""The trace of one reply: every model call, skill load, tool call, hook decision and retry,
with timings and tokens, so an operator can see exactly why the host said what it said."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

StepKind = Literal["model_call", "skill_load", "tool_call", "hook", "retry", "fallback", "error"]


@dataclass
class TraceStep:
    kind: StepKind
    name: str
    started_ms: float
    duration_ms: float
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class ReplyTrace:
    """Built up by an agent while it runs; serialised with ``to_dict`` for storage."""

    agent: str
    steps: list[TraceStep] = field(default_factory=list)
    reply: str = ""
    fallback_used: bool = False
    fallback_reason: str = ""
    skill: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_calls: int = 0
    model_ms: float = 0.0
    total_ms: float = 0.0
    # What each model call sent, beside the steps: {"step": index of its model_call step,
    # "sent_from": how many earlier messages it also sent (recorded with the calls before),
    # "messages": the new ones, "tools": the tool specs when they changed}. Only the new part
    # per call, so the conversation is stored once, not once per call.
    requests: list[dict[str, Any]] = field(default_factory=list)
    _t0: float = field(default_factory=time.perf_counter, repr=False)

    def now_ms(self) -> float:
        return (time.perf_counter() - self._t0) * 1000.0

    def add(self, kind: StepKind, name: str, started_ms: float, **detail: Any) -> TraceStep:
        step = TraceStep(
            kind, name, round(started_ms, 3), round(self.now_ms() - started_ms, 3), detail
        )
        self.steps.append(step)
        return step

    def finish(self, reply: str, *, fallback_reason: str = "") -> ReplyTrace:
        self.reply = reply
        self.fallback_used = bool(fallback_reason)
        self.fallback_reason = fallback_reason
        self.total_ms = round(self.now_ms(), 3)
        return self

    @property
    def overhead_ms(self) -> float:
        """Time spent outside model calls: the runtime's own cost."""
        return max(0.0, self.total_ms - self.model_ms)

    def to_dict(self) -> dict[str, Any]:
        # Built by hand: dataclasses.asdict deep-copies every step's detail, which costs more
        # than the rest of the trace write on the live path. Details are already plain JSON.
        return {
            "agent": self.agent,
            "steps": [
                {
                    "kind": s.kind,
                    "name": s.name,
                    "started_ms": s.started_ms,
                    "duration_ms": s.duration_ms,
                    "detail": s.detail,
                }
                for s in self.steps
            ],
            "reply": self.reply,
            "fallback_used": self.fallback_used,
            "fallback_reason": self.fallback_reason,
            "skill": self.skill,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "model_calls": self.model_calls,
            "model_ms": self.model_ms,
            "total_ms": self.total_ms,
            "overhead_ms": round(self.overhead_ms, 3),
            "requests": self.requests,
        }
