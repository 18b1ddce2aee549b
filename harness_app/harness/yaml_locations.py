"""Where in the typed YAML each error is: line and column for the raw editor.

Syntax errors come from PyYAML with a mark (``load_yaml`` writes it as "line L, column C: ..."
at the start of the message). Shape and rule errors carry a field path
(``skills[0].allowed_tools[2]``, ``tools[1].input_schema.properties.sku.type``); the path is
walked through the document's node tree (``yaml.compose`` with the safe loader: nodes, not
values, so every node keeps its start mark). A mapping entry points at its key (the line where
``name:`` is written); a list item at the item. Where the path goes further than the document
(a missing key, a default that was filled in), the deepest node that exists is used: the
mapping the key is missing from.

No regular expression touches user text here: the path is split by hand and keys are matched
by plain string comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from harness_app.harness.errors import FieldError

SYNTAX_PATH = "yaml"
_SYNTAX_PREFIX = "line "


@dataclass(frozen=True)
class LocatedError:
    """One error with its 1-based line and column in the text (``None`` when unknown)."""

    path: str
    message: str
    line: int | None
    column: int | None

    def describe(self) -> str:
        """``line 4, column 7: skills[0].name: must be ...`` (what the editor lists)."""
        where = f"line {self.line}, column {self.column}: " if self.line is not None else ""
        shown_path = self.path if self.path and self.path != SYNTAX_PATH else ""
        return f"{where}{shown_path + ': ' if shown_path else ''}{self.message}"


def locate_errors(text: str, errors: Sequence[FieldError]) -> list[LocatedError]:
    """Each of ``errors`` with the line and column it refers to in ``text``."""
    root: Node | bool | None = False  # False: not composed yet
    located: list[LocatedError] = []
    for error in errors:
        mark = _syntax_mark(error) if error.path == SYNTAX_PATH else None
        if mark is not None:
            line, column, message = mark
            located.append(LocatedError(error.path, message, line, column))
            continue
        if root is False:
            root = _compose(text)
        node = _node_at(root, error.path) if isinstance(root, Node) else None
        if node is None:
            located.append(LocatedError(error.path, error.message, None, None))
            continue
        located.append(
            LocatedError(
                error.path, error.message, node.start_mark.line + 1, node.start_mark.column + 1
            )
        )
    return located


def error_lines(located: Sequence[LocatedError]) -> list[int]:
    """The distinct lines that have an error, in order."""
    return sorted({e.line for e in located if e.line is not None})


def _syntax_mark(error: FieldError) -> tuple[int, int, str] | None:
    """Read back the "line L, column C: message" that ``yaml_codec._describe`` wrote."""
    message = error.message
    if not message.startswith(_SYNTAX_PREFIX):
        return None
    head, sep, rest = message.partition(": ")
    if not sep:
        return None
    line_part, comma, column_part = head[len(_SYNTAX_PREFIX) :].partition(", column ")
    if not comma or not line_part.isdecimal() or not column_part.isdecimal():
        return None
    return int(line_part), int(column_part), rest


def _compose(text: str) -> Node | None:
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecursionError):
        return None


def _node_at(root: Node, path: str) -> Node | None:
    """The node ``path`` names, or the deepest existing node on the way to it."""
    node = root
    rest = path
    while rest:
        if rest.startswith("."):
            rest = rest[1:]
        if rest.startswith("["):
            close = rest.find("]")
            index_text = rest[1:close] if close > 0 else ""
            if not index_text.isdecimal() or not isinstance(node, SequenceNode):
                return node
            index = int(index_text)
            if index >= len(node.value):
                return node
            node = node.value[index]
            rest = rest[close + 1 :]
            continue
        if not isinstance(node, MappingNode):
            return node
        entry = _entry_for(node, rest)
        if entry is None:
            return node
        key_node, value_node, key = entry
        rest = rest[len(key) :]
        if not rest:
            return key_node
        node = value_node
    return node


def _entry_for(mapping: MappingNode, rest: str) -> tuple[Node, Node, str] | None:
    """The entry whose key starts ``rest`` (followed by the end, ``.`` or ``[``); the longest
    such key wins, so a property named ``a.b`` is found before a property ``a``."""
    best: tuple[Node, Node, str] | None = None
    for key_node, value_node in mapping.value:
        if not isinstance(key_node, ScalarNode):
            continue
        key = str(key_node.value)
        if not key or not rest.startswith(key):
            continue
        following = rest[len(key) : len(key) + 1]
        if following not in ("", ".", "[") or (best is not None and len(best[2]) >= len(key)):
            continue
        best = (key_node, value_node, key)
    return best
