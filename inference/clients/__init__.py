"""Clients for language-model servers.

``openai_compatible`` talks to any OpenAI-compatible chat-completions server (vLLM,
``transformers serve``, hosted APIs); ``text_actions`` is the tool-calling format for models
served without a tool-call parser.
"""

from inference.clients.openai_compatible import (
    CallTimings,
    ChatResult,
    ClientConfig,
    ModelCallError,
    ModelProtocolError,
    ModelRequestRejected,
    ModelTimeout,
    ModelUnavailable,
    OpenAICompatibleClient,
    ToolCall,
    Usage,
)

__all__ = [
    "CallTimings",
    "ChatResult",
    "ClientConfig",
    "ModelCallError",
    "ModelProtocolError",
    "ModelRequestRejected",
    "ModelTimeout",
    "ModelUnavailable",
    "OpenAICompatibleClient",
    "ToolCall",
    "Usage",
]
