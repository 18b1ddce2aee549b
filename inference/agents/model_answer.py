"""A plain, immutable ``ModelResult`` (``model_port``) for models that answer in-process:
scripted or replayed answers, and a local policy generating with transformers."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class AnswerToolCall:
    id: str
    name: str
    arguments_json: str


@dataclass(frozen=True)
class AnswerUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class AnswerTimings:
    ttft_s: float | None = None
    total_s: float = 0.0


@dataclass(frozen=True)
class ModelAnswer:
    content: str
    tool_calls: tuple[AnswerToolCall, ...] = ()
    finish_reason: str | None = "stop"
    usage: AnswerUsage = field(default_factory=AnswerUsage)
    timings: AnswerTimings = field(default_factory=AnswerTimings)
