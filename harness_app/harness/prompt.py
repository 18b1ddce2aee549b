"""System-prompt templates and their assembly.

Templates use ``{variable}`` slots from a fixed vocabulary (``PROMPT_VARIABLES``). Only bare
names are allowed: no positional ``{}``, no ``{a.b}`` / ``{a[0]}`` access, no ``!r`` or
``:>10`` — those would let an edited template reach into Python objects or break rendering,
and an operator could not tell what they render to. ``{{`` and ``}}`` are literal braces.

Skills appear in the prompt by name and description only; the agent loads a skill's body
when it selects that skill, which keeps the prompt short however many skills there are.
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal
from xml.sax.saxutils import escape, quoteattr

from harness_app.harness.model import Harness, Skill, Tool

PROMPT_VARIABLES: dict[str, str] = {
    "room_name": "Name of the live room, as viewers see it.",
    "room_locale": "Locale of the room (e.g. en-US, zh-CN); reply in this language.",
    "currency": "Currency code used for prices in this room (e.g. CNY).",
    "product_title": "Title of the product currently on screen ('' when none).",
    "product_sku": "SKU of the product currently on screen ('' when none).",
    "product_price": "Catalog price of the product on screen, as text ('' when none).",
    "skills": "The skill list, one '- name: description' line per skill.",
    "tools": "The tool list, one '- name: description' line per tool.",
    "recent_comments": "Recent viewer comments, one quoted line each (untrusted text).",
    "today": "Today's date (ISO 8601).",
}

PromptLayout = Literal["markdown", "xml", "json"]
PROMPT_LAYOUTS: tuple[str, ...] = ("markdown", "xml", "json")

_FORMATTER = string.Formatter()


class TemplateError(ValueError):
    """A prompt template uses something other than known ``{name}`` slots."""


def template_variables(template: str, known: Iterable[str] | None = None) -> set[str]:
    """The variable names a template uses.

    Raises ``TemplateError`` for unbalanced braces, positional ``{}``/``{0}``, attribute or
    index access, conversions and format specs, and — when ``known`` is given — for names
    outside it (all unknown names are listed in one message).
    """
    try:
        parsed = list(_FORMATTER.parse(template))
    except ValueError as exc:
        raise TemplateError(
            f"unbalanced braces or malformed slot ({exc}); write {{{{ and }}}} for literal braces"
        ) from exc
    names: set[str] = set()
    for _literal, field_name, format_spec, conversion in parsed:
        if field_name is None:
            continue
        slot = (
            "{"
            + field_name
            + (f"!{conversion}" if conversion else "")
            + (f":{format_spec}" if format_spec else "")
            + "}"
        )
        if field_name == "" or field_name.isdigit():
            raise TemplateError(
                f"positional slot {slot} is not allowed; use a named variable such as {{room_name}}"
            )
        if "." in field_name or "[" in field_name:
            base = field_name.split(".")[0].split("[")[0]
            raise TemplateError(
                f"{slot} uses attribute or index access; only plain names like {{{base}}} "
                "are allowed"
            )
        if not field_name.isidentifier():
            raise TemplateError(
                f"{slot} is not a valid variable name (letters, digits and underscores)"
            )
        if conversion:
            raise TemplateError(
                f"{slot} uses a conversion (!{conversion}); write {{{field_name}}} instead"
            )
        if format_spec:
            raise TemplateError(
                f"{slot} uses a format spec (:{format_spec}); write {{{field_name}}} instead"
            )
        names.add(field_name)
    if known is not None:
        allowed = set(known)
        unknown = sorted(names - allowed)
        if unknown:
            listed = ", ".join("{" + name + "}" for name in unknown)
            raise TemplateError(
                f"unknown variable{'s' if len(unknown) > 1 else ''} {listed}; "
                f"known variables: {', '.join(sorted(allowed))}"
            )
    return names


@dataclass(frozen=True)
class PromptContext:
    """Per-request values for the template variables (the harness supplies skills/tools)."""

    room_name: str
    room_locale: str
    currency: str
    product_title: str = ""
    product_sku: str = ""
    product_price: str = ""
    recent_comments: tuple[str, ...] = ()
    today: str = ""


def render_skill_list(skills: Iterable[Skill]) -> str:
    return "\n".join(f"- {s.name}: {_one_line(s.description)}" for s in skills)


def render_tool_list(tools: Iterable[Tool]) -> str:
    return "\n".join(f"- {t.name}: {_one_line(t.description)}" for t in tools)


def render_comments(comments: Iterable[str]) -> str:
    # Viewer comments are untrusted: each is flattened to one quoted line so that a comment
    # cannot start a fake "## Rules" heading or close an XML section in the prompt.
    return "\n".join(f"- {json.dumps(_one_line(c), ensure_ascii=False)}" for c in comments)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def prompt_values(harness: Harness, ctx: PromptContext) -> dict[str, str]:
    """The value of every variable in ``PROMPT_VARIABLES`` for one request."""
    return {
        "room_name": ctx.room_name,
        "room_locale": ctx.room_locale,
        "currency": ctx.currency,
        "product_title": ctx.product_title,
        "product_sku": ctx.product_sku,
        "product_price": ctx.product_price,
        "skills": render_skill_list(harness.skills),
        "tools": render_tool_list(harness.tools),
        "recent_comments": render_comments(ctx.recent_comments),
        "today": ctx.today,
    }


def render_template(template: str, values: Mapping[str, str]) -> str:
    """Fill a template; raises ``TemplateError`` if it is not a valid template."""
    template_variables(template, known=values.keys())
    return template.format_map(values)


def assemble_prompt(harness: Harness, ctx: PromptContext, layout: PromptLayout = "markdown") -> str:
    """The system prompt: the harness's sections in order, each under its title.

    ``markdown``: ``## Title`` headings; ``xml``: ``<section id=".." title="..">`` elements;
    ``json``: ``{"sections": [{"id", "title", "content"}]}``. Layout is itself a harness
    variation (HSA changes it), so all three carry exactly the same content.
    """
    if layout not in PROMPT_LAYOUTS:
        raise ValueError(f"layout {layout!r} must be one of {', '.join(PROMPT_LAYOUTS)}")
    values = prompt_values(harness, ctx)
    if layout == "xml":
        # Escape the filled-in values (viewer comments, product titles), not the operator's
        # template, so a value cannot close a <section> while templates may use tags.
        values = {name: escape(value) for name, value in values.items()}
    rendered = [
        (section.id, section.title, render_template(section.template, values).strip("\n"))
        for section in harness.prompt.sections
    ]
    if layout == "markdown":
        return "\n\n".join(f"## {title}\n\n{content}" for _id, title, content in rendered)
    if layout == "xml":
        return "\n".join(
            f"<section id={quoteattr(section_id)} title={quoteattr(title)}>\n{content}\n</section>"
            for section_id, title, content in rendered
        )
    return json.dumps(
        {
            "sections": [
                {"id": section_id, "title": title, "content": content}
                for section_id, title, content in rendered
            ]
        },
        ensure_ascii=False,
        indent=2,
    )
