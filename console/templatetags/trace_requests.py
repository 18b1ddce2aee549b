"""What each model call of a reply was sent, rebuilt from a stored trace's ``requests``
(``inference.trace.ReplyTrace``): the system prompt, the tool specs and every turn, for the
reply page's collapsed "Sent to the model" section."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django import template

register = template.Library()


@dataclass
class SentMessage:
    index: int  # position in the conversation, from 1
    role: str
    content: str
    tool_calls: list[tuple[str, str]] = field(default_factory=list)  # (name, arguments)
    tool_call_id: str = ""
    truncated: int | None = None  # the full length when the trace cut the text

    @property
    def preview(self) -> str:
        text = " ".join(self.content.split())
        if not text and self.tool_calls:
            text = "calls " + ", ".join(name for name, _ in self.tool_calls)
        return text[:110] + ("…" if len(text) > 110 else "")


@dataclass
class SentCall:
    number: int  # the model call's number, from 1
    step: int  # its row in the timeline, from 1
    name: str
    earlier: int  # messages the call also sent, shown under the calls above
    messages: list[SentMessage]
    tools: list[tuple[str, str]] | None  # (name, spec as JSON), when they changed


@register.simple_tag
def sent_to_model(trace: Any) -> list[SentCall]:
    """Each model call's new messages and (changed) tool specs, in call order; [] for a trace
    stored before requests were recorded."""
    if not isinstance(trace, dict):
        return []
    steps = _dicts(trace.get("steps"))
    calls = []
    for number, request in enumerate(_dicts(trace.get("requests")), start=1):
        step = request.get("step")
        step_index = step if isinstance(step, int) and 0 <= step < len(steps) else -1
        name = steps[step_index].get("name", "") if step_index >= 0 else ""
        sent_from = request.get("sent_from")
        earlier = sent_from if isinstance(sent_from, int) else 0
        raw_tools = request.get("tools")
        calls.append(
            SentCall(
                number=number,
                step=step_index + 1,
                name=str(name),
                earlier=earlier,
                messages=[
                    _message(earlier + i, m)
                    for i, m in enumerate(_dicts(request.get("messages")), start=1)
                ],
                tools=[(_tool_name(t), _json(t)) for t in _dicts(raw_tools)] if raw_tools else None,
            )
        )
    return calls


def _message(index: int, raw: dict[str, Any]) -> SentMessage:
    content = raw.get("content")
    text = content if isinstance(content, str) else ("" if content is None else _json(content))
    calls = []
    for call in _dicts(raw.get("tool_calls")):
        nested = call.get("function")
        function: dict[str, Any] = nested if isinstance(nested, dict) else call
        calls.append((str(function.get("name", "?")), _json(function.get("arguments", ""))))
    truncated = raw.get("truncated")
    return SentMessage(
        index=index,
        role=str(raw.get("role", "?")),
        content=text,
        tool_calls=calls,
        tool_call_id=str(raw.get("tool_call_id") or ""),
        truncated=truncated if isinstance(truncated, int) else None,
    )


def _tool_name(spec: dict[str, Any]) -> str:
    function = spec.get("function")
    return str((function if isinstance(function, dict) else spec).get("name", "?"))


def _json(value: Any) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
