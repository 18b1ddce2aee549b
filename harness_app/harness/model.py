"""The Harness h = (S, T, P, K) as plain, immutable dataclasses.

This module is the contract between the pure harness package, the HSA engine, the agent
runtime and the Django registry. Everything here is JSON-serialisable through
``harness_to_dict`` / ``harness_from_dict`` (see ``serialization.py``); nothing imports Django.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

ExecutorKind = Literal["catalog", "webhook"]
HookEvent = Literal["on_comment", "pre_tool_use", "post_tool_use", "pre_reply"]
HookAction = Literal["allow", "block", "retry_with_feedback", "fallback_reply"]
ConditionKind = Literal["cel", "regex"]
FailMode = Literal["open", "closed"]

EXECUTOR_KINDS: tuple[str, ...] = ("catalog", "webhook")
HOOK_EVENTS: tuple[str, ...] = ("on_comment", "pre_tool_use", "post_tool_use", "pre_reply")
HOOK_ACTIONS: tuple[str, ...] = ("allow", "block", "retry_with_feedback", "fallback_reply")
CONDITION_KINDS: tuple[str, ...] = ("cel", "regex")
FAIL_MODES: tuple[str, ...] = ("open", "closed")
# Built-in catalog lookups a ``catalog`` executor may name (see ToolExecutor.operation).
CATALOG_OPERATIONS: tuple[str, ...] = (
    "get_product",
    "check_stock",
    "list_coupons",
    "get_shipping",
    "search_products",
)


@dataclass(frozen=True)
class Skill:
    """A named instruction bundle (Agent Skills convention: SKILL.md)."""

    name: str
    description: str
    body: str = ""
    allowed_tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolExecutor:
    """How a tool runs.

    ``catalog``: a built-in lookup against the room's catalog; ``operation`` names it
    (get_product, check_stock, list_coupons, get_shipping, search_products).
    ``webhook``: POST JSON to ``url``, signed with HMAC-SHA256 using the secret named by
    ``secret_ref`` (a reference, never the secret itself), with a timeout.
    """

    kind: ExecutorKind = "catalog"
    operation: str = ""
    url: str = ""
    timeout_s: float = 5.0
    secret_ref: str = ""


@dataclass(frozen=True)
class Tool:
    """A function tool with a JSON Schema (Draft 2020-12) for its input."""

    name: str
    description: str
    input_schema: dict[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    executor: ToolExecutor = field(default_factory=ToolExecutor)
    read_only: bool = True
    destructive: bool = False


@dataclass(frozen=True)
class PromptSection:
    """One ordered section of the system prompt; ``template`` uses ``{variable}`` slots."""

    id: str
    title: str
    template: str


@dataclass(frozen=True)
class Prompt:
    sections: tuple[PromptSection, ...] = ()


@dataclass(frozen=True)
class Hook:
    """A lifecycle check. The condition is data (CEL or a linear-time regex), never code.

    The hook *fires* when its condition is true (for ``regex``: when the pattern matches the
    inspected text). ``action`` is what happens when it fires.
    """

    name: str
    event: HookEvent
    condition: str
    condition_kind: ConditionKind = "cel"
    matcher: str = "*"
    action: HookAction = "retry_with_feedback"
    feedback: str = ""
    fallback_reply: str = ""
    max_retries: int = 1
    timeout_ms: int = 50
    fail_mode: FailMode = "open"


@dataclass(frozen=True)
class Harness:
    skills: tuple[Skill, ...] = ()
    tools: tuple[Tool, ...] = ()
    prompt: Prompt = field(default_factory=Prompt)
    hooks: tuple[Hook, ...] = ()

    def skill(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)

    def tool(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name == name), None)

    def hook(self, name: str) -> Hook | None:
        return next((k for k in self.hooks if k.name == name), None)
