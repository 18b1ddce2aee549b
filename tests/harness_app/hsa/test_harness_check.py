"""The cached harness check reports exactly what validate_harness reports."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_app.harness.model import (
    Harness,
    Hook,
    Prompt,
    PromptSection,
    Skill,
    Tool,
    ToolExecutor,
)
from harness_app.harness.validation import validate_harness
from harness_app.hsa.harness_check import harness_problems
from tests.harness_app.harness.strategies import harnesses


def _paths(errors: list) -> list[str]:  # type: ignore[type-arg]
    return sorted(error.path for error in errors)


def _breakages(harness: Harness) -> list[Harness]:
    """One invalid variant of ``harness`` per rule family."""
    tool = Tool("ok_tool", "A tool.", {"type": "object", "properties": {"a": {"type": "string"}}})
    variants = [
        Harness(skills=(Skill("Bad Name", "Use when x."),)),
        Harness(skills=(Skill("dup", "d"), Skill("dup", " "))),
        Harness(skills=(Skill("s", "x" * 1025, allowed_tools=("missing",)),)),
        Harness(tools=(dataclasses.replace(tool, input_schema={"type": "dict"}),)),
        Harness(
            tools=(
                dataclasses.replace(
                    tool, input_schema={"type": "object", "properties": {"a": {"type": "float"}}}
                ),
            )
        ),
        Harness(
            tools=(
                dataclasses.replace(
                    tool, input_schema={"type": "object", "properties": {"a": {"pattern": "("}}}
                ),
            )
        ),
        Harness(
            tools=(
                dataclasses.replace(tool, input_schema={"type": "object", "required": ["a", "a"]}),
            )
        ),
        Harness(tools=(dataclasses.replace(tool, input_schema={"type": "object", "x": (1, 2)}),)),
        Harness(
            tools=(
                dataclasses.replace(tool, input_schema={"type": "object", "default": float("nan")}),
            )
        ),
        Harness(
            tools=(dataclasses.replace(tool, executor=ToolExecutor("webhook", url="ftp://x")),)
        ),
        Harness(tools=(tool, dataclasses.replace(tool, name="bad name!", description="  "))),
        Harness(
            prompt=Prompt((PromptSection("Bad Id", " ", "{nope}"), PromptSection("a", "A", "{0}")))
        ),
        Harness(hooks=(Hook("h", "pre_reply", "reply +", feedback="f"),)),
        Harness(hooks=(Hook("h", "pre_reply", "size(reply) > 1", matcher="get_*", feedback=""),)),
        Harness(
            hooks=(Hook("h", "on_comment", "(a", condition_kind="regex", action="fallback_reply"),)
        ),
        Harness(hooks=(Hook("h", "pre_reply", "true", condition_kind="lua"),)),  # type: ignore[arg-type]
        Harness(
            hooks=(
                Hook("h", "pre_reply", "true", feedback="x"),
                Hook("h", "pre_reply", "true", feedback="x"),
            )
        ),
    ]
    return [
        Harness(
            skills=harness.skills + variant.skills if not variant.tools else variant.skills,
            tools=variant.tools or harness.tools,
            prompt=variant.prompt if variant.prompt.sections else harness.prompt,
            hooks=variant.hooks or harness.hooks,
        )
        for variant in variants
    ]


@settings(max_examples=30, deadline=None)
@given(harness=harnesses(), data=st.data())
def test_same_errors_as_validate_harness_on_invalid_harnesses(
    harness: Harness, data: st.DataObject
) -> None:
    broken = data.draw(st.sampled_from(_breakages(harness)))
    expected = validate_harness(broken)
    assert expected  # every breakage is invalid
    assert sorted(map(str, harness_problems(broken))) == sorted(map(str, expected))
    # and again, now from the caches
    assert sorted(map(str, harness_problems(broken))) == sorted(map(str, expected))


@pytest.mark.parametrize("index", range(17))
def test_each_breakage_on_the_demo_gives_the_same_messages(demo: Harness, index: int) -> None:
    broken = _breakages(demo)[index]
    expected = sorted(str(e) for e in validate_harness(broken))
    assert sorted(str(e) for e in harness_problems(broken)) == expected


def test_an_edited_component_is_rechecked(demo: Harness) -> None:
    assert harness_problems(demo) == []
    bad_tool = dataclasses.replace(demo.tools[0], name="no spaces allowed")
    edited = Harness(demo.skills, (bad_tool, *demo.tools[1:]), demo.prompt, demo.hooks)
    assert _paths(harness_problems(edited)) == _paths(validate_harness(edited))
    assert "tools[0].name" in _paths(harness_problems(edited))
    assert harness_problems(demo) == []
