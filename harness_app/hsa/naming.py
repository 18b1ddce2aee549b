"""New identifiers for skills, tools and parameters: synonyms, styles, languages, random ids.

Names are split into lowercase tokens (``getProduct``, ``get_product``, ``get-product`` all
give ``get, product``), the tokens are edited (synonym, translation, reordering), and the
result is written in a naming style. Every generated skill or tool name is
*identifier-looking* (it has a separator, a digit or a camel hump), because only such names
are rewritten where they appear in free text (``renaming.rewrite_text``): a plain word like
``search`` might be an ordinary English word in a skill body, so it is never replaced there.
"""

from __future__ import annotations

import keyword
import random
import re
import string
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final, Literal, TypeVar

from harness_app.harness.validation import SKILL_NAME_PATTERN, TOOL_NAME_PATTERN
from harness_app.hsa.banks import (
    NAME_MARKERS,
    SKILL_MARKERS,
    SYNONYMS,
    TRANSLATIONS,
    Split,
)
from harness_app.hsa.identity_cache import DATASET_CACHE_SIZE

NameKind = Literal["skill", "tool", "param"]
RenameMode = Literal["synonym", "style", "random", "translate", "reorder"]
# "harness": the harness name patterns. "python": names a BFCL scorer parses as Python (tool
# names are identifiers joined by dots, parameters identifiers, no keywords) that also stay
# legal for OpenAI-format scoring (``^[A-Za-z0-9_-]{1,64}$`` once dots become underscores).
NameFormat = Literal["harness", "python"]
MAX_NAME_CHARS: Final = 64

_TOKEN = re.compile(r"[A-Z]+(?![a-z])[0-9]*|[A-Z]?[a-z]+[0-9]*|[0-9]+")
_SKILL_NAME = re.compile(SKILL_NAME_PATTERN)
_TOOL_NAME = re.compile(TOOL_NAME_PATTERN)
_CAMEL_HUMP = re.compile(r"[a-z0-9][A-Z]")
_SEPARATED = re.compile(r"[A-Za-z0-9][-_.][A-Za-z0-9]")
_ALPHABET = string.ascii_lowercase + string.digits
MAX_ATTEMPTS: Final = 8
MAX_REJECTIONS: Final = 2

TOOL_STYLES: Final[tuple[str, ...]] = ("snake", "camel", "pascal", "kebab", "dotted", "screaming")
PARAM_STYLES: Final[tuple[str, ...]] = ("snake", "camel", "pascal", "kebab")
PYTHON_TOOL_STYLES: Final[tuple[str, ...]] = ("snake", "camel", "pascal", "dotted", "screaming")
PYTHON_PARAM_STYLES: Final[tuple[str, ...]] = ("snake", "camel", "pascal")
_OPENAI_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True)
class NamingContext:
    """What the renaming transforms of one ``augment`` call must respect beyond the hooks:
    the name format, names that must not be renamed (``pinned``: e.g. names the task text
    mentions), and names that were ever in use, which no new name may take
    (``reserved_tools``: the original tool names; ``reserved_params``: current tool name ->
    its original parameter names). A rename that re-used a freed name would make two
    augmented names map back to one original name."""

    name_format: NameFormat = "harness"
    pinned: frozenset[str] = frozenset()
    reserved_tools: frozenset[str] = frozenset()
    reserved_params: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def params_reserved_for(self, tool: str) -> frozenset[str]:
        return self.reserved_params.get(tool, frozenset())


DEFAULT_CONTEXT: Final = NamingContext()
_CONTEXT: ContextVar[NamingContext] = ContextVar("hsa_naming", default=DEFAULT_CONTEXT)


def naming_context() -> NamingContext:
    return _CONTEXT.get()


class using_naming:
    """``with using_naming(context):`` makes ``context`` current inside the block. A class,
    not a generator-based context manager: ``augment`` enters one per transform."""

    __slots__ = ("_context", "_token")

    def __init__(self, context: NamingContext) -> None:
        self._context = context

    def __enter__(self) -> None:
        self._token = _CONTEXT.set(self._context)

    def __exit__(self, *_exc: object) -> None:
        _CONTEXT.reset(self._token)


