"""``decision_profile`` without hooks: the shortcut gives what evaluating every activation
gives."""

from __future__ import annotations

from harness_app.harness.model import Harness
from harness_app.hsa.hook_decisions import DecisionProfile, decision_profile, gold_activations
from harness_app.hsa.trajectory import GoldTrajectory, ToolCall


def test_a_harness_without_hooks_has_every_step_undecided() -> None:
    for calls in ((), (ToolCall("a", {"x": 1}),), (ToolCall("a"), ToolCall("b", {"y": [1]}))):
        trajectory = GoldTrajectory(skill=None, tool_calls=calls, comment="c")
        expected = DecisionProfile(
            fired={},
            deciding=tuple((a.event, a.step, "") for a in gold_activations(trajectory)),
        )
        assert decision_profile(Harness(), trajectory) == expected
