"""What changed between two harness versions, in sentences an operator can review.

Business rules change weekly; before publishing, an operator must see *what the model will
experience differently* ("tool get_price: parameter currency now required"), not a JSON diff.
Items are matched by name (skills, tools, hooks) or id (prompt sections), so a rename reads
as removed + added. Order is reported too, because skills and tools are listed to the model
in order, sections are rendered in order and hooks run in order.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from harness_app.harness.model import Harness, Hook, PromptSection, Skill, Tool, ToolExecutor

ChangeKind = Literal["added", "removed", "changed", "reordered"]
T = TypeVar("T")


LineKind = Literal["same", "added", "removed", "skipped"]
CONTEXT_LINES = 3
# difflib's matcher can take time proportional to old lines x new lines; past this product a
# text is summarised (line counts) instead of diffed, so the diff page stays fast.
MAX_DIFF_LINE_PRODUCT = 4_000_000


@dataclass(frozen=True)
class DiffLine:
    """One line of a text diff; ``skipped`` stands for ``text`` unchanged lines not shown."""

    kind: LineKind
    text: str
    old_number: int | None = None
    new_number: int | None = None


@dataclass(frozen=True)
class TextDiff:
    """The line diff of one text field (``body``, ``template``, ``feedback``...)."""

    field: str
    lines: tuple[DiffLine, ...]
    too_large: bool = False  # not diffed line by line (see MAX_DIFF_LINE_PRODUCT)
    old_line_count: int = 0
    new_line_count: int = 0

    @property
    def added(self) -> int:
        return sum(1 for line in self.lines if line.kind == "added")

    @property
    def removed(self) -> int:
        return sum(1 for line in self.lines if line.kind == "removed")


@dataclass(frozen=True)
class Change:
    """One reviewed change. ``component`` is skill/tool/prompt section/hook (or
    skills/tools/prompt/hooks for a reorder), ``name`` the item ("" for a reorder).
    ``text_diffs``: the line diffs of the changed text fields, shown under the sentence (not
    part of equality: they are the same change, only spelled out)."""

    component: str
    name: str
    kind: ChangeKind
    details: tuple[str, ...] = ()
    text_diffs: tuple[TextDiff, ...] = field(default=(), compare=False)

    def describe(self) -> str:
        if self.kind in ("added", "removed"):
            return f"{self.component} {self.name} {self.kind}"
        label = f"{self.component} {self.name}" if self.name else self.component
        return f"{label}: {'; '.join(self.details)}"


def semantic_diff(old: Harness, new: Harness) -> list[Change]:
    """Changes from ``old`` to ``new`` (skills, tools, prompt, hooks; [] when identical)."""
    changes: list[Change] = []
    changes += _diff_items(
        "skill",
        "skills",
        old.skills,
        new.skills,
        lambda s: s.name,
        _skill_details,
        texts=lambda s: (("description", s.description), ("body", s.body)),
    )
    changes += _diff_items(
        "tool",
        "tools",
        old.tools,
        new.tools,
        lambda t: t.name,
        _tool_details,
        texts=lambda t: (("description", t.description),),
    )
    changes += _diff_items(
        "prompt section",
        "prompt",
        old.prompt.sections,
        new.prompt.sections,
        lambda s: s.id,
        _section_details,
        reorder_noun="sections",
        texts=lambda s: (("template", s.template),),
    )
    changes += _diff_items(
        "hook",
        "hooks",
        old.hooks,
        new.hooks,
        lambda k: k.name,
        _hook_details,
        texts=lambda k: (
            ("condition", k.condition),
            ("feedback", k.feedback),
            ("fallback_reply", k.fallback_reply),
        ),
    )
    return changes


def line_diff(old: str, new: str, *, context: int = CONTEXT_LINES) -> tuple[DiffLine, ...]:
    """The lines of ``old`` -> ``new`` that changed, with ``context`` unchanged lines around
    each change and one ``skipped`` line for each run left out (difflib, no regexes)."""
    a, b = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    lines: list[DiffLine] = []
    shown_to = 0  # index in ``a`` after the last line shown
    for group in matcher.get_grouped_opcodes(context):
        first_old = group[0][1]
        if first_old > shown_to:
            lines.append(DiffLine("skipped", str(first_old - shown_to)))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [DiffLine("same", a[i], i + 1, j1 + (i - i1) + 1) for i in range(i1, i2)]
                continue
            lines += [DiffLine("removed", a[i], old_number=i + 1) for i in range(i1, i2)]
            lines += [DiffLine("added", b[j], new_number=j + 1) for j in range(j1, j2)]
        shown_to = group[-1][2]
    if lines and shown_to < len(a):
        lines.append(DiffLine("skipped", str(len(a) - shown_to)))
    return tuple(lines)


def _text_diffs(
    old: Sequence[tuple[str, str]], new: Sequence[tuple[str, str]]
) -> tuple[TextDiff, ...]:
    diffs: list[TextDiff] = []
    for (label, before), (_label, after) in zip(old, new, strict=True):
        if before == after:
            continue
        old_count, new_count = len(before.splitlines()), len(after.splitlines())
        too_large = old_count * new_count > MAX_DIFF_LINE_PRODUCT
        lines = () if too_large else line_diff(before, after)
        diffs.append(TextDiff(label, lines, too_large, old_count, new_count))
    return tuple(diffs)


def _diff_items(
    component: str,
    collection: str,
    old: Sequence[T],
    new: Sequence[T],
    key: Callable[[T], str],
    details: Callable[[T, T], list[str]],
    reorder_noun: str = "",
    texts: Callable[[T], Sequence[tuple[str, str]]] | None = None,
) -> list[Change]:
    old_by_key = {key(item): item for item in old}
    new_by_key = {key(item): item for item in new}
    changes = [
        Change(component, key(item), "removed") for item in old if key(item) not in new_by_key
    ]
    changes += [
        Change(component, key(item), "added") for item in new if key(item) not in old_by_key
    ]
    for item in new:
        previous = old_by_key.get(key(item))
        if previous is not None and previous != item:
            found = details(previous, item) or ["changed"]
            spelled = _text_diffs(texts(previous), texts(item)) if texts else ()
            changes.append(Change(component, key(item), "changed", tuple(found), spelled))
    old_order = [key(item) for item in old if key(item) in new_by_key]
    new_order = [key(item) for item in new if key(item) in old_by_key]
    if old_order != new_order:
        moved = f"({', '.join(old_order)} -> {', '.join(new_order)})"
        sentence = f"{reorder_noun} reordered {moved}" if reorder_noun else f"reordered {moved}"
        changes.append(Change(collection, "", "reordered", (sentence,)))
    return changes


def _list_delta(label: str, old: Sequence[str], new: Sequence[str]) -> list[str]:
    added = [item for item in new if item not in old]
    removed = [item for item in old if item not in new]
    if added or removed:
        parts = [f"+{item}" for item in added] + [f"-{item}" for item in removed]
        return [f"{label} {' '.join(parts)}"]
    if list(old) != list(new):
        return [f"{label} reordered"]
    return []


def _text_change(label: str, old: str, new: str) -> list[str]:
    return [f"{label} changed"] if old != new else []


def _value_change(label: str, old: object, new: object) -> list[str]:
    return [f"{label} {_show(old)} -> {_show(new)}"] if old != new else []


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if value else "''"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


# ---------------------------------------------------------------------------------- skills


def _skill_details(old: Skill, new: Skill) -> list[str]:
    return (
        _text_change("description", old.description, new.description)
        + _text_change("body", old.body, new.body)
        + _list_delta("allowed tools", old.allowed_tools, new.allowed_tools)
    )


# ----------------------------------------------------------------------------------- tools


def _tool_details(old: Tool, new: Tool) -> list[str]:
    return (
        _text_change("description", old.description, new.description)
        + _schema_details(old.input_schema, new.input_schema)
        + _executor_details(old.executor, new.executor)
        + _value_change("read_only", old.read_only, new.read_only)
        + _value_change("destructive", old.destructive, new.destructive)
    )


def _properties(schema: Mapping[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties")
    return dict(properties) if isinstance(properties, Mapping) else {}


def _required(schema: Mapping[str, Any]) -> set[str]:
    required = schema.get("required")
    return {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()


def _type_label(schema: object) -> str:
    if not isinstance(schema, Mapping):
        return "any"
    declared = schema.get("type")
    if isinstance(declared, list):
        return "|".join(str(t) for t in declared)
    if declared == "array" and isinstance(schema.get("items"), Mapping):
        return f"array of {_type_label(schema['items'])}"
    return str(declared) if declared is not None else "any"


def _schema_details(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    if old == new:
        return []
    details: list[str] = []
    old_props, new_props = _properties(old), _properties(new)
    old_required, new_required = _required(old), _required(new)
    for name in old_props:
        if name not in new_props:
            details.append(f"parameter {name} removed")
    for name, schema in new_props.items():
        if name not in old_props:
            required = ", required" if name in new_required else ""
            details.append(f"parameter {name} added ({_type_label(schema)}{required})")
            continue
        details += _parameter_details(name, old_props[name], schema)
        if name in new_required and name not in old_required:
            details.append(f"parameter {name} now required")
        elif name in old_required and name not in new_required:
            details.append(f"parameter {name} no longer required")
    if list(old_props) != list(new_props) and set(old_props) == set(new_props):
        details.append(f"parameters reordered ({', '.join(old_props)} -> {', '.join(new_props)})")
    rest_old = {k: v for k, v in old.items() if k not in ("properties", "required")}
    rest_new = {k: v for k, v in new.items() if k not in ("properties", "required")}
    orphans_old = old_required - set(old_props)
    orphans_new = new_required - set(new_props)
    if rest_old != rest_new or orphans_old != orphans_new:
        details.append("input schema changed")
    return details


def _parameter_details(name: str, old: object, new: object) -> list[str]:
    if old == new:
        return []
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return [f"parameter {name} schema changed"]
    details: list[str] = []
    if _type_label(old) != _type_label(new):
        details.append(f"parameter {name} type {_type_label(old)} -> {_type_label(new)}")
    old_enum, new_enum = old.get("enum"), new.get("enum")
    if old_enum != new_enum:
        if isinstance(old_enum, list) and isinstance(new_enum, list):
            added = [v for v in new_enum if v not in old_enum]
            removed = [v for v in old_enum if v not in new_enum]
            parts = [f"+{_show(v)}" for v in added] + [f"-{_show(v)}" for v in removed]
            details.append(f"parameter {name} enum {' '.join(parts) or 'reordered'}")
        elif new_enum is None:
            details.append(f"parameter {name} enum removed")
        elif old_enum is None and isinstance(new_enum, list):
            details.append(f"parameter {name} enum added ({', '.join(_show(v) for v in new_enum)})")
        else:
            details.append(f"parameter {name} enum changed")
    if old.get("description") != new.get("description"):
        details.append(f"parameter {name} description changed")
    if old.get("default") != new.get("default") or ("default" in old) != ("default" in new):
        details.append(
            f"parameter {name} default {_show(old.get('default', 'none'))} -> "
            f"{_show(new.get('default', 'none'))}"
        )
    covered = {"type", "enum", "description", "default"}
    rest_old = {k: v for k, v in old.items() if k not in covered}
    rest_new = {k: v for k, v in new.items() if k not in covered}
    if rest_old != rest_new and not (
        _type_label(old) != _type_label(new)
        and set(rest_old) <= {"items"}
        and set(rest_new) <= {"items"}
    ):
        details.append(f"parameter {name} schema changed")
    return details


def _executor_details(old: ToolExecutor, new: ToolExecutor) -> list[str]:
    if old == new:
        return []
    return (
        _value_change("executor kind", old.kind, new.kind)
        + _value_change("executor operation", old.operation, new.operation)
        + _value_change("executor url", old.url, new.url)
        + _value_change("executor timeout_s", old.timeout_s, new.timeout_s)
        + _value_change("executor secret_ref", old.secret_ref, new.secret_ref)
    )


# ---------------------------------------------------------------------------------- prompt


def _section_details(old: PromptSection, new: PromptSection) -> list[str]:
    retitled = [f"retitled '{old.title}' -> '{new.title}'"] if old.title != new.title else []
    return retitled + _text_change("template", old.template, new.template)


# ----------------------------------------------------------------------------------- hooks


def _hook_details(old: Hook, new: Hook) -> list[str]:
    return (
        _value_change("event", old.event, new.event)
        + _value_change("condition_kind", old.condition_kind, new.condition_kind)
        + _text_change("condition", old.condition, new.condition)
        + _value_change("matcher", old.matcher, new.matcher)
        + _value_change("action", old.action, new.action)
        + _text_change("feedback", old.feedback, new.feedback)
        + _text_change("fallback_reply", old.fallback_reply, new.fallback_reply)
        + _value_change("max_retries", old.max_retries, new.max_retries)
        + _value_change("timeout_ms", old.timeout_ms, new.timeout_ms)
        + _value_change("fail_mode", old.fail_mode, new.fail_mode)
    )