def is_python_tool_name(name: str) -> bool:
    """Identifiers joined by dots (``uber.ride``), ASCII, no keyword part, at most 64
    characters, and OpenAI-legal once dots are written as underscores."""
    return (
        len(name) <= MAX_NAME_CHARS
        and name.isascii()
        and all(part.isidentifier() and not keyword.iskeyword(part) for part in name.split("."))
        and _OPENAI_NAME.fullmatch(name.replace(".", "_")) is not None
    )


def is_python_param_name(name: str) -> bool:
    return (
        len(name) <= MAX_NAME_CHARS
        and name.isascii()
        and name.isidentifier()
        and not keyword.iskeyword(name)
    )


def cut_at_word_boundary(name: str, limit: int = MAX_NAME_CHARS) -> str:
    """``name`` shortened to at most ``limit`` characters, cut before a separator or a camel
    hump (never inside a word); a single word longer than ``limit`` is truncated."""
    if len(name) <= limit:
        return name
    best = 0
    for index in range(1, limit + 1):
        at_end = index == len(name)
        separator = not at_end and name[index] in "-_."
        hump = not at_end and name[index].isupper() and name[index - 1].islower()
        if separator or hump:
            best = index
    cut = name[:best].rstrip("-_.") if best else name[:limit]
    return cut or name[:limit]


T = TypeVar("T")


def pick(rng: random.Random, options: Sequence[T]) -> T:
    """``rng.choice`` at a quarter of the cost (names are drawn thousands of times a
    second); as deterministic for a seed, with a negligible bias for short sequences."""
    return options[int(rng.random() * len(options))]


def tokens(name: str) -> list[str]:
    """Lowercase word tokens of an identifier (``aws.lexv2_models`` -> aws, lexv2, models)."""
    return list(_tokens(name))


@lru_cache(maxsize=4 * DATASET_CACHE_SIZE)  # (every tool and parameter name of a category)
def _tokens(name: str) -> tuple[str, ...]:
    return tuple(token.lower() for token in _TOKEN.findall(name))


@lru_cache(maxsize=4 * DATASET_CACHE_SIZE)
def looks_like_identifier(name: str) -> bool:
    """True for names that cannot be an ordinary word: 3+ characters with a letter and a
    separator between alphanumerics, a digit, or a camel hump."""
    if len(name) < 3 or not any(c.isascii() and c.isalpha() for c in name):
        return False
    return bool(
        _SEPARATED.search(name) or any(c.isdigit() for c in name) or _CAMEL_HUMP.search(name)
    )


def render_style(parts: Sequence[str], style: str) -> str:
    """Write lowercase tokens in a naming style (snake, camel, pascal, kebab, dotted, screaming)."""
    if style == "snake":
        return "_".join(parts)
    if style == "kebab":
        return "-".join(parts)
    if style == "dotted":
        return ".".join(parts)
    if style == "screaming":
        return "_".join(parts).upper()
    if style == "camel":
        return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:]) if parts else ""
    if style == "pascal":
        return "".join(p[:1].upper() + p[1:] for p in parts)
    raise ValueError(f"unknown naming style {style!r}")


@lru_cache(maxsize=4 * DATASET_CACHE_SIZE)
def guess_style(name: str) -> str:
    """The style a name is written in, so synonym renames keep it (snake by default)."""
    if "-" in name:
        return "kebab"
    if "_" in name:
        return "screaming" if name.isupper() else "snake"
    if "." in name:
        return "dotted"
    if _CAMEL_HUMP.search(name):
        return "pascal" if name[:1].isupper() else "camel"
    return "snake"


def _split_words(phrases: Iterable[str]) -> list[str]:
    return [word for phrase in phrases for word in phrase.split()]


def edit_tokens(
    parts: Sequence[str], mode: RenameMode, split: Split, rng: random.Random
) -> list[str]:
    """Token-level edit for one rename mode (``style`` and ``random`` keep/replace tokens)."""
    if mode == "synonym":
        bank = SYNONYMS[split]
        return _split_words(pick(rng, bank[p]) if p in bank else p for p in parts)
    if mode == "translate":
        table = TRANSLATIONS[split]
        return [table.get(p, p) for p in parts]
    if mode == "reorder":
        return list(reversed(parts)) if len(parts) > 1 else list(parts)
    if mode == "random":
        return ["".join(pick(rng, _ALPHABET) for _ in range(4))]
    return list(parts)


