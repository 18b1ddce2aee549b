"""A deterministic in-process model for unit tests of the agent loops (never a demo)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from inference.agents.model_port import ModelCallFailed


@dataclass
class Call:
    id: str
    name: str
    arguments_json: str


@dataclass
class Usage:
    prompt_tokens: int = 10
    completion_tokens: int = 5


@dataclass
class Timings:
    ttft_s: float | None = 0.001
    total_s: float = 0.002


@dataclass
class Result:
    content: str = ""
    tool_calls: list[Any] = field(default_factory=list)
    finish_reason: str | None = "stop"
    usage: Any = field(default_factory=Usage)
    timings: Any = field(default_factory=Timings)


def say(text: str) -> Result:
    return Result(content=text)


def call(tool: str, **arguments: Any) -> Result:
    return Result(
        tool_calls=[Call(f"c_{tool}", tool, json.dumps(arguments))], finish_reason="tool_calls"
    )


def raw_call(name: str, arguments_json: str) -> Result:
    return Result(tool_calls=[Call(f"c_{name}", name, arguments_json)], finish_reason="tool_calls")


class ScriptedModel:
    """Returns scripted results in order; an exception instance in the script is raised;
    ``("sleep", s)`` sleeps then times out like a real client would past its timeout."""

    name = "scripted"

    def __init__(self, *script: Any) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: Any,
        max_tokens: int,
        temperature: float,
        timeout_s: float,
    ) -> Any:
        self.requests.append(
            {"messages": [dict(m) for m in messages], "tools": tools, "timeout_s": timeout_s}
        )
        if not self.script:
            raise AssertionError("the agent asked the model more often than scripted")
        item = self.script.pop(0)
        if isinstance(item, tuple) and item[0] == "sleep":
            time.sleep(min(item[1], timeout_s))
            if item[1] > timeout_s:
                raise ModelCallFailed("timeout", f"no answer within {timeout_s:.2f} s")
            return say("late")
        if isinstance(item, Exception):
            raise item
        return item
