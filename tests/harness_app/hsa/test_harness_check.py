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
from harness_app.hsa.harness_check import harness_problems, known_valid
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


@pytest.mark.parametrize("index", range(17))
def test_known_valid_objects_of_the_original_do_not_hide_errors(demo: Harness, index: int) -> None:
    """Checking an edit with the original's known-valid objects reports what a full check
    reports: the shortcut applies only to objects the edit shares with the original."""
    known = known_valid(demo)
    broken = _breakages(demo)[index]
    expected = sorted(str(e) for e in validate_harness(broken))
    assert sorted(str(e) for e in harness_problems(broken, known)) == expected


@pytest.mark.parametrize("name", ["renamed_tool", "no spaces allowed", "", "x" * 65, None])
def test_a_renamed_copy_of_a_known_tool_has_its_name_checked(
    demo: Harness, name: str | None
) -> None:
    """A renamed copy shares description, schema and executor with a verified tool, so only
    its name is checked; the verdict and messages are still validate_harness's (a name of
    another tool gives the duplicate error)."""
    known = known_valid(demo)
    for index, tool in enumerate(demo.tools):
        new_name = demo.tools[index - 1].name if name is None else name
        renamed = dataclasses.replace(tool, name=new_name)
        tools = (*demo.tools[:index], renamed, *demo.tools[index + 1 :])
        edited = Harness(demo.skills, tools, demo.prompt, demo.hooks)
        expected = sorted(str(e) for e in validate_harness(edited))
        assert sorted(str(e) for e in harness_problems(edited, known)) == expected


def test_a_new_schema_around_known_subschemas_is_still_checked(demo: Harness) -> None:
    tool = next(t for t in demo.tools if t.input_schema.get("properties"))
    known = known_valid(demo)
    properties = tool.input_schema["properties"]
    # The original's subschemas, shared, under a top node with an invalid keyword value.
    schema = {**tool.input_schema, "properties": dict(properties), "minProperties": -1}
    edited = Harness(
        demo.skills,
        tuple(dataclasses.replace(t, input_schema=schema) if t is tool else t for t in demo.tools),
        demo.prompt,
        demo.hooks,
    )
    expected = _paths(validate_harness(edited))
    assert expected and _paths(harness_problems(edited, known)) == expected
    with pytest.raises(ValueError, match="valid harness"):
        known_valid(edited)


@pytest.mark.parametrize(
    ("schema", "valid"),
    [
        ({"type": "object", "minProperties": 1, "maxProperties": 3, "required": ["a"]}, True),
        # each keyword seen valid on its own, then one bad value beside them
        ({"type": "object", "minProperties": 1, "maxProperties": -3}, False),
        ({"type": "object", "dependentRequired": {"a": ["b"]}, "if": True}, True),
        ({"type": "object", "dependentRequired": {"a": [1]}}, False),
        ({"type": "string", "pattern": "^a+$", "format": "date"}, True),
        ({"type": "string", "pattern": "(", "format": "date"}, False),
    ],
)
def test_keyword_by_keyword_meta_check_agrees_with_the_full_one(
    schema: dict[str, object], valid: bool
) -> None:
    """The shell cache checks each keyword on its own against the meta-schema; a schema is
    valid exactly when validate_harness accepts it."""
    tool = Tool(
        "t",
        "A tool.",
        {"type": "object", "properties": {"x": schema}},
        ToolExecutor("catalog", operation="get_product"),
    )
    harness = Harness(tools=(tool,))
    assert (validate_harness(harness) == []) is valid
    assert (harness_problems(harness) == []) is valid
