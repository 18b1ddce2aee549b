"""Pieces both agents share: the live context, the config, deadline-aware model calls and
tool calls that land in the trace."""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from inference.agents.model_port import ChatModel, ModelCallFailed, ModelResult
from inference.tools.runner import ToolOutcome, ToolRunner
from inference.trace import ReplyTrace

ToolMode = Literal["native", "text"]


@dataclass(frozen=True)
class LiveContext:
    """What the live room knows when a comment arrives."""

    room_name: str
    room_locale: str = "en-US"
    currency: str = "USD"
    product_sku: str = ""
    product_title: str = ""
    product_price: str = ""
    uv_id: str = ""
    recent_comments: tuple[str, ...] = ()
    today: str = ""


@dataclass(frozen=True)
class AgentConfig:
    max_steps: int = 4
    max_tokens: int = 256
    temperature: float = 0.2
    tool_mode: ToolMode = "native"
    fallback_reply: str = "Thanks for your question! Our team will get back to you in a moment."
    # Leave this much of the deadline for everything after the last model call.
    deadline_margin_s: float = 0.05


class DeadlineExceeded(Exception):
    pass


@dataclass
class Session:
    """One reply in progress: the model, tools, trace and the absolute deadline."""

    model: ChatModel
    tools: ToolRunner
    config: AgentConfig
    trace: ReplyTrace
    deadline: float  # time.perf_counter() value
    messages: list[dict[str, Any]] = field(default_factory=list)
    # What the trace already holds of the conversation: each model call records only the
    # messages (and tool specs) that are new since the call before it.
    _messages_recorded: int = 0
    _tools_recorded: list[dict[str, Any]] | None = None

    @classmethod
    def start(
        cls, agent: str, model: ChatModel, tools: ToolRunner, config: AgentConfig, deadline_s: float
    ) -> Session:
        return cls(
            model, tools, config, ReplyTrace(agent=agent), deadline=time.perf_counter() + deadline_s
        )

    def guarded(self, body: Callable[[], ReplyTrace]) -> ReplyTrace:
        """Run the agent loop; a model failure or the deadline ends in the fallback reply."""
        try:
            return body()
        except ModelCallFailed as exc:
            return self.fallback(f"model_{exc.kind}")
        except DeadlineExceeded:
            return self.fallback("deadline")

    def fallback(self, reason: str, reply: str = "") -> ReplyTrace:
        text = reply or self.config.fallback_reply
        self.trace.add("fallback", reason, self.trace.now_ms(), reply=text)
        return self.trace.finish(text, fallback_reason=reason)

    def remaining_s(self) -> float:
        return self.deadline - time.perf_counter() - self.config.deadline_margin_s

    def call_model(self, tools: list[dict[str, Any]] | None, label: str) -> ModelResult:
        remaining = self.remaining_s()
        if remaining <= 0:
            raise DeadlineExceeded("no time left for another model call")
        started = self.trace.now_ms()
        sent = self._sent_since_last_call(tools)
        try:
            result = self.model.complete(
                self.messages,
                tools=tools,
                max_tokens=self.config.max_tokens,
                temperature=self.config.temperature,
                timeout_s=remaining,
            )
        except ModelCallFailed as exc:
            self.trace.add("model_call", label, started, ok=False, error=str(exc), failure=exc.kind)
            self._record_request(sent)
            self.trace.model_ms += self.trace.now_ms() - started
            raise
        elapsed = self.trace.now_ms() - started
        self.trace.model_ms += elapsed
        self.trace.model_calls += 1
        usage = result.usage
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        self.trace.prompt_tokens += prompt_tokens
        self.trace.completion_tokens += completion_tokens
        timings = result.timings
        self.trace.add(
            "model_call",
            label,
            started,
            ok=True,
            model=self.model.name,
            ttft_ms=_ms(getattr(timings, "ttft_s", None)),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            finish_reason=result.finish_reason,
            content=result.content[:2000],
            tool_calls=[
                {"name": c.name, "arguments": c.arguments_json[:2000]} for c in result.tool_calls
            ],
        )
        self._record_request(sent)
        return result

    def _record_request(self, sent: dict[str, Any]) -> None:
        # beside the steps (not in the model call's detail): the timeline lists every detail
        # key of a step, and the request has its own place on the trace page
        self.trace.requests.append({"step": len(self.trace.steps) - 1, **sent})

    def _sent_since_last_call(self, tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        """The part of this call's request the trace does not hold yet: ``sent_from`` (how
        many earlier messages the call also sent, recorded with earlier calls), ``messages``
        (the new ones, each text cut at ``SENT_MESSAGE_CHARS``) and ``tools`` (the tool
        specs, only when they differ from the last call's)."""
        start = self._messages_recorded if self._messages_recorded <= len(self.messages) else 0
        self._messages_recorded = len(self.messages)
        sent: dict[str, Any] = {
            "sent_from": start,
            "messages": [_capped(m) for m in self.messages[start:]],
        }
        if tools and tools is not self._tools_recorded and tools != self._tools_recorded:
            sent["tools"] = tools
        self._tools_recorded = tools
        return sent

    def run_tool(self, name: str, arguments: Any) -> ToolOutcome:
        started = self.trace.now_ms()
        # A webhook may not outlive the reply: it gets what is left of the deadline.
        outcome = self.tools.run(name, arguments, budget_s=self.remaining_s())
        self.trace.add(
            "tool_call",
            name,
            started,
            ok=outcome.ok,
            arguments=arguments,
            result=outcome.result,
            error=outcome.error,
        )
        return outcome


# A message text longer than this is cut in the trace (tool results are already cut at
# 4,000 characters before they are sent); the system prompt of a real harness fits.
SENT_MESSAGE_CHARS = 16_000


def _capped(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, str) and len(content) > SENT_MESSAGE_CHARS:
        return {**message, "content": content[:SENT_MESSAGE_CHARS], "truncated": len(content)}
    return message


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)


