"""Apply skill, tool and parameter renames everywhere a harness refers to them.

A rename is only task-preserving if *every* reference follows: skill ``allowed_tools``, hook
matchers, hook conditions that compare ``tool_name``/``tool_names`` with a literal, the
``required`` list of a schema, and names mentioned in free text (skill bodies and
descriptions, tool and parameter descriptions, prompt templates, hook feedback). The guards
here decide which names may be renamed at all: a name a hook condition refers to other than
by an exact literal (a prefix test, a regex, ``has(args.x)`` in a hook shared by several
tools) is *pinned*, and a new name must not be one a condition or matcher would treat
differently from the old one.
"""

from __future__ import annotations

import dataclasses
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any, Final

from harness_app.harness.conditions import TOOL_EVENTS, matcher_matches
from harness_app.harness.model import Harness, Hook, Prompt, PromptSection, Skill, Tool
from harness_app.harness.validation import MAX_SKILL_DESCRIPTION_CHARS
from harness_app.hsa.cel_refs import cel_references, overlaps, replace_spans
from harness_app.hsa.identity_cache import DATASET_CACHE_SIZE, DerivedCache, IdentityCache
from harness_app.hsa.naming import looks_like_identifier

# Top-level schema keywords under which renaming a property cannot change what is accepted
# (no patternProperties, propertyNames, dependent*, combinators or $ref that name keys).
RENAME_SAFE_SCHEMA_KEYS: Final[frozenset[str]] = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "description",
        "title",
        "default",
        "examples",
        "$comment",
        "$schema",
    }
)
_TEXT_KEYS: Final = ("description", "title")
# The same rename of the same tool gives the same object (downstream checks hit their caches).
EDITS = DerivedCache(8192)
_FORMATTER = string.Formatter()


# ------------------------------------------------------------------------------ free text


@lru_cache(maxsize=4096)
def _text_pattern(names: tuple[str, ...]) -> re.Pattern[str] | None:
    # A name counts only as a whole identifier: not inside a longer name (no identifier
    # character or dotted continuation on either side).
    if not names:
        return None
    alternation = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9_.\-])(?:{alternation})(?![A-Za-z0-9_\-]|\.[A-Za-z0-9_])")


_IDENTIFIER_RUN = re.compile(r"[A-Za-z0-9_.\-]+")


@lru_cache(maxsize=DATASET_CACHE_SIZE)
def identifier_candidates(text: str) -> frozenset[str]:
    """Every string a whole-identifier match in ``text`` could be: each maximal run of
    identifier characters and its prefixes that end before a dot. A superset, used to skip
    texts that cannot mention a renamed name (texts repeat, so this is cached)."""
    found: set[str] = set()
    for run in _IDENTIFIER_RUN.findall(text):
        found.add(run)
        position = run.find(".")
        while position > 0:
            found.add(run[:position])
            position = run.find(".", position + 1)
    return frozenset(found)


def rewrite_text(text: str, renames: Mapping[str, str]) -> str:
    """``text`` with every whole-identifier mention of an identifier-looking old name
    replaced, in one pass (so swaps and chains cannot interfere). Plain words such as
    ``search`` are never replaced: they may be ordinary words of the text."""
    if not text:
        return text
    candidates = identifier_candidates(text)
    if candidates.isdisjoint(renames):
        return text
    relevant = candidates.intersection(renames)
    return _rewrite_relevant(text, tuple(sorted((name, renames[name]) for name in relevant)))


@lru_cache(maxsize=1024)
def _rewrite_relevant(text: str, renames: tuple[tuple[str, str], ...]) -> str:
    """The rewrite of ``text`` for the renames whose old names it may mention. Cached (the
    same texts meet the same renames in transforms and again in verification), and the
    pattern is built from those few names only."""
    table = dict(renames)
    pattern = _text_pattern(tuple(name for name in table if looks_like_identifier(name)))
    if pattern is None:
        return text
    result = pattern.sub(lambda match: table[match[0]], text)
    return text if result == text else result