def candidate_name(
    old: str, kind: NameKind, mode: RenameMode, split: Split, rng: random.Random
) -> str:
    """One proposed new name for ``old`` (not yet checked against taken names). When the
    banks know none of its words, a synonym or translation rename falls back to a style
    change, so a rename transform always renames."""
    parts = tokens(old) or ["x"]
    edited = edit_tokens(parts, mode, split, rng)
    if mode in ("synonym", "translate") and edited == parts:
        mode = "style"
    if kind == "skill":
        if mode == "random":
            edited = [pick(rng, SKILL_MARKERS[split]), *edited]
        elif mode == "style":
            # Skill names are lowercase kebab-case, so "style" means word order and affixes.
            marker = pick(rng, SKILL_MARKERS[split])
            options = [[marker, *parts], [*parts, marker]]
            if len(parts) > 1:
                options.append(list(reversed(parts)))
            edited = pick(rng, options)
        name = "-".join(edited)
        if not looks_like_identifier(name):
            name = f"{name}-{pick(rng, SKILL_MARKERS[split])}"
        return cut_at_word_boundary(name.lower())
    python = naming_context().name_format == "python"
    if kind == "tool":
        styles = PYTHON_TOOL_STYLES if python else TOOL_STYLES
    else:
        styles = PYTHON_PARAM_STYLES if python else PARAM_STYLES
    if mode == "random":
        prefix = pick(rng, NAME_MARKERS[split]) if kind == "tool" else "arg"
        edited = [prefix, *edited]
    current = guess_style(old)
    if mode == "style":
        style = pick(rng, _other_styles(styles, current))
    elif mode == "random":
        style = pick(rng, styles)
    else:
        style = current
    if style not in styles or (
        python and style == "dotted" and any(part[:1].isdigit() for part in edited)
    ):
        style = "snake"  # (a dotted part must not start with a digit)
    name = render_style(edited, style)
    if kind == "tool" and not looks_like_identifier(name):
        name = render_style([*edited, pick(rng, NAME_MARKERS[split])], style)
    return cut_at_word_boundary(name)


@lru_cache(maxsize=64)
def _other_styles(styles: tuple[str, ...], current: str) -> tuple[str, ...]:
    return tuple(s for s in styles if s != current) or styles


def name_is_valid(name: str, kind: NameKind) -> bool:
    """Legal for its kind, and for the name format of the current ``NamingContext``."""
    return _name_is_valid(name, kind, naming_context().name_format == "python")


@lru_cache(maxsize=4 * DATASET_CACHE_SIZE)
def _name_is_valid(name: str, kind: NameKind, python: bool) -> bool:
    if kind == "skill":
        return _SKILL_NAME.fullmatch(name) is not None
    if kind == "tool":
        return _TOOL_NAME.fullmatch(name) is not None and (not python or is_python_tool_name(name))
    return bool(name) and len(name) <= MAX_NAME_CHARS and (not python or is_python_param_name(name))


def choose_renames(
    names: Sequence[str],
    kind: NameKind,
    propose: Callable[[str], str],
    *,
    taken: Iterable[str],
    accept: Callable[[str, str], bool] | None = None,
) -> dict[str, str]:
    """old -> new for each name that got an acceptable new name.

    ``taken`` must hold every existing name of the same kind, so a new name never equals any
    old one: renames are injective and never swap, which keeps ``RenameMapping.inverse`` and
    text rewriting exact. A proposal equal to the old name means "keep it"; a colliding one
    is retried with a numeric suffix; after ``MAX_ATTEMPTS`` the name is kept.
    """
    used = set(taken)
    renames: dict[str, str] = {}
    python = naming_context().name_format == "python"
    for old in names:
        rejected = 0
        for attempt in range(MAX_ATTEMPTS):
            new = propose(old)
            if new == old:
                break
            if attempt:
                new = _with_suffix(new, kind, attempt)
            if new in used or not _name_is_valid(new, kind, python):
                continue
            if accept is not None and not accept(old, new):
                # A hook constraint, not a collision: a few fresh proposals, then keep.
                rejected += 1
                if rejected >= MAX_REJECTIONS:
                    break
                continue
            renames[old] = new
            used.add(new)
            break
    return renames


def _with_suffix(name: str, kind: NameKind, attempt: int) -> str:
    separator = "-" if kind == "skill" else "_"
    suffix = f"{separator}{attempt + 1}"
    return cut_at_word_boundary(name, MAX_NAME_CHARS - len(suffix)) + suffix
