"""What a hook condition refers to: identifiers, string literals, numeric thresholds.

HSA must not change what a hook decides. A CEL condition can name a tool (``tool_name ==
"get_shipping"``), a parameter (``has(args.region)``) or a threshold (``size(reply) > 280``).
This module finds those references in the parse tree (with source positions), so renames can
rewrite exact references, leave names alone that a condition refers to in any other way, and
thresholds can be varied by rewriting one literal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import celpy
import re2
from celpy.celparser import CELParseError
from lark import Token, Tree

_ENVIRONMENT = celpy.Environment()
_COMPARISONS = {"relation_lt": "<", "relation_le": "<=", "relation_gt": ">", "relation_ge": ">="}
_SIMPLE_STRING = re.compile(r"""^(?P<q>"|')(?P<body>[^"'\\\n]*)(?P=q)$""")


@dataclass(frozen=True)
class StringLiteral:
    start: int
    end: int
    raw: str
    value: str
    simple: bool  # a plain "..." or '...' without escapes: safe to rewrite


@dataclass(frozen=True)
class NumericLiteral:
    """A number compared with ``<``, ``<=``, ``>`` or ``>=`` (the threshold of a check)."""

    start: int
    end: int
    raw: str
    value: float
    is_int: bool
    operator: str


@dataclass(frozen=True)
class CelReferences:
    identifiers: frozenset[str]
    strings: tuple[StringLiteral, ...]
    thresholds: tuple[NumericLiteral, ...]


def _string_value(raw: str) -> tuple[str, bool]:
    match = _SIMPLE_STRING.match(raw)
    if match:
        return match["body"], True
    # Raw, triple-quoted or escaped literals: strip the prefix and quotes, keep the rest
    # verbatim. Good enough for overlap checks, never used for rewriting.
    text = raw.lstrip("rRbB")
    for quote in ('"""', "'''", '"', "'"):
        if text.startswith(quote) and text.endswith(quote) and len(text) >= 2 * len(quote):
            return text[len(quote) : -len(quote)], False
    return text, False


def _bare_literal(node: Tree[Any] | Token) -> Token | None:
    while isinstance(node, Tree) and len(node.children) == 1:
        if node.data == "literal":
            child = node.children[0]
            return child if isinstance(child, Token) else None
        node = node.children[0]
    return None


@lru_cache(maxsize=4096)
def cel_references(source: str) -> CelReferences | None:
    """References in a CEL condition; ``None`` when it does not parse (validation reports
    that separately)."""
    try:
        tree = _ENVIRONMENT.compile(source)
    except (CELParseError, RecursionError):
        return None
    identifiers: set[str] = set()
    strings: list[StringLiteral] = []
    thresholds: list[NumericLiteral] = []
    stack: list[Tree[Any]] = [tree]
    while stack:
        node = stack.pop()
        if node.data == "relation" and len(node.children) == 2:
            operator_node, right = node.children
            if isinstance(operator_node, Tree) and operator_node.data in _COMPARISONS:
                operator = _COMPARISONS[operator_node.data]
                for side in (operator_node.children[0], right):
                    token = _bare_literal(side)
                    if token is not None and token.type in ("INT_LIT", "FLOAT_LIT"):
                        thresholds.append(
                            NumericLiteral(
                                start=int(token.start_pos or 0),
                                end=int(token.end_pos or 0),
                                raw=str(token),
                                value=float(str(token)),
                                is_int=token.type == "INT_LIT",
                                operator=operator,
                            )
                        )
        for child in node.children:
            if isinstance(child, Tree):
                stack.append(child)
            elif isinstance(child, Token):
                if child.type == "IDENT":
                    identifiers.add(str(child))
                elif child.type == "STRING_LIT":
                    value, simple = _string_value(str(child))
                    strings.append(
                        StringLiteral(
                            int(child.start_pos or 0),
                            int(child.end_pos or 0),
                            str(child),
                            value,
                            simple,
                        )
                    )
    strings.sort(key=lambda s: s.start)
    thresholds.sort(key=lambda t: t.start)
    return CelReferences(frozenset(identifiers), tuple(strings), tuple(thresholds))


@lru_cache(maxsize=4096)
def _regex_matches(pattern: str, text: str) -> bool:
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(pattern, options).search(text) is not None
    except re2.error:
        return False


def overlaps(name: str, literal: str) -> bool:
    """Could a condition's string ``literal`` be about ``name`` other than by being equal to
    it? (a prefix/suffix/substring test, or a ``matches()`` pattern that matches it)."""
    if not literal or not name:
        return False
    return literal in name or name in literal or _regex_matches(literal, name)


def replace_spans(source: str, edits: list[tuple[int, int, str]]) -> str:
    """``source`` with each (start, end) span replaced; spans must not overlap."""
    out: list[str] = []
    position = 0
    for start, end, text in sorted(edits):
        out.append(source[position:start])
        out.append(text)
        position = end
    out.append(source[position:])
    return "".join(out)


def format_number(value: float, is_int: bool) -> str:
    """CEL literal text for a threshold (ints stay ints, doubles keep a decimal point)."""
    if is_int:
        return str(int(value))
    text = repr(float(value))
    return text if any(c in text for c in ".eE") else f"{text}.0"
