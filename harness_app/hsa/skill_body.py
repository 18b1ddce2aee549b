"""Skill bodies as steps and lines: parse, re-render, and the constraints that must survive.

A body is read as a sequence of plain lines and *list groups* (consecutive numbered or
bulleted steps; an indented line continues the step above it). Skill-content transforms may
reorder unordered items, change list markers, turn a list into prose and reword the framing
(headings, list labels, lead-ins), but never a step's text or a line that carries a constraint
(numbers, quoted strings, identifiers such as tool names, or words like must/never/only).

``constraint_units`` is the contract: every unit of the original body must appear, whitespace
normalised, in the transformed body. Verification checks it for every skill of every example.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from harness_app.hsa.banks import (
    BULLET_MARKERS,
    HEADING_FRAMES,
    LABEL_SYNONYMS,
    LEAD_INS,
    NUMBER_STYLES,
    PROSE_CONNECTIVES,
    SPLITS,
    Split,
)
from harness_app.hsa.naming import looks_like_identifier

_STEP = re.compile(
    r"^[ \t]{0,3}(?:(?P<number>\d{1,3}[.)]|Step \d{1,3}:|\(\d{1,3}\)|#\d{1,3})"
    r"|(?P<bullet>[-*+\u2022]))[ \t]+(?P<text>\S.*)$"
)
_CONSTRAINT_WORDS = re.compile(
    r"\b(?:must|never|only|always|not|no|none|cannot|can't|don't|do not|exactly|at most|"
    r"at least|unless|except|avoid|forbid\w*|required?|limit\w*)\b",
    re.IGNORECASE,
)
_QUOTES: Final = "\"'`\u201c\u201d\u2018\u2019\u300c\u300d"
_WORD = re.compile(r"[A-Za-z0-9_.\-]+")
_LEAD_IN_TEXTS: Final = frozenset(text for split in SPLITS for text in LEAD_INS[split])


@dataclass(frozen=True)
class Group:
    """A run of list steps. ``style`` is the marker format: ``{n}.``-like for numbered lists,
    the bullet character for bullet lists, ``prose`` after a prose rendering."""

    steps: tuple[str, ...]
    numbered: bool
    style: str


Block = str | Group


def normalise(text: str) -> str:
    return " ".join(text.split())


def _number_style(marker: str) -> str:
    return re.sub(r"\d{1,3}", "{n}", marker, count=1)


@lru_cache(maxsize=1024)
def parse_body(body: str) -> tuple[Block, ...]:
    """Lines and list groups, in order (cached: bodies repeat across examples)."""
    blocks: list[Block] = []
    steps: list[list[str]] = []
    numbered = False
    style = ""

    def close() -> None:
        if steps:
            blocks.append(Group(tuple(normalise(" ".join(s)) for s in steps), numbered, style))
            steps.clear()

    for line in body.split("\n"):
        match = _STEP.match(line)
        if match:
            is_numbered = match["number"] is not None
            marker = match["number"] or match["bullet"]
            marker_style = _number_style(marker) if is_numbered else marker
            if steps and (is_numbered != numbered or marker_style != style):
                close()
            numbered, style = is_numbered, marker_style
            steps.append([match["text"]])
        elif steps and line[:1] in (" ", "\t") and line.strip():
            steps[-1].append(line.strip())
        else:
            close()
            blocks.append(line)
    close()
    return tuple(blocks)


def render_group(group: Group, connectives: Sequence[str] = ()) -> str:
    if group.style == "prose":
        last = len(group.steps) - 1
        words = connectives or ("",)
        parts = []
        for index, text in enumerate(group.steps):
            word = words[-1] if index == last and index else words[min(index, len(words) - 2)]
            parts.append(f"{word} {text}" if word else text)
        return " ".join(parts)
    if group.numbered:
        return "\n".join(
            f"{group.style.format(n=index + 1)} {text}" for index, text in enumerate(group.steps)
        )
    return "\n".join(f"{group.style} {text}" for text in group.steps)


def render_body(blocks: Sequence[Block], connectives: Sequence[str] = ()) -> str:
    return "\n".join(
        render_group(block, connectives) if isinstance(block, Group) else block for block in blocks
    )


@lru_cache(maxsize=4096)
def is_constraint_line(text: str) -> bool:
    """Lines HSA must keep verbatim: numbers, quotes, identifiers or restrictive words."""
    if any(c.isdigit() for c in text) or any(q in text for q in _QUOTES):
        return True
    if _CONSTRAINT_WORDS.search(text):
        return True
    return any(looks_like_identifier(word) for word in _WORD.findall(text))


@lru_cache(maxsize=1024)
def constraint_units(body: str) -> tuple[str, ...]:
    """Normalised texts that must survive every skill-content edit: all step texts plus
    every other line that carries a constraint."""
    units: list[str] = []
    for block in parse_body(body):
        if isinstance(block, Group):
            units.extend(text for text in block.steps if text)
        elif block.strip() and is_constraint_line(block):
            units.append(normalise(block))
    return tuple(units)


def missing_units(units: Sequence[str], body: str) -> list[str]:
    """The units that do not appear (whitespace normalised) in ``body``."""
    haystack = normalise(body)
    return [unit for unit in units if unit not in haystack]


# ------------------------------------------------------------------------------ edits


def _paragraphs(blocks: Sequence[Block]) -> list[list[Block]]:
    paragraphs: list[list[Block]] = [[]]
    for block in blocks:
        if isinstance(block, str) and not block.strip():
            paragraphs.append([block])
            paragraphs.append([])
        else:
            paragraphs[-1].append(block)
    return [p for p in paragraphs if p]


def reorder(body: str, rng: random.Random) -> str:
    """Shuffle the items of bullet lists and the order of paragraphs; a leading heading stays
    first and paragraphs with numbered steps keep their relative order (order is meaning)."""
    original = parse_body(body)
    blocks = [
        Group(tuple(rng.sample(b.steps, len(b.steps))), b.numbered, b.style)
        if isinstance(b, Group) and not b.numbered and len(b.steps) > 1
        else b
        for b in original
    ]
    content = [p for p in _paragraphs(blocks) if not _is_blank(p)]
    head: list[list[Block]] = []
    if content and isinstance(content[0][0], str) and content[0][0].lstrip().startswith("#"):
        head = [content.pop(0)]
    anchored = [i for i, p in enumerate(content) if _has_numbered(p)]
    order = rng.sample(range(len(content)), len(content))
    anchored_iter = iter(anchored)
    order = [next(anchored_iter) if i in anchored else i for i in order]
    if order == sorted(order) and tuple(blocks) == original:
        return body
    result: list[Block] = []
    for paragraph in head + [content[i] for i in order]:
        if result:
            result.append("")
        result.extend(paragraph)
    trailing = "\n" if body.endswith("\n") else ""
    return render_body(result) + trailing


def _has_numbered(paragraph: list[Block]) -> bool:
    return any(isinstance(b, Group) and b.numbered for b in paragraph)


def _is_blank(paragraph: list[Block]) -> bool:
    return all(isinstance(b, str) and not b.strip() for b in paragraph)


def paraphrase(body: str, rng: random.Random, split: Split) -> str:
    """Reword the framing only: the heading, list labels and the lead-in before the first
    numbered list. Constraint lines and step texts are never touched."""
    blocks = list(parse_body(body))
    changed = False
    seen_heading = False
    for index, block in enumerate(blocks):
        if not isinstance(block, str) or not block.strip() or is_constraint_line(block):
            continue
        stripped = block.strip()
        if stripped.startswith("#") and not seen_heading:
            seen_heading = True
            title = stripped.lstrip("#").strip()
            if title:
                blocks[index] = rng.choice(HEADING_FRAMES[split]).format(title=title)
                changed = True
        elif stripped.endswith(":") and len(stripped) <= 40:
            label = stripped[:-1].strip().lower()
            options = LABEL_SYNONYMS[split].get(label)
            if options:
                blocks[index] = f"{rng.choice(options)}:"
                changed = True
    first_numbered = next(
        (i for i, b in enumerate(blocks) if isinstance(b, Group) and b.numbered), None
    )
    if first_numbered is not None:
        lead_in = rng.choice(LEAD_INS[split])
        previous = blocks[first_numbered - 1] if first_numbered else None
        if isinstance(previous, str) and previous.strip() in _LEAD_IN_TEXTS:
            blocks[first_numbered - 1] = lead_in
        else:
            blocks.insert(first_numbered, lead_in)
        changed = True
    if not changed:
        return body
    return render_body(blocks)


def reformat(body: str, rng: random.Random, split: Split, *, prose: bool) -> str:
    """Change how each list is written: another numbering style, bullets, or (``prose``)
    a paragraph with ordinal connectives. Step texts are kept verbatim."""
    blocks = list(parse_body(body))
    groups = [i for i, b in enumerate(blocks) if isinstance(b, Group) and b.style != "prose"]
    if not groups:
        return body
    connectives: tuple[str, ...] = ()
    for index in groups:
        group = blocks[index]
        assert isinstance(group, Group)
        if prose:
            connectives = rng.choice(PROSE_CONNECTIVES[split])
            blocks[index] = Group(group.steps, group.numbered, "prose")
            continue
        options = [(True, s) for s in NUMBER_STYLES[split]] + [
            (False, m) for m in BULLET_MARKERS[split]
        ]
        options = [o for o in options if o != (group.numbered, group.style)]
        numbered, style = rng.choice(options)
        blocks[index] = Group(group.steps, numbered, style)
    return render_body(blocks, connectives)