def _rewrite_template(template: str, renames: Mapping[str, str]) -> str:
    """Rewrite only the literal text of a prompt template, never its ``{variable}`` slots."""
    if rewrite_text(template, renames) is template:
        return template
    try:
        parsed = list(_FORMATTER.parse(template))
    except ValueError:
        return template
    out: list[str] = []
    for literal, field_name, format_spec, conversion in parsed:
        rewritten = rewrite_text(literal, renames)
        out.append(rewritten.replace("{", "{{").replace("}", "}}"))
        if field_name is not None:
            out.append(
                "{"
                + field_name
                + (f"!{conversion}" if conversion else "")
                + (f":{format_spec}" if format_spec else "")
                + "}"
            )
    return "".join(out)


class _SchemaTexts:
    """All description/title strings of a schema, joined, cached by identity: most schemas
    mention no renamed name, and one look at the blob's identifier candidates proves it."""

    def __init__(self) -> None:
        self._blobs: IdentityCache[str] = IdentityCache(DATASET_CACHE_SIZE)

    def blob(self, schema: object) -> str:
        hit = self._blobs.get(schema)
        if hit is not None:
            return hit
        parts: list[str] = []
        stack = [schema]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                for key, value in item.items():
                    if key in _TEXT_KEYS and isinstance(value, str):
                        parts.append(value)
                    elif isinstance(value, dict | list):
                        stack.append(value)
            elif isinstance(item, list):
                stack.extend(item)
        blob = "\n".join(parts)
        self._blobs.put(schema, blob)
        return blob


_SCHEMA_TEXTS = _SchemaTexts()


def rewrite_schema_text(schema: Any, renames: Mapping[str, str]) -> Any:
    """Rewrite ``description``/``title`` strings at any depth; unchanged parts keep their
    identity (so cached schema checks still hit)."""
    if identifier_candidates(_SCHEMA_TEXTS.blob(schema)).isdisjoint(renames):
        return schema
    return _rewrite_schema_text(schema, renames)


def _rewrite_schema_text(schema: Any, renames: Mapping[str, str]) -> Any:
    if isinstance(schema, dict):
        changed = False
        result: dict[str, Any] = {}
        for key, value in schema.items():
            if key in _TEXT_KEYS and isinstance(value, str):
                new = rewrite_text(value, renames)
            elif isinstance(value, dict | list):
                new = _rewrite_schema_text(value, renames)
            else:
                new = value
            changed = changed or new is not value
            result[key] = new
        return result if changed else schema
    if isinstance(schema, list):
        items = [_rewrite_schema_text(item, renames) for item in schema]
        if any(new is not old for new, old in zip(items, schema, strict=True)):
            return items
        return schema
    return schema


def _mentions_any(texts: tuple[str, ...], renames: Mapping[str, str]) -> bool:
    return not all(identifier_candidates(text).isdisjoint(renames) for text in texts)


_COMPONENT_MENTIONS: IdentityCache[frozenset[str]] = IdentityCache(DATASET_CACHE_SIZE)


def _component_texts(component: Skill | Tool | PromptSection | Hook) -> tuple[str, ...]:
    if isinstance(component, Skill):
        return (component.description, component.body)
    if isinstance(component, Tool):
        return (component.description, _SCHEMA_TEXTS.blob(component.input_schema))
    if isinstance(component, PromptSection):
        return (component.title, component.template)
    return (component.feedback, component.fallback_reply)


_SEEN_ONCE: IdentityCache[bool] = IdentityCache(DATASET_CACHE_SIZE)


