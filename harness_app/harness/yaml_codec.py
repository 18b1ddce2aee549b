"""Safe, readable YAML for harness files (raw edit mode, archives, SKILL.md frontmatter).

Loading is ``yaml.SafeLoader`` (never arbitrary Python objects) with two extra refusals:
aliases (``*ref``), because a few of them can expand a small document into gigabytes once it
is re-serialised ("billion laughs"), and duplicate keys, which PyYAML would otherwise resolve
silently by keeping the last one. Dumping writes multi-line strings as ``|`` blocks so that
prompt templates and skill bodies stay editable, and never folds long lines.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node

from harness_app.harness.errors import FieldError, HarnessValidationError

# Large enough that PyYAML never folds a line (folding is legal but unreadable when editing).
_NO_FOLDING_WIDTH = 1 << 30


class _StrictSafeLoader(yaml.SafeLoader):
    """SafeLoader that rejects aliases and duplicate mapping keys."""

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise ConstructorError(
                None,
                None,
                "aliases (*name) are not allowed; write the value out in full",
                event.start_mark,
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
            except TypeError:  # unhashable key: SafeLoader reports it below
                duplicate = False
            if duplicate:
                raise ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"duplicate key {key!r}",
                    key_node.start_mark,
                )
            if not isinstance(key, list | dict):
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


class _ReadableDumper(yaml.SafeDumper):
    """SafeDumper with indented lists and block style for multi-line strings."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        return super().increase_indent(flow, False)


# YAML treats these as line breaks and normalises them to "\n" (or folds them into spaces) in
# every style except double-quoted, where they are escaped.
_NON_LF_BREAKS = ("\r", "\x85", "\u2028", "\u2029")


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    # PyYAML falls back to a quoted style by itself when a block cannot represent the text
    # exactly (trailing spaces, special characters); other line breaks need double quotes.
    style: str | None = None
    if any(brk in data for brk in _NON_LF_BREAKS):
        style = '"'
    elif "\n" in data:
        style = "|"
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_ReadableDumper.add_representer(str, _represent_str)


def dump_yaml(data: object) -> str:
    """Serialise plain data (dicts keep their order) as readable block YAML."""
    return yaml.dump(
        data,
        Dumper=_ReadableDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=_NO_FOLDING_WIDTH,
    )


def load_yaml(text: str, *, path: str = "yaml") -> Any:
    """Parse one YAML document safely; syntax problems become a ``FieldError`` at ``path``
    whose message starts with the line and column."""
    try:
        return yaml.load(text, Loader=_StrictSafeLoader)  # strict SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        raise HarnessValidationError([FieldError(path, _describe(exc))]) from exc
    except yaml.YAMLError as exc:
        raise HarnessValidationError([FieldError(path, f"invalid YAML: {exc}")]) from exc
    except RecursionError as exc:  # PyYAML's composer recurses once per nesting level
        raise HarnessValidationError(
            [FieldError(path, "the document is nested too deeply")]
        ) from exc


def _describe(exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark or exc.context_mark
    problem = exc.problem or exc.context or "invalid YAML"
    if exc.context and exc.problem:
        problem = f"{exc.problem} ({exc.context})"
    if mark is None:
        return f"invalid YAML: {problem}"
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
