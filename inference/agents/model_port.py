"""What an agent needs from a language model: one chat completion at a time.

``inference.clients.openai_compatible`` satisfies this against any OpenAI-compatible server;
tests use a scripted model. Keeping the port this small lets both arms share it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class ModelCallFailed(Exception):
    """A model call that produced no usable answer: ``kind`` is timeout, unavailable or
    protocol (a malformed response)."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        super().__init__(f"{kind}: {message}")


class ModelToolCall(Protocol):
    id: str
    name: str
    arguments_json: str


class ModelUsage(Protocol):
    prompt_tokens: int
    completion_tokens: int


class ModelTimings(Protocol):
    ttft_s: float | None
    total_s: float


class ModelResult(Protocol):
    """Read-only view of one answer (``inference.clients.openai_compatible.ChatResult``)."""

    @property
    def content(self) -> str: ...

    @property
    def tool_calls(self) -> Sequence[Any]: ...

    @property
    def finish_reason(self) -> str | None: ...

    @property
    def usage(self) -> Any: ...

    @property
    def timings(self) -> Any: ...


class ChatModel(Protocol):
    """``timeout_s`` is the most this call may take; the agent derives it from the reply's
    deadline. Every failure is raised as ``ModelCallFailed``."""

    name: str

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None,
        max_tokens: int,
        temperature: float,
        timeout_s: float,
    ) -> ModelResult: ...