def _tuple_may_mention(components: tuple[Any, ...], renames: Mapping[str, str]) -> bool:
    """False when no component of the tuple can mention an old name. The union of the
    tuple's identifier candidates is built the second time a tuple is seen (the original
    harness's tuples recur in every example; a tuple made by one edit rarely does, and for
    it the per-component checks are cheaper than building the union)."""
    found = _COMPONENT_MENTIONS.get(components)
    if found is None:
        if _SEEN_ONCE.get(components) is None:
            _SEEN_ONCE.put(components, True)
            return True
        found = frozenset().union(
            *(identifier_candidates(t) for c in components for t in _component_texts(c))
        )
        _COMPONENT_MENTIONS.put(components, found)
    return not found.isdisjoint(renames)


def _same_tuple(new: list[Any], old: tuple[Any, ...]) -> tuple[Any, ...]:
    return old if all(a is b for a, b in zip(new, old, strict=True)) else tuple(new)


def rewrite_harness_text(
    harness: Harness,
    renames: Mapping[str, str],
    *,
    in_tools: bool = True,
    tool_texts: tuple[Tool, ...] | None = None,
) -> Harness:
    """Every free-text mention of an old name, rewritten (skills, tools unless ``in_tools``
    is false, prompt, hooks). Components that mention no renamed name are kept as they are
    (same objects). ``tool_texts``: tools with the same description and schema, one for one,
    as ``harness.tools`` (the tools before a rename), whose look-up is cached."""
    if not any(looks_like_identifier(name) for name in renames):
        return harness
    skills_hit = _tuple_may_mention(harness.skills, renames)
    tools_hit = in_tools and _tuple_may_mention(
        harness.tools if tool_texts is None else tool_texts, renames
    )
    sections_hit = _tuple_may_mention(harness.prompt.sections, renames)
    hooks_hit = _tuple_may_mention(harness.hooks, renames)
    skills = []
    for skill in harness.skills if skills_hit else ():
        if not _mentions_any((skill.description, skill.body), renames):
            skills.append(skill)
            continue
        description = rewrite_text(skill.description, renames)
        if len(description) > MAX_SKILL_DESCRIPTION_CHARS:
            description = skill.description  # a longer name must not make the skill invalid
        body = rewrite_text(skill.body, renames)
        if description is skill.description and body is skill.body:
            skills.append(skill)
        else:
            skills.append(Skill(skill.name, description, body, skill.allowed_tools))
    tools = []
    for tool in harness.tools if tools_hit else ():
        if not _mentions_any((tool.description, _SCHEMA_TEXTS.blob(tool.input_schema)), renames):
            tools.append(tool)
            continue
        description = rewrite_text(tool.description, renames)
        schema = rewrite_schema_text(tool.input_schema, renames)
        if description is tool.description and schema is tool.input_schema:
            tools.append(tool)
        else:
            tools.append(
                Tool(
                    tool.name,
                    description,
                    schema,
                    tool.executor,
                    tool.read_only,
                    tool.destructive,
                )
            )
    sections = []
    for section in harness.prompt.sections if sections_hit else ():
        if not _mentions_any((section.title, section.template), renames):
            sections.append(section)
            continue
        title = rewrite_text(section.title, renames)
        template = _rewrite_template(section.template, renames)
        if title is section.title and template is section.template:
            sections.append(section)
        else:
            sections.append(PromptSection(section.id, title, template))
    hooks = [
        hook
        if not _mentions_any((hook.feedback, hook.fallback_reply), renames)
        else replace_hook(
            hook,
            feedback=rewrite_text(hook.feedback, renames),
            fallback_reply=rewrite_text(hook.fallback_reply, renames),
        )
        for hook in (harness.hooks if hooks_hit else ())
    ]
    new_sections = (
        _same_tuple(sections, harness.prompt.sections) if sections_hit else harness.prompt.sections
    )
    return Harness(
        _same_tuple(skills, harness.skills) if skills_hit else harness.skills,
        _same_tuple(tools, harness.tools) if tools_hit else harness.tools,
        harness.prompt if new_sections is harness.prompt.sections else Prompt(new_sections),
        _same_tuple(hooks, harness.hooks) if hooks_hit else harness.hooks,
    )


