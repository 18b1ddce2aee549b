"""Adapt the OpenAI-compatible client to the agents' ``ChatModel`` port."""

from __future__ import annotations

from typing import Any

from inference.agents.model_port import ModelCallFailed
from inference.clients.openai_compatible import (
    ChatResult,
    ModelCallError,
    ModelProtocolError,
    ModelRequestRejected,
    ModelTimeout,
    ModelUnavailable,
    OpenAICompatibleClient,
)

_KINDS: tuple[tuple[type[ModelCallError], str], ...] = (
    (ModelTimeout, "timeout"),
    (ModelUnavailable, "unavailable"),
    (ModelProtocolError, "protocol"),
    (ModelRequestRejected, "rejected"),
)


class OpenAIChatModel:
    def __init__(self, client: OpenAICompatibleClient, name: str, *, stream: bool = True) -> None:
        self.client = client
        self.name = name
        # Streaming gives a real time-to-first-token in the trace.
        self.stream = stream

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None,
        max_tokens: int,
        temperature: float,
        timeout_s: float,
    ) -> ChatResult:
        try:
            return self.client.chat(
                messages,
                tools=tools,
                max_tokens=max_tokens,
                temperature=temperature,
                timeout_s=timeout_s,
                stream=self.stream,
            )
        except ModelCallError as exc:
            kind = next((k for cls, k in _KINDS if isinstance(exc, cls)), "unavailable")
            raise ModelCallFailed(kind, str(exc)) from exc
