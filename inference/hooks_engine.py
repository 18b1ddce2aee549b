"""Run a harness's hooks at their lifecycle points.

Conditions are data (CEL or RE2, compiled once per harness and cached); nothing here executes
stored code. A condition that errors or runs over its time limit is decided by the hook's
``fail_mode``: ``open`` lets the step through (the hook is skipped), ``closed`` treats it as
fired. The first hook that fires with a non-``allow`` action decides.

Time: a CEL evaluation is *stopped* at its limit, the hook's ``timeout_ms`` or what is left of
the reply's ``deadline``, whichever is sooner (``ConditionTimeout``), not measured after it
finishes. Once the deadline has passed, the remaining hooks of the event are not evaluated
and each is decided by its ``fail_mode``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from harness_app.harness.conditions import (
    CompiledCondition,
    ConditionRuntimeError,
    ConditionTimeout,
    compile_condition,
    matcher_matches,
)
from harness_app.harness.model import Hook

TOOL_EVENTS = ("pre_tool_use", "post_tool_use")


@lru_cache(maxsize=4096)
def _compiled(kind: str, source: str, event: str) -> CompiledCondition:
    return compile_condition(kind, source, event)


@dataclass(frozen=True)
class HookDecision:
    """What the hooks say about one step. ``action`` is ``allow`` when no hook fired."""

    action: str
    hook: str = ""
    feedback: str = ""
    fallback_reply: str = ""
    max_retries: int = 0
    error: str = ""
    evaluated: tuple[dict[str, object], ...] = ()


ALLOW = HookDecision("allow")


class HooksEngine:
    def __init__(self, hooks: tuple[Hook, ...]) -> None:
        self._by_event: dict[str, list[Hook]] = {}
        for hook in hooks:
            self._by_event.setdefault(hook.event, []).append(hook)
            _compiled(hook.condition_kind, hook.condition, hook.event)  # compile up front

    def has(self, event: str) -> bool:
        return bool(self._by_event.get(event))

    def run(
        self,
        event: str,
        activation: Mapping[str, object],
        tool_name: str | None = None,
        *,
        deadline: float | None = None,
    ) -> HookDecision:
        """``deadline`` is a ``time.perf_counter()`` value: the reply's deadline."""
        evaluated: list[dict[str, object]] = []
        for hook in self._by_event.get(event, ()):
            if event in TOOL_EVENTS and not matcher_matches(hook.matcher, tool_name or ""):
                continue
            fired, error = self._evaluate(hook, activation, deadline)
            evaluated.append({"hook": hook.name, "fired": fired, "error": error})
            if fired and hook.action != "allow":
                return HookDecision(
                    action=hook.action,
                    hook=hook.name,
                    feedback=hook.feedback,
                    fallback_reply=hook.fallback_reply,
                    max_retries=hook.max_retries,
                    error=error,
                    evaluated=tuple(evaluated),
                )
        return HookDecision("allow", evaluated=tuple(evaluated))

    @staticmethod
    def _evaluate(
        hook: Hook, activation: Mapping[str, object], deadline: float | None
    ) -> tuple[bool, str]:
        limit_s = hook.timeout_ms / 1000
        if deadline is not None:
            left = deadline - time.perf_counter()
            if left <= 0:
                return hook.fail_mode == "closed", "not evaluated: the reply's deadline passed"
            limit_s = min(limit_s, left)
        started = time.perf_counter()
        compiled = _compiled(hook.condition_kind, hook.condition, hook.event)
        try:
            fired = compiled.evaluate(activation, time_limit_s=limit_s)
        except ConditionTimeout as exc:
            elapsed_ms = (time.perf_counter() - started) * 1000
            return hook.fail_mode == "closed", (
                f"{exc} ({elapsed_ms:.1f} ms; limit {limit_s * 1000:.1f} ms: timeout_ms "
                f"{hook.timeout_ms} or the time left before the reply's deadline)"
            )
        except ConditionRuntimeError as exc:
            return hook.fail_mode == "closed", f"condition error: {exc}"
        elapsed_ms = (time.perf_counter() - started) * 1000
        if elapsed_ms > hook.timeout_ms:
            # Regex conditions are not interruptible (RE2 is linear in the text); an
            # over-budget result is not trusted.
            return hook.fail_mode == "closed", (
                f"condition took {elapsed_ms:.1f} ms, over its {hook.timeout_ms} ms budget"
            )
        return fired, ""