def replace_hook(hook: Hook, **changes: Any) -> Hook:
    """``dataclasses.replace`` for hooks that returns the same object when nothing changes
    (shared objects keep the identity caches of the checks warm)."""
    if all(getattr(hook, key) == value for key, value in changes.items()):
        return hook
    return dataclasses.replace(hook, **changes)


# ---------------------------------------------------------------------------------- guards


def _tool_literals(harness: Harness) -> list[tuple[str, bool]]:
    """(value, simple) of string literals in CEL conditions that read tool names."""
    literals: list[tuple[str, bool]] = []
    for hook in harness.hooks:
        if hook.condition_kind != "cel":
            continue
        references = cel_references(hook.condition)
        if references is None:
            continue
        if {"tool_name", "tool_names"} & references.identifiers:
            literals += [(s.value, s.simple) for s in references.strings]
    return literals


@dataclass(frozen=True)
class ToolRenameGuard:
    """Which tools may be renamed and which new names are safe, given the hooks."""

    pinned: frozenset[str]
    literals: tuple[tuple[str, bool], ...]
    matchers: tuple[str, ...]

    def accept(self, old: str, new: str) -> bool:
        if any(new == value or overlaps(new, value) for value, _simple in self.literals):
            return False
        return all(
            matcher == old or matcher_matches(matcher, old) == matcher_matches(matcher, new)
            for matcher in self.matchers
        )


def tool_rename_guard(harness: Harness) -> ToolRenameGuard:
    literals = _tool_literals(harness)
    pinned = frozenset(
        tool.name
        for tool in harness.tools
        if any(
            overlaps(tool.name, value) and not (simple and value == tool.name)
            for value, simple in literals
        )
    )
    matchers = tuple(
        hook.matcher for hook in harness.hooks if hook.event in TOOL_EVENTS and hook.matcher != "*"
    )
    return ToolRenameGuard(pinned, tuple(literals), matchers)


@dataclass(frozen=True)
class ParamRenameGuard:
    """Parameters of one tool that may be renamed (``renameable``) and a test for new names."""

    renameable: tuple[str, ...]
    words: frozenset[str]

    def accept(self, new: str) -> bool:
        return not any(new == word or overlaps(new, word) for word in self.words)


_PARAM_GUARDS: IdentityCache[tuple[tuple[Hook, ...], ParamRenameGuard]] = IdentityCache(
    DATASET_CACHE_SIZE
)


def param_rename_guard(harness: Harness, tool: Tool) -> ParamRenameGuard:
    """Cached per (tool, hooks) object pair: both are immutable. Without hooks it is cheap
    and not cached (the tools are mostly new objects of one example, which an entry would
    keep alive)."""
    if not harness.hooks:
        return _param_rename_guard(harness, tool)
    hit = _PARAM_GUARDS.get(tool)
    if hit is not None and hit[0] is harness.hooks:
        return hit[1]
    guard = _param_rename_guard(harness, tool)
    _PARAM_GUARDS.put(tool, (harness.hooks, guard))
    return guard


def _param_rename_guard(harness: Harness, tool: Tool) -> ParamRenameGuard:
    schema = tool.input_schema
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not set(schema) <= RENAME_SAFE_SCHEMA_KEYS:
        return ParamRenameGuard((), frozenset())
    words: set[str] = set()
    for hook in harness.hooks:
        if hook.event not in TOOL_EVENTS or not matcher_matches(hook.matcher, tool.name):
            continue
        if hook.condition_kind != "cel":
            if hook.event == "pre_tool_use":
                # The regex reads the arguments' JSON, keys included.
                return ParamRenameGuard((), frozenset())
            continue
        references = cel_references(hook.condition)
        if references is None:
            return ParamRenameGuard((), frozenset())
        if "args" in references.identifiers:
            words |= references.identifiers
            words |= {s.value for s in references.strings}
    renameable = tuple(
        name for name in properties if not any(name == w or overlaps(name, w) for w in words)
    )
    return ParamRenameGuard(renameable, frozenset(words))


