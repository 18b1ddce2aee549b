"""Business rules for a harness: what may be saved (errors) and what deserves a look (warnings).

All rules run and all problems are returned, each with the path of the field and a message
that names the bad value and what is allowed. Shapes (types, unknown keys) are checked
earlier by ``serialization``; this module assumes a ``Harness`` and is defensive only where a
wrong type would otherwise crash a rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from harness_app.harness.conditions import TOOL_EVENTS, ConditionError, compile_condition
from harness_app.harness.errors import FieldError, HarnessValidationError, join_path
from harness_app.harness.model import (
    CATALOG_OPERATIONS,
    CONDITION_KINDS,
    EXECUTOR_KINDS,
    FAIL_MODES,
    HOOK_ACTIONS,
    HOOK_EVENTS,
    Harness,
    Hook,
    PromptSection,
    Skill,
    Tool,
    ToolExecutor,
)
from harness_app.harness.prompt import PROMPT_VARIABLES, TemplateError, template_variables
from harness_app.harness.schema_validation import regex_keyword_errors
from harness_app.harness.typed_reader import TypedReader
from harness_app.harness.webhook_address import AddressPolicy

SKILL_NAME_PATTERN = r"^[a-z0-9-]{1,64}$"
SKILL_NAME_HELP = "lowercase letters, digits, hyphens; 1-64 characters"
TOOL_NAME_PATTERN = r"^[A-Za-z0-9_.-]{1,64}$"
TOOL_NAME_HELP = "letters, digits, '_', '.', '-'; 1-64 characters"
SECTION_ID_PATTERN = r"^[a-z0-9_-]{1,64}$"
SECTION_ID_HELP = "lowercase letters, digits, '_', '-'; 1-64 characters"
HOOK_NAME_PATTERN = r"^[a-z0-9-]{1,64}$"
HOOK_NAME_HELP = SKILL_NAME_HELP
MATCHER_PATTERN = r"^[A-Za-z0-9_.*?-]{1,64}$"
SECRET_REF_PATTERN = r"^[A-Z][A-Z0-9_]{0,63}$"
JSON_SCHEMA_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
MAX_SKILL_DESCRIPTION_CHARS = 1024
MAX_WEBHOOK_TIMEOUT_S = 30.0
MAX_HOOK_RETRIES = 5
MAX_HOOK_TIMEOUT_MS = 1000
# Hooks run in order on the live path, each at most its timeout_ms: the counts bound the
# time an event's hooks can take, and what one save costs to check.
MAX_HOOKS = 24
MAX_HOOKS_PER_EVENT = 8
# A skill is chosen from its description alone, so it should say when it applies.
_WHEN_TO_USE = re.compile(r"\bwhen\b|\buse (?:it |this )?for\b|\buse this\b", re.IGNORECASE)

# The validator ``Draft202012Validator.check_schema`` uses (format checks included), but
# iterating all errors instead of raising the first, so each gets its own path.
_META_VALIDATOR = Draft202012Validator(
    Draft202012Validator.META_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER
)


def validate_harness(
    harness: Harness, *, address_policy: AddressPolicy | None = None
) -> list[FieldError]:
    """Every rule violation in ``harness`` (empty list: it may be saved).

    ``address_policy``: which webhook hosts are acceptable (default: public ones only; the
    console passes the deployer's allow-list). Names are not resolved here; the connect-time
    check covers what DNS says.
    """
    policy = address_policy or AddressPolicy()
    errors: list[FieldError] = []
    tool_names = {t.name for t in harness.tools}
    errors += _unique_names("skills", "name", [s.name for s in harness.skills], "skill name")
    for index, skill in enumerate(harness.skills):
        errors += _skill_errors(skill, join_path("skills", index), tool_names)
    errors += _unique_names("tools", "name", [t.name for t in harness.tools], "tool name")
    for index, tool in enumerate(harness.tools):
        errors += _tool_errors(tool, join_path("tools", index), policy)
    sections = harness.prompt.sections
    errors += _unique_names("prompt.sections", "id", [s.id for s in sections], "section id")
    for index, section in enumerate(sections):
        errors += _section_errors(section, join_path("prompt.sections", index))
    errors += _unique_names("hooks", "name", [k.name for k in harness.hooks], "hook name")
    errors += hook_count_errors(harness.hooks)
    # Past the cap the rest are not compiled: a save with 1,000 hooks stays cheap to refuse.
    for index, hook in enumerate(harness.hooks[:MAX_HOOKS]):
        errors += _hook_errors(hook, join_path("hooks", index))
    return errors


def hook_count_errors(hooks: tuple[Hook, ...]) -> list[FieldError]:
    """At most ``MAX_HOOKS`` hooks, and ``MAX_HOOKS_PER_EVENT`` for one event (the error
    names the first hook over the limit)."""
    errors: list[FieldError] = []
    if len(hooks) > MAX_HOOKS:
        errors.append(
            FieldError(
                "hooks", f"a harness has at most {MAX_HOOKS} hooks; this one has {len(hooks)}"
            )
        )
    per_event: dict[object, int] = {}
    for index, hook in enumerate(hooks):
        count = per_event[hook.event] = per_event.get(hook.event, 0) + 1
        if count == MAX_HOOKS_PER_EVENT + 1:
            errors.append(
                FieldError(
                    join_path("hooks", index, "event"),
                    f"more than {MAX_HOOKS_PER_EVENT} hooks for event {hook.event!r}; the "
                    f"limit is {MAX_HOOKS_PER_EVENT} per event",
                )
            )
    return errors


def harness_warnings(harness: Harness) -> list[FieldError]:
    """Non-fatal advice: things that are allowed but probably not what the operator wants."""
    warnings: list[FieldError] = []
    for index, skill in enumerate(harness.skills):
        if skill.description.strip() and not _WHEN_TO_USE.search(skill.description):
            warnings.append(
                FieldError(
                    join_path("skills", index, "description"),
                    "does not say when to use the skill (e.g. 'Use when a viewer asks ...'); "
                    "the agent picks skills from their descriptions",
                )
            )
        if not skill.body.strip():
            warnings.append(
                FieldError(
                    join_path("skills", index, "body"),
                    "is empty; the skill gives the agent no instructions",
                )
            )
    for index, tool in enumerate(harness.tools):
        if tool.read_only and tool.destructive:
            warnings.append(
                FieldError(
                    join_path("tools", index, "destructive"),
                    "is true while read_only is also true; a read-only tool cannot be destructive",
                )
            )
    for index, hook in enumerate(harness.hooks):
        if hook.action == "retry_with_feedback" and hook.max_retries == 0:
            warnings.append(
                FieldError(
                    join_path("hooks", index, "max_retries"),
                    "is 0, so retry_with_feedback never retries (it goes straight to the fallback)",
                )
            )
    return warnings


def ensure_valid(harness: Harness, *, address_policy: AddressPolicy | None = None) -> None:
    """Raise ``HarnessValidationError`` listing every problem, if there is any."""
    errors = validate_harness(harness, address_policy=address_policy)
    if errors:
        raise HarnessValidationError(errors)


# ------------------------------------------------------------------------------ components


def _unique_names(base: str, field: str, names: list[str], label: str) -> list[FieldError]:
    first_index: dict[str, int] = {}
    errors: list[FieldError] = []
    for index, name in enumerate(names):
        if name in first_index:
            errors.append(
                FieldError(
                    join_path(base, index, field),
                    f"duplicate {label} '{name}' (already used by {base}[{first_index[name]}]); "
                    f"{label}s must be unique",
                )
            )
        else:
            first_index[name] = index
    return errors


def _pattern_error(
    path: str, label: str, value: object, pattern: str, help_text: str
) -> list[FieldError]:
    if not isinstance(value, str):
        return [FieldError(path, f"{label} must be a string")]
    if re.fullmatch(pattern.strip("^$"), value):
        return []
    return [FieldError(path, f"{label} '{value}' must match {pattern} ({help_text})")]


def _non_empty(path: str, label: str, value: object) -> list[FieldError]:
    if not isinstance(value, str) or not value.strip():
        return [FieldError(path, f"{label} must not be empty")]
    return []


def _skill_errors(skill: Skill, path: str, tool_names: set[str]) -> list[FieldError]:
    errors = _pattern_error(
        join_path(path, "name"), "name", skill.name, SKILL_NAME_PATTERN, SKILL_NAME_HELP
    )
    errors += _non_empty(join_path(path, "description"), "description", skill.description)
    if isinstance(skill.description, str) and len(skill.description) > MAX_SKILL_DESCRIPTION_CHARS:
        errors.append(
            FieldError(
                join_path(path, "description"),
                f"description is {len(skill.description)} characters; the limit is "
                f"{MAX_SKILL_DESCRIPTION_CHARS}",
            )
        )
    for index, name in enumerate(skill.allowed_tools):
        if name not in tool_names:
            known = ", ".join(sorted(tool_names)) or "none defined"
            errors.append(
                FieldError(
                    join_path(path, "allowed_tools", index),
                    f"unknown tool '{name}'; allowed_tools must name tools of this harness "
                    f"(known: {known})",
                )
            )
    return errors


def _tool_errors(tool: Tool, path: str, policy: AddressPolicy) -> list[FieldError]:
    errors = _pattern_error(
        join_path(path, "name"), "name", tool.name, TOOL_NAME_PATTERN, TOOL_NAME_HELP
    )
    errors += _non_empty(join_path(path, "description"), "description", tool.description)
    errors += input_schema_errors(tool.input_schema, join_path(path, "input_schema"))
    errors += _executor_errors(tool.executor, join_path(path, "executor"), policy)
    return errors


def input_schema_errors(schema: object, path: str) -> list[FieldError]:
    """Problems with a tool's input schema: Draft 2020-12 meta-schema, top-level object, and
    every regex keyword compiling in RE2 (the argument validator runs them there)."""
    if not isinstance(schema, dict):
        return [FieldError(path, "input_schema must be a JSON Schema object")]
    # Plain JSON of bounded depth first: the meta-schema validator recurses and expects JSON.
    reader = TypedReader()
    reader.json_value(schema, path)
    if reader.errors:
        return reader.errors
    errors = [
        FieldError(
            join_path(path, *error.absolute_path),
            f"invalid JSON Schema (Draft 2020-12): {_schema_error_message(error)}",
        )
        for error in sorted(_META_VALIDATOR.iter_errors(schema), key=lambda e: e.json_path)
    ]
    # One error per field: a pattern that is not a regex at all is already reported.
    reported = {e.path for e in errors}
    errors += [e for e in regex_keyword_errors(schema, path) if e.path not in reported]
    if schema.get("type") != "object":
        errors.append(
            FieldError(
                join_path(path, "type"),
                f'top-level type must be "object" (tool arguments are a JSON object), got '
                f"{schema.get('type')!r}",
            )
        )
    return errors


def _schema_error_message(error: ValidationError) -> str:
    # The meta-schema's own wording for a bad "type" ("is not valid under any of the given
    # schemas") does not say what is allowed, and BFCL-style "dict"/"float" are common.
    if error.absolute_path and error.absolute_path[-1] == "type" and error.validator == "anyOf":
        return (
            f"type {error.instance!r} is not a JSON Schema type; use one of "
            f"{', '.join(JSON_SCHEMA_TYPES)} (or a list of them)"
        )
    return error.message


def _executor_errors(executor: ToolExecutor, path: str, policy: AddressPolicy) -> list[FieldError]:
    if executor.kind not in EXECUTOR_KINDS:
        return [
            FieldError(
                join_path(path, "kind"),
                f"kind '{executor.kind}' must be one of {', '.join(EXECUTOR_KINDS)}",
            )
        ]
    if executor.kind == "catalog":
        if executor.operation not in CATALOG_OPERATIONS:
            return [
                FieldError(
                    join_path(path, "operation"),
                    f"catalog operation '{executor.operation}' must be one of "
                    f"{', '.join(CATALOG_OPERATIONS)}",
                )
            ]
        return []
    errors: list[FieldError] = []
    url = executor.url
    try:
        parts = urlsplit(url) if isinstance(url, str) else None
    except ValueError:  # e.g. an unclosed IPv6 bracket
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        errors.append(
            FieldError(
                join_path(path, "url"),
                f"webhook url {url!r} must be an absolute http:// or https:// URL with a host",
            )
        )
    elif problem := policy.host_problem(parts.hostname or ""):
        errors.append(FieldError(join_path(path, "url"), problem))
    timeout = executor.timeout_s
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not (0 < timeout <= MAX_WEBHOOK_TIMEOUT_S)
    ):
        errors.append(
            FieldError(
                join_path(path, "timeout_s"),
                f"timeout_s {timeout!r} must be greater than 0 and at most "
                f"{MAX_WEBHOOK_TIMEOUT_S:g} seconds",
            )
        )
    if not executor.secret_ref:
        errors.append(
            FieldError(
                join_path(path, "secret_ref"),
                "secret_ref is required for webhooks: the name of one of the room's webhook "
                "secrets (e.g. SHOP_WEBHOOK_SECRET), never the secret itself",
            )
        )
    else:
        errors += _pattern_error(
            join_path(path, "secret_ref"),
            "secret_ref",
            executor.secret_ref,
            SECRET_REF_PATTERN,
            "a webhook secret's name: uppercase letters, digits, '_'; never the secret itself",
        )
    return errors


def _section_errors(section: PromptSection, path: str) -> list[FieldError]:
    errors = _pattern_error(
        join_path(path, "id"), "id", section.id, SECTION_ID_PATTERN, SECTION_ID_HELP
    )
    errors += _non_empty(join_path(path, "title"), "title", section.title)
    if not isinstance(section.template, str):
        return [*errors, FieldError(join_path(path, "template"), "template must be a string")]
    try:
        template_variables(section.template, known=PROMPT_VARIABLES)
    except TemplateError as exc:
        errors.append(FieldError(join_path(path, "template"), str(exc)))
    return errors


def _choice_error(path: str, label: str, value: object, choices: Iterable[str]) -> list[FieldError]:
    choices = tuple(choices)
    if value in choices:
        return []
    return [FieldError(path, f"{label} {value!r} must be one of {', '.join(choices)}")]


def _int_range_error(path: str, label: str, value: Any, low: int, high: int) -> list[FieldError]:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        return [FieldError(path, f"{label} {value!r} must be an integer from {low} to {high}")]
    return []


def _hook_errors(hook: Hook, path: str) -> list[FieldError]:
    errors = _pattern_error(
        join_path(path, "name"), "name", hook.name, HOOK_NAME_PATTERN, HOOK_NAME_HELP
    )
    errors += _choice_error(join_path(path, "event"), "event", hook.event, HOOK_EVENTS)
    errors += _choice_error(join_path(path, "action"), "action", hook.action, HOOK_ACTIONS)
    errors += _choice_error(
        join_path(path, "condition_kind"), "condition_kind", hook.condition_kind, CONDITION_KINDS
    )
    errors += _choice_error(join_path(path, "fail_mode"), "fail_mode", hook.fail_mode, FAIL_MODES)
    if hook.event in HOOK_EVENTS and hook.condition_kind in CONDITION_KINDS:
        if not isinstance(hook.condition, str):
            errors.append(FieldError(join_path(path, "condition"), "condition must be a string"))
        else:
            try:
                compile_condition(hook.condition_kind, hook.condition, hook.event)
            except ConditionError as exc:
                errors.append(FieldError(join_path(path, "condition"), exc.message))
    errors += _int_range_error(
        join_path(path, "max_retries"), "max_retries", hook.max_retries, 0, MAX_HOOK_RETRIES
    )
    errors += _int_range_error(
        join_path(path, "timeout_ms"), "timeout_ms", hook.timeout_ms, 1, MAX_HOOK_TIMEOUT_MS
    )
    if hook.action == "retry_with_feedback" and not (
        isinstance(hook.feedback, str) and hook.feedback.strip()
    ):
        errors.append(
            FieldError(
                join_path(path, "feedback"),
                "feedback is required when action is retry_with_feedback: it tells the model "
                "what to fix",
            )
        )
    if hook.action == "fallback_reply" and not (
        isinstance(hook.fallback_reply, str) and hook.fallback_reply.strip()
    ):
        errors.append(
            FieldError(
                join_path(path, "fallback_reply"),
                "fallback_reply is required when action is fallback_reply: it is sent instead "
                "of the model's reply",
            )
        )
    errors += _matcher_errors(hook, join_path(path, "matcher"))
    return errors


def _matcher_errors(hook: Hook, path: str) -> list[FieldError]:
    matcher = hook.matcher
    if matcher == "*":
        return []
    errors = _pattern_error(
        path,
        "matcher",
        matcher,
        MATCHER_PATTERN,
        "a glob over tool names such as '*' or 'get_*': letters, digits, '_', '.', '-', '*', '?'",
    )
    if not errors and hook.event not in TOOL_EVENTS:
        errors.append(
            FieldError(
                path,
                f"matcher '{matcher}' only applies to {' and '.join(TOOL_EVENTS)} hooks; "
                f"use '*' for {hook.event}",
            )
        )
    return errors