def parse_arguments(arguments_json: str) -> tuple[Any, str]:
    """The model's tool arguments as JSON, or an error the model can act on."""
    try:
        return json.loads(arguments_json or "{}"), ""
    except json.JSONDecodeError as exc:
        return None, f"arguments are not valid JSON ({exc.msg} at column {exc.colno})"


_PRICE_RE = re.compile(
    r"(?:[$€£¥]\s?|\b(?:USD|EUR|GBP|CNY|RMB)\s?)(\d{1,7}(?:[.,]\d{1,2})?)"
    r"|(\d{1,7}(?:[.,]\d{1,2})?)\s?(?:USD|EUR|GBP|CNY|RMB|yuan|dollars?|euros?)\b",
    re.IGNORECASE,
)


def quoted_prices(text: str) -> list[float]:
    """Prices a reply states: a number next to a currency symbol, code or word."""
    prices = []
    for match in _PRICE_RE.finditer(text):
        raw = (match.group(1) or match.group(2)).replace(",", ".")
        prices.append(float(raw))
    return prices


_MONEY_KEY = re.compile(r"price|amount|threshold|cost|fee", re.IGNORECASE)


def catalog_prices(result: Any) -> list[float]:
    """Every money amount in a tool result (nested keys naming a price, amount, threshold,
    cost or fee), for the quoted-price-must-match-catalog hook."""
    found: list[float] = []
    if isinstance(result, dict):
        for key, value in result.items():
            if _MONEY_KEY.search(str(key)) and isinstance(value, int | float | str):
                with contextlib.suppress(ValueError):  # "free", "n/a": not an amount
                    found.append(float(value))
            else:
                found.extend(catalog_prices(value))
    elif isinstance(result, list):
        for item in result:
            found.extend(catalog_prices(item))
    return found
