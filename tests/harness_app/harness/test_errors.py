from __future__ import annotations

from harness_app.harness.errors import (
    ArchiveError,
    FieldError,
    HarnessValidationError,
    join_path,
    prefixed,
)


def test_field_error_str() -> None:
    assert str(FieldError("skills[2].name", "bad")) == "skills[2].name: bad"
    assert str(FieldError("", "archive too big")) == "archive too big"


def test_single_error_message_is_the_error() -> None:
    error = HarnessValidationError([FieldError("hooks[0].condition", "unknown variable 'x'")])

    assert str(error) == "hooks[0].condition: unknown variable 'x'"
    assert error.errors == [FieldError("hooks[0].condition", "unknown variable 'x'")]


def test_several_errors_are_listed() -> None:
    error = HarnessValidationError([FieldError("a", "one"), FieldError("b", "two")])

    assert str(error) == "2 problems:\n- a: one\n- b: two"


def test_archive_error_is_a_harness_validation_error() -> None:
    error = ArchiveError([FieldError("tools.json", "invalid JSON")])

    assert isinstance(error, HarnessValidationError)
    assert str(error) == "tools.json: invalid JSON"


def test_join_path() -> None:
    assert join_path("tools", 0, "input_schema", "properties", "x") == (
        "tools[0].input_schema.properties.x"
    )
    assert join_path("", "skills", 2, "name") == "skills[2].name"
    assert join_path("hooks", "[1].name") == "hooks[1].name"


def test_prefixed_reroots_errors() -> None:
    assert prefixed([FieldError("name", "bad"), FieldError("", "whole")], "skills[1]") == [
        FieldError("skills[1].name", "bad"),
        FieldError("skills[1]", "whole"),
    ]
