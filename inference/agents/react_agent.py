"""ReActAgent, the control arm: a classic thought / action / observation loop over the same
tools, with a fixed prompt, no skills and no hooks (Yao et al., 2023 format)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from harness_app.harness.model import Tool
from inference.agents.model_port import ChatModel
from inference.agents.session import AgentConfig, LiveContext, Session
from inference.tools.runner import ToolRunner
from inference.trace import ReplyTrace

_FINAL = re.compile(r"Final Answer\s*:\s*(.+)", re.IGNORECASE | re.DOTALL)
_ACTION = re.compile(
    r"Action\s*:\s*([A-Za-z0-9_.-]+)\s*\n\s*Action Input\s*:\s*(.*)", re.IGNORECASE | re.DOTALL
)


@dataclass(frozen=True)
class ReactStep:
    kind: str  # "action" | "final" | "invalid"
    tool: str = ""
    arguments: Any = None
    text: str = ""


def parse_react(text: str) -> ReactStep:
    """Read one ReAct turn. Anything after a hallucinated 'Observation:' is ignored."""
    text = re.split(r"\n\s*Observation\s*:", text, maxsplit=1)[0]
    action = _ACTION.search(text)
    final = _FINAL.search(text)
    if action and (not final or action.start() < final.start()):
        raw = action.group(2)
        start = raw.find("{")
        try:
            arguments, _ = json.JSONDecoder().raw_decode(raw[start:]) if start >= 0 else (None, 0)
        except json.JSONDecodeError:
            arguments = None
        if not isinstance(arguments, dict):
            return ReactStep("invalid", text="Action Input must be one JSON object")
        return ReactStep("action", tool=action.group(1), arguments=arguments)
    if final:
        return ReactStep("final", text=final.group(1).strip())
    return ReactStep("invalid", text="write either 'Action:' + 'Action Input:' or 'Final Answer:'")


class ReActAgent:
    name = "react"

    def __init__(
        self,
        *,
        model: ChatModel,
        system_prompt: str,
        tools: tuple[Tool, ...],
        runner: ToolRunner,
        config: AgentConfig,
    ) -> None:
        self.model = model
        self.system_prompt = system_prompt
        self.tools = tools
        self.runner = runner
        self.config = config

    def reply(self, comment: str, ctx: LiveContext, *, deadline_s: float) -> ReplyTrace:
        session = Session.start(self.name, self.model, self.runner, self.config, deadline_s)
        return session.guarded(lambda: self._run(session, comment, ctx))

    def _run(self, session: Session, comment: str, ctx: LiveContext) -> ReplyTrace:
        tool_lines = "\n".join(
            f"- {t.name}: {t.description} Input: {json.dumps(t.input_schema.get('properties', {}))}"
            for t in self.tools
        )
        context = (
            f"Room: {ctx.room_name}. Currency: {ctx.currency}. Product on screen: "
            f"{ctx.product_title or 'none'} (SKU {ctx.product_sku or '-'})."
        )
        session.messages = [
            {
                "role": "system",
                "content": f"{self.system_prompt}\n\nTools:\n{tool_lines}\n\n{context}",
            },
            {"role": "user", "content": comment},
        ]
        for step in range(self.config.max_steps):
            result = session.call_model(None, f"step {step + 1}")
            parsed = parse_react(result.content or "")
            session.messages.append({"role": "assistant", "content": result.content})
            if parsed.kind == "final" and parsed.text:
                return session.trace.finish(parsed.text)
            if parsed.kind == "action":
                outcome = session.run_tool(parsed.tool, parsed.arguments)
                observation = json.dumps(outcome.result, ensure_ascii=False, default=str)[:4000]
            else:
                session.trace.add(
                    "error",
                    "unreadable_output",
                    session.trace.now_ms(),
                    problem=parsed.text or "empty answer",
                )
                observation = json.dumps({"error": parsed.text or "empty answer"})
            session.messages.append({"role": "user", "content": f"Observation: {observation}"})
        return session.fallback("max_steps")
