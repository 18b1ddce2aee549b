"""Skills as ``SKILL.md`` files (the Agent Skills layout): YAML frontmatter, then the body.

::

    ---
    name: product-qa
    description: Answer product questions. Use when a viewer asks about ...
    allowed-tools:
      - get_product
    ---
    <markdown body, preserved byte for byte>

The body is everything after the closing ``---`` line, untouched, so exporting and importing
a skill never reflows an operator's instructions. ``allowed-tools`` is written as a YAML
list; a space-separated string (as other Agent Skills tools write it) is accepted on import.
"""

from __future__ import annotations

import re

from harness_app.harness.errors import FieldError, HarnessValidationError, join_path
from harness_app.harness.model import Skill
from harness_app.harness.typed_reader import TypedReader, json_type_name
from harness_app.harness.yaml_codec import dump_yaml, load_yaml

FRONTMATTER_KEYS = ("name", "description", "allowed-tools")
_OPENING = re.compile(r"\A---[ \t]*\r?\n")
_CLOSING = re.compile(r"^---[ \t]*(?:\r?\n|\Z)", re.MULTILINE)


def render_skill_md(skill: Skill) -> str:
    """The SKILL.md text for a skill (frontmatter keys in a fixed order)."""
    frontmatter: dict[str, object] = {"name": skill.name, "description": skill.description}
    if skill.allowed_tools:
        frontmatter["allowed-tools"] = list(skill.allowed_tools)
    return f"---\n{dump_yaml(frontmatter)}---\n{skill.body}"


def parse_skill_md(text: str) -> Skill:
    """Parse SKILL.md text; raises ``HarnessValidationError`` with paths such as
    ``frontmatter.name`` (YAML syntax errors carry line numbers of the whole file)."""
    opening = _OPENING.match(text)
    if opening is None:
        raise HarnessValidationError(
            [
                FieldError(
                    "frontmatter",
                    "SKILL.md must start with a '---' line, then YAML frontmatter "
                    "(name, description, allowed-tools), then a closing '---' line",
                )
            ]
        )
    closing = _CLOSING.search(text, opening.end())
    if closing is None:
        raise HarnessValidationError(
            [FieldError("frontmatter", "the frontmatter is not closed: add a '---' line after it")]
        )
    # Pad with the opening line so YAML error line numbers match the file.
    data = load_yaml("\n" + text[opening.end() : closing.start()], path="frontmatter")
    body = text[closing.end() :]
    reader = TypedReader()
    fields = reader.mapping(
        {} if data is None else data,
        "frontmatter",
        required=("name", "description"),
        optional=("allowed-tools",),
    )
    if fields is None:
        raise HarnessValidationError(reader.errors)
    allowed_tools: tuple[str, ...] = ()
    raw_tools = fields.get("allowed-tools")
    if isinstance(raw_tools, str):
        allowed_tools = tuple(raw_tools.split())
    elif raw_tools is not None:
        if isinstance(raw_tools, list):
            allowed_tools = reader.strings(fields, "allowed-tools", "frontmatter")
        else:
            reader.error(
                join_path("frontmatter", "allowed-tools"),
                f"must be a list of tool names, got {json_type_name(raw_tools)}",
            )
    skill = Skill(
        name=reader.text(fields, "name", "frontmatter"),
        description=reader.text(fields, "description", "frontmatter"),
        body=body,
        allowed_tools=allowed_tools,
    )
    if reader.errors:
        raise HarnessValidationError(reader.errors)
    return skill