# ------------------------------------------------------------------------------- renames


def rename_skills(harness: Harness, renames: Mapping[str, str]) -> Harness:
    """Skills renamed; mentions in skills, prompt sections and hook messages follow. Tool
    descriptions are left alone: tools do not refer to skills, and a kebab-case skill name is
    often an ordinary compound word there ("after-sales policy")."""
    if not renames:
        return harness
    skills = tuple(
        Skill(renames.get(s.name, s.name), s.description, s.body, s.allowed_tools)
        if s.name in renames
        else s
        for s in harness.skills
    )
    return rewrite_harness_text(
        Harness(skills, harness.tools, harness.prompt, harness.hooks), renames, in_tools=False
    )


def _rewrite_tool_literals(condition: str, renames: Mapping[str, str]) -> str:
    references = cel_references(condition)
    if references is None or not ({"tool_name", "tool_names"} & references.identifiers):
        return condition
    edits = [
        (s.start, s.end, s.raw[0] + renames[s.value] + s.raw[-1])
        for s in references.strings
        if s.simple and s.value in renames
    ]
    return replace_spans(condition, edits) if edits else condition


def rename_tools(harness: Harness, renames: Mapping[str, str]) -> Harness:
    """Tools renamed in the registry, skills' ``allowed_tools``, hook matchers and
    conditions, and free text. Callers check names with ``tool_rename_guard`` first."""
    if not renames:
        return harness
    tools = tuple(
        Tool(renames[t.name], t.description, t.input_schema, t.executor, t.read_only, t.destructive)
        if t.name in renames
        else t
        for t in harness.tools
    )
    skills = tuple(
        Skill(s.name, s.description, s.body, tuple(renames.get(t, t) for t in s.allowed_tools))
        if any(t in renames for t in s.allowed_tools)
        else s
        for s in harness.skills
    )
    hooks = tuple(
        replace_hook(
            hook,
            matcher=renames.get(hook.matcher, hook.matcher)
            if hook.event in TOOL_EVENTS
            else hook.matcher,
            condition=_rewrite_tool_literals(hook.condition, renames)
            if hook.condition_kind == "cel"
            else hook.condition,
        )
        for hook in harness.hooks
    )
    # The renamed tools keep their descriptions and schemas, so whether any can mention an
    # old name is the (cached) answer for the tuple before the rename, which recurs.
    return rewrite_harness_text(
        Harness(skills, tools, harness.prompt, hooks), renames, tool_texts=harness.tools
    )


def _renamed_tool(tool: Tool, name: str) -> Tool:
    return Tool(
        name, tool.description, tool.input_schema, tool.executor, tool.read_only, tool.destructive
    )


def _with_renamed_properties(tool: Tool, renames: Mapping[str, str]) -> Tool:
    schema = rename_properties(tool.input_schema, renames)
    return Tool(
        tool.name, tool.description, schema, tool.executor, tool.read_only, tool.destructive
    )


def rename_properties(schema: dict[str, Any], renames: Mapping[str, str]) -> dict[str, Any]:
    """Top-level properties (order kept) and ``required`` renamed; nested schemas shared."""
    result: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            result[key] = {renames.get(name, name): sub for name, sub in value.items()}
        elif key == "required" and isinstance(value, list):
            result[key] = [renames.get(name, name) for name in value]
        else:
            result[key] = value
    return result


def rename_params(harness: Harness, renames: Mapping[str, Mapping[str, str]]) -> Harness:
    """Parameters renamed per tool (keyed by the tool's current name)."""
    if not any(renames.values()):
        return harness
    tools = tuple(
        EDITS.derive(
            t,
            ("params", tuple(sorted(renames[t.name].items()))),
            partial(_with_renamed_properties, t, renames[t.name]),
        )
        if renames.get(t.name)
        else t
        for t in harness.tools
    )
    return Harness(harness.skills, tools, harness.prompt, harness.hooks)
