"""HarnessAgent, the treatment arm: the model reads the *current* harness.

The system prompt is the harness's assembled prompt; skills are listed by name and
description only, and a skill's body enters the conversation when the model selects it with
the built-in ``load_skill`` tool. Tool arguments are validated against each tool's schema
before execution, and hooks run at on_comment, pre_tool_use, post_tool_use and pre_reply, with
retry_with_feedback up to the hook's max_retries and its fallback reply when they run out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harness_app.harness.model import Harness
from harness_app.harness.prompt import PromptContext, PromptLayout, assemble_prompt
from inference.agents.model_port import ChatModel
from inference.agents.session import (
    AgentConfig,
    DeadlineExceeded,
    LiveContext,
    Session,
    catalog_prices,
    parse_arguments,
    quoted_prices,
)
from inference.clients.text_actions import (
    NoJsonBlock,
    TextActionError,
    parse_text_action,
    render_text_action_instructions,
)
from inference.hooks_engine import HookDecision, HooksEngine
from inference.tools.runner import ToolRunner
from inference.trace import ReplyTrace

LOAD_SKILL = "load_skill"


@dataclass(frozen=True)
class _Call:
    id: str
    name: str
    arguments: Any
    parse_error: str = ""


class HarnessAgent:
    name = "harness"

    def __init__(
        self,
        *,
        model: ChatModel,
        harness: Harness,
        tools: ToolRunner,
        config: AgentConfig,
        prompt_layout: PromptLayout = "markdown",
    ) -> None:
        """``prompt_layout``: how the system prompt's sections are laid out (HSA's prompt
        structure transforms vary it; a published harness uses the default)."""
        self.model = model
        self.harness = harness
        self.prompt_layout: PromptLayout = prompt_layout
        self.tools = tools
        self.config = config
        self.hooks = HooksEngine(harness.hooks)
        self._tool_specs = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                },
            }
            for t in harness.tools
        ]
        if harness.skills:
            self._tool_specs.insert(
                0,
                {
                    "type": "function",
                    "function": {
                        "name": LOAD_SKILL,
                        "description": "Load the full instructions of one skill before using it.",
                        "parameters": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string", "enum": [s.name for s in harness.skills]}
                            },
                            "required": ["name"],
                            "additionalProperties": False,
                        },
                    },
                },
            )

    # --- public --------------------------------------------------------------------------

    def reply(self, comment: str, ctx: LiveContext, *, deadline_s: float) -> ReplyTrace:
        """Answer ``comment``; never raises for model or tool failures (see the trace)."""
        session = Session.start(self.name, self.model, self.tools, self.config, deadline_s)
        return session.guarded(lambda: self._run(session, comment, ctx))

    # --- loop ----------------------------------------------------------------------------

    def _run(self, session: Session, comment: str, ctx: LiveContext) -> ReplyTrace:
        gate = self._hook(
            session,
            "on_comment",
            {"comment": comment, "uv_id": ctx.uv_id, "product_sku": ctx.product_sku},
        )
        extra_rules = ""
        if gate.action in ("block", "fallback_reply"):
            return session.fallback(f"hook:{gate.hook}", gate.fallback_reply)
        if gate.action == "retry_with_feedback":
            extra_rules = gate.feedback
        session.messages = [
            {"role": "system", "content": self._system_prompt(ctx, extra_rules)},
            {"role": "user", "content": comment},
        ]
        seen_prices: list[float] = []
        tool_names: list[str] = []
        retries: dict[str, int] = {}
        budget = self.config.max_steps + sum(h.max_retries for h in self.harness.hooks)
        for step in range(budget):
            native = self.config.tool_mode == "native"
            result = session.call_model(self._tool_specs if native else None, f"step {step + 1}")
            calls, reply_text, parse_error = self._read(result)
            if parse_error:
                session.trace.add(
                    "error", "unreadable_output", session.trace.now_ms(), problem=parse_error
                )
                session.messages.append({"role": "assistant", "content": result.content})
                session.messages.append(
                    {
                        "role": "user",
                        "content": f"Your last message could not be read: {parse_error}. "
                        "Answer again in the required format.",
                    }
                )
                continue
            if calls:
                self._append_assistant_calls(session, result.content, calls)
                for call in calls:
                    observation, stop = self._tool_step(session, call, seen_prices, tool_names)
                    if stop is not None:
                        return stop
                    self._append_observation(session, call, observation)
                continue
            decision = self._hook(
                session,
                "pre_reply",
                {
                    "reply": reply_text,
                    "comment": comment,
                    "quoted_prices": quoted_prices(reply_text),
                    "catalog_prices": seen_prices,
                    "tool_names": tool_names,
                },
            )
            if decision.action == "allow":
                return session.trace.finish(reply_text)
            if decision.action == "retry_with_feedback":
                used = retries.get(decision.hook, 0)
                if used < decision.max_retries:
                    retries[decision.hook] = used + 1
                    session.trace.add(
                        "retry",
                        decision.hook,
                        session.trace.now_ms(),
                        attempt=used + 1,
                        feedback=decision.feedback,
                    )
                    session.messages.append({"role": "assistant", "content": reply_text})
                    session.messages.append(
                        {
                            "role": "user",
                            "content": f"[{decision.hook}] {decision.feedback} "
                            "Rewrite your reply to the viewer.",
                        }
                    )
                    continue
            return session.fallback(f"hook:{decision.hook}", decision.fallback_reply)
        return session.fallback("max_steps")

    def _tool_step(
        self, session: Session, call: _Call, seen_prices: list[float], tool_names: list[str]
    ) -> tuple[dict[str, Any], ReplyTrace | None]:
        if call.parse_error:
            return {"error": call.parse_error}, None
        if call.name == LOAD_SKILL:
            return self._load_skill(session, call.arguments), None
        tool_names.append(call.name)
        pre = self._hook(
            session,
            "pre_tool_use",
            {"tool_name": call.name, "args": _as_dict(call.arguments)},
            call.name,
        )
        if pre.action == "fallback_reply":
            return {}, session.fallback(f"hook:{pre.hook}", pre.fallback_reply)
        if pre.action in ("block", "retry_with_feedback"):
            return {"error": f"blocked by {pre.hook}: {pre.feedback or 'not allowed'}"}, None
        outcome = session.run_tool(call.name, call.arguments)
        seen_prices.extend(catalog_prices(outcome.result))
        post = self._hook(
            session,
            "post_tool_use",
            {
                "tool_name": call.name,
                "args": _as_dict(call.arguments),
                "result": outcome.result,
                "error": outcome.result.get("error", "") if not outcome.ok else "",
            },
            call.name,
        )
        if post.action == "fallback_reply":
            return {}, session.fallback(f"hook:{post.hook}", post.fallback_reply)
        if post.action in ("block", "retry_with_feedback"):
            return {
                "error": f"result withheld by {post.hook}: {post.feedback or 'not allowed'}"
            }, None
        return outcome.result, None

    def _load_skill(self, session: Session, arguments: Any) -> dict[str, Any]:
        started = session.trace.now_ms()
        name = str(_as_dict(arguments).get("name", ""))
        skill = self.harness.skill(name)
        if skill is None:
            known = ", ".join(s.name for s in self.harness.skills)
            session.trace.add("skill_load", name or "?", started, ok=False)
            return {"error": f"unknown skill {name!r}; skills: {known}"}
        session.trace.skill = skill.name
        session.trace.add("skill_load", skill.name, started, ok=True)
        return {
            "skill": skill.name,
            "instructions": skill.body,
            "allowed_tools": list(skill.allowed_tools),
        }

    # --- helpers -------------------------------------------------------------------------

    def _system_prompt(self, ctx: LiveContext, extra_rules: str) -> str:
        prompt = assemble_prompt(
            self.harness,
            PromptContext(
                room_name=ctx.room_name,
                room_locale=ctx.room_locale,
                currency=ctx.currency,
                product_title=ctx.product_title,
                product_sku=ctx.product_sku,
                product_price=ctx.product_price,
                recent_comments=ctx.recent_comments,
                today=ctx.today,
            ),
            self.prompt_layout,
        )
        parts = [prompt]
        if self.harness.skills:
            parts.append(
                "Before acting on a request, call load_skill with the skill that fits "
                "it and follow its instructions."
            )
        if self.config.tool_mode == "text":
            parts.append(render_text_action_instructions(self._tool_specs))
        if extra_rules:
            parts.append(extra_rules)
        return "\n\n".join(parts)

    def _read(self, result: Any) -> tuple[list[_Call], str, str]:
        """(tool calls, final reply text, parse error) from one model answer."""
        if self.config.tool_mode == "native":
            if result.tool_calls:
                calls = []
                for i, c in enumerate(result.tool_calls):
                    args, error = parse_arguments(c.arguments_json)
                    calls.append(_Call(c.id or f"call_{i}", c.name, args, error))
                return calls, "", ""
            text = (result.content or "").strip()
            return [], text, "" if text else "the reply was empty"
        try:
            action = parse_text_action(result.content or "")
        except NoJsonBlock:
            # Plain prose with no action block at all is the model talking to the viewer:
            # small models often answer directly. A block that is there but malformed is not
            # guessed at (below).
            text = (result.content or "").strip()
            return [], text, "" if text else "the reply was empty"
        except TextActionError as exc:
            return [], "", str(exc)
        if action.kind == "call_tool":
            return [_Call("text_0", action.tool, action.arguments)], "", ""
        return [], action.text.strip(), "" if action.text.strip() else "the reply was empty"

    def _append_assistant_calls(self, session: Session, content: str, calls: list[_Call]) -> None:
        if self.config.tool_mode == "native":
            session.messages.append(
                {
                    "role": "assistant",
                    "content": content or None,
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                        }
                        for c in calls
                    ],
                }
            )
        else:
            session.messages.append({"role": "assistant", "content": content})

    def _append_observation(
        self, session: Session, call: _Call, observation: dict[str, Any]
    ) -> None:
        text = json.dumps(observation, ensure_ascii=False, default=str)[:4000]
        if self.config.tool_mode == "native":
            session.messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
        else:
            session.messages.append(
                {"role": "user", "content": f"Observation from {call.name}: {text}"}
            )

    def _hook(
        self, session: Session, event: str, activation: dict[str, Any], tool_name: str | None = None
    ) -> HookDecision:
        if not self.hooks.has(event):
            return HookDecision("allow")
        if session.remaining_s() <= 0:
            raise DeadlineExceeded(f"no time left for the {event} hooks")
        started = session.trace.now_ms()
        decision = self.hooks.run(
            event,
            activation,
            tool_name,
            deadline=session.deadline - session.config.deadline_margin_s,
        )
        session.trace.add(
            "hook",
            event,
            started,
            action=decision.action,
            hook=decision.hook,
            error=decision.error,
            evaluated=list(decision.evaluated),
        )
        return decision


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
