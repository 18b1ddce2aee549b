"""``validate_harness`` at augmentation speed: the same rules, with cached component checks.

Full validation costs about 3 ms (JSON-Schema meta-validation of every tool schema and a CEL
compile per hook); HSA verifies every augmented harness and must do thousands per second. An
augmented harness mostly reuses the original's components, and the edited ones repeat across
examples, so each expensive check is cached on something exact:

- a tool schema by object identity, then by its canonical JSON text (meta-schema errors and a
  compiled ``Draft202012Validator`` for the arguments);
- an executor, a prompt section and a hook by value (they are frozen and hashable), through
  ``validate_harness`` on a harness holding just that component;
- names, descriptions, uniqueness and ``allowed_tools`` references are cheap and run live.

A test asserts that ``harness_problems`` reports exactly the error paths ``validate_harness``
reports, on valid and invalid harnesses. Schemas are treated as immutable, as everywhere in the
harness package: mutating a schema dict in place after checking it is not supported.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from jsonschema import Draft202012Validator
from jsonschema.protocols import Validator

from harness_app.harness.conditions import ConditionError
from harness_app.harness.errors import FieldError, join_path
from harness_app.harness.model import (
    CONDITION_KINDS,
    HOOK_EVENTS,
    Harness,
    Hook,
    Prompt,
    PromptSection,
    Skill,
    Tool,
    ToolExecutor,
)
from harness_app.harness.schema_validation import (
    SUBSCHEMA_LISTS,
    SUBSCHEMA_MAPS,
    SUBSCHEMA_SINGLE,
    re2_error,
    re2_validator,
)
from harness_app.harness.serialization import canonical_json
from harness_app.harness.typed_reader import MAX_JSON_DEPTH
from harness_app.harness.validation import (
    MAX_HOOKS,
    MAX_SKILL_DESCRIPTION_CHARS,
    SKILL_NAME_HELP,
    SKILL_NAME_PATTERN,
    TOOL_NAME_HELP,
    TOOL_NAME_PATTERN,
    hook_count_errors,
    input_schema_errors,
    validate_harness,
)
from harness_app.hsa.hook_decisions import compiled_condition
from harness_app.hsa.identity_cache import DATASET_CACHE_SIZE, IdentityCache
from harness_app.hsa.renaming import replace_hook

_SKILL_NAME = re.compile(SKILL_NAME_PATTERN.strip("^$"))
_TOOL_NAME = re.compile(TOOL_NAME_PATTERN.strip("^$"))
_TEXT_CACHE_SIZE: Final = 4096
_PLACEHOLDER_SCHEMA: Final[dict[str, Any]] = {"type": "object", "properties": {}}


# The meta-schema check validation.py runs (Draft 2020-12, format assertions on keywords).
_META_VALIDATOR: Final = Draft202012Validator(
    Draft202012Validator.META_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER
)
# The subschema keywords (SUBSCHEMA_*, from schema_validation) are each checked against the
# same meta-schema through "$dynamicRef": "#meta", so a schema is valid exactly when its
# "shell", with each subschema replaced by ``true``, and every subschema are valid.


# Keyword values the meta-schema only type-checks; the shell replaces them by a value of the
# same JSON type so that edits to wording, names and defaults do not defeat the cache.
_ANY_STRING: Final = frozenset({"description", "title", "$comment"})
_ANY_VALUE: Final = frozenset({"default", "const"})
_ANY_ARRAY: Final = frozenset({"examples", "enum"})


def _normalised(key: str, value: Any) -> Any:
    if key in _ANY_STRING and isinstance(value, str):
        return ""
    if key in _ANY_VALUE:
        return None
    if key in _ANY_ARRAY and isinstance(value, list):
        return []
    if (
        key == "required"
        and isinstance(value, list)
        and all(isinstance(v, str) for v in value)
        and len(set(value)) == len(value)
    ):
        # Only "array of unique strings" is checked; which strings does not matter.
        return [f"r{i}" for i in range(len(value))]
    return value


def _plain_height(value: Any) -> int | None:
    """Nesting height of plain JSON data (0 for scalars), None if it is not plain JSON
    (tuples, NaN, non-string keys, other types: ``input_schema_errors`` reports those)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return 0
    if isinstance(value, str | bool | int):
        return 0
    if isinstance(value, float):
        return 0 if math.isfinite(value) else None
    if isinstance(value, list):
        heights = [_plain_height(item) for item in value]
    elif isinstance(value, dict) and all(isinstance(key, str) for key in value):
        heights = [_plain_height(item) for item in value.values()]
    else:
        return None
    if any(h is None for h in heights):
        return None
    return 1 + max((h for h in heights if h is not None), default=0)


@dataclass(frozen=True)
class KnownValid:
    """The tools and schema nodes of a harness already verified valid, by identity (each
    entry keeps its object alive, so an id cannot be reused while this record exists).

    An augmented harness shares most objects with its original: a renamed tool keeps its
    schema, a renamed parameter keeps its subschema. Per-object caches bounded for the whole
    process thrash when a run cycles through a thousand cases, so ``augment`` keeps one of
    these beside each verified original and the checks consult it first. Sound because the
    checks are context-free: a node's validity and height do not depend on where it sits."""

    tools: dict[int, Tool]
    schemas: dict[int, object]
    nodes: dict[int, tuple[dict[str, Any], int]]
    # (description, input schema, executor) ids of each tool: a renamed copy of a verified
    # tool shares all three objects, and only its name needs checking.
    parts: dict[tuple[int, int, int], Tool]


class SchemaCache:
    """Tool-schema checks cached per schema *node* by identity, and the meta-schema check of
    each node's shell by canonical text, so an edit that rebuilds a schema around unchanged
    property schemas re-checks only the new dicts, and reworded or renamed nodes hit the
    shell cache. Argument validators are cached by canonical text. All caches are bounded."""

    def __init__(self) -> None:
        self._errors: IdentityCache[tuple[FieldError, ...]] = IdentityCache(4096)
        self._nodes: IdentityCache[tuple[int | None]] = IdentityCache(8192)
        self._shells: dict[object, bool] = {}
        self._validators: IdentityCache[Validator] = IdentityCache()
        self._validators_by_text: dict[str, Validator] = {}
        self._arguments: dict[tuple[int, object], tuple[Validator, bool]] = {}
        # property schema -> (its validator, None if it refers elsewhere; value -> verdict)
        self._subschemas: IdentityCache[tuple[Validator | None, dict[object, bool]]] = (
            IdentityCache(DATASET_CACHE_SIZE)
        )

    def errors(self, schema: object, known: KnownValid | None = None) -> tuple[FieldError, ...]:
        """``input_schema_errors(schema, "")``, computed in full only for invalid schemas.
        ``known``: the verified original's objects, valid without a look-up."""
        if known is not None and known.schemas.get(id(schema)) is schema:
            return ()
        hit = self._errors.get(schema)
        if hit is not None:
            return hit
        errors: tuple[FieldError, ...] = ()
        valid = (
            isinstance(schema, dict)
            and schema.get("type") == "object"
            and (height := self._node(schema, known)) is not None
            and height <= MAX_JSON_DEPTH
        )
        if not valid:
            errors = tuple(input_schema_errors(schema, ""))
        self._errors.put(schema, errors)
        return errors

    def validator(self, schema: dict[str, Any]) -> Validator:
        """A validator for arguments (the schema must be valid); regexes run in RE2."""
        hit = self._validators.get(schema)
        if hit is not None:
            return hit
        validator = self._text_validator(schema)
        self._validators.put(schema, validator)
        return validator

    def arguments_valid(
        self, schema: dict[str, Any], arguments: object, known: KnownValid | None = None
    ) -> bool:
        """Whether arguments validate against a valid schema. A plain object schema is
        judged property by property (``_property_verdicts``); any other goes to its whole
        validator, cached by the validator and the arguments' canonical JSON."""
        verdict = self._property_verdicts(schema, arguments, known)
        if verdict is not None:
            return verdict
        validator = self.validator(schema)
        instance: Any = arguments  # any value; the validator judges it
        # (not canonical JSON alone: it writes a tuple as a list, which is not a JSON array)
        key = _value_key(arguments)
        if key is None:
            return bool(validator.is_valid(instance))
        hit = self._arguments.get((id(validator), key))
        if hit is not None and hit[0] is validator:
            return hit[1]
        valid = bool(validator.is_valid(instance))
        if len(self._arguments) >= _TEXT_CACHE_SIZE:
            self._arguments.clear()
        self._arguments[(id(validator), key)] = (validator, valid)
        return valid

    def _property_verdicts(
        self, schema: dict[str, Any], arguments: object, known: KnownValid | None
    ) -> bool | None:
        """The verdict of ``re2_validator(schema).is_valid(arguments)`` for a top-level
        object schema of plain keywords, or None when it takes the whole validator.

        An augmented schema is mostly new top-level dicts around the original's property
        schemas (renamed, reordered, extended, reworded), so its whole validator would be
        built and run afresh for every pair. Here only the top level is judged in Python
        (the keywords of ``_TOP_KEYWORDS``: type object, required, properties,
        additionalProperties, annotations) and each argument against its property
        schema, cached by that schema's identity and the value. Exact because in Draft
        2020-12 a property's subschema is validated on its own (the same validator class,
        no format assertion), unless it refers elsewhere (``_has_reference``); a property
        test compares the verdicts with the whole validator's."""
        if not isinstance(arguments, dict) or not schema.keys() <= _TOP_KEYWORDS:
            return None
        kind = schema.get("type", "object")
        properties = schema.get("properties", _NO_PROPERTIES)
        required = schema.get("required", _NO_NAMES)
        additional = schema.get("additionalProperties", True)
        if (
            kind != "object"
            or not isinstance(kind, str)
            or not isinstance(properties, dict)
            or not isinstance(required, list)
            or not isinstance(additional, bool | dict)
        ):
            return None
        for name in required:
            if not isinstance(name, str):
                return None
            if name not in arguments:
                return False
        verdict = True
        for name, value in arguments.items():
            sub = properties.get(name, additional)
            if sub is True:
                continue
            if sub is False:
                verdict = False
                continue
            if not isinstance(sub, dict):
                return None
            valid = self._value_verdict(sub, value, known)
            if valid is None:
                return None
            verdict = verdict and valid
        return verdict

    def _value_verdict(
        self, sub: dict[str, Any], value: Any, known: KnownValid | None
    ) -> bool | None:
        """Whether ``value`` validates against the property schema ``sub`` on its own;
        None when ``sub`` refers elsewhere. Cached by ``sub``'s identity and the value,
        when ``sub`` is a node of the verified original (``known``; any node without one):
        an edited property schema is a new object of one example, which an entry would keep
        alive, and its validator is found by text."""
        entry = self._subschemas.get(sub)
        if entry is None:
            entry = (None if _has_reference(sub) else self._text_validator(sub), {})
            if known is None or known.nodes.get(id(sub), (None,))[0] is sub:
                self._subschemas.put(sub, entry)
        validator, verdicts = entry
        if validator is None:
            return None
        key = _value_key(value)
        if key is None:
            return bool(validator.is_valid(value))
        hit = verdicts.get(key)
        if hit is None:
            hit = bool(validator.is_valid(value))
            if len(verdicts) >= _VERDICTS_PER_SCHEMA:
                verdicts.clear()
            verdicts[key] = hit
        return hit

    def _text_validator(self, schema: dict[str, Any]) -> Validator:
        try:
            text = canonical_json(schema)
        except (TypeError, ValueError):  # not plain JSON: not a valid tool schema either
            return re2_validator(schema)
        validator = self._validators_by_text.get(text)
        if validator is None:
            validator = re2_validator(schema)
            if len(self._validators_by_text) >= _TEXT_CACHE_SIZE:
                self._validators_by_text.clear()
            self._validators_by_text[text] = validator
        return validator

    def _node(self, node: dict[str, Any], known: KnownValid | None = None) -> int | None:
        """Height of a valid, plain-JSON schema node; None when it or a subschema is not."""
        if known is not None:
            entry = known.nodes.get(id(node))
            if entry is not None and entry[0] is node:
                return entry[1]
        hit = self._nodes.get(node)
        if hit is not None:
            return hit[0]
        height = self._compute_node(node, known)
        self._nodes.put(node, (height,))
        return height

    def node_heights(self, schema: dict[str, Any]) -> dict[int, tuple[dict[str, Any], int]]:
        """id -> (node, height) of every schema node of a *valid* schema (the nodes
        ``_compute_node`` descends into, the schema itself included)."""
        found: dict[int, tuple[dict[str, Any], int]] = {}
        stack = [schema]
        while stack:
            node = stack.pop()
            if id(node) in found:
                continue
            height = self._node(node)
            if height is None:  # (not reached for a valid schema)
                raise ValueError("node_heights needs a valid schema")
            found[id(node)] = (node, height)
            for key, value in node.items():
                if key in SUBSCHEMA_SINGLE and isinstance(value, dict):
                    stack.append(value)
                elif key in SUBSCHEMA_MAPS and isinstance(value, dict):
                    stack += [v for v in value.values() if isinstance(v, dict)]
                elif key in SUBSCHEMA_LISTS and isinstance(value, list):
                    stack += [v for v in value if isinstance(v, dict)]
        return found

    def _compute_node(self, node: dict[str, Any], known: KnownValid | None) -> int | None:
        # One pass builds the shell item of each keyword (subschemas replaced by ``true``,
        # property names by placeholders, type-checked-only values normalised), checks it
        # and takes the nesting height.
        # The Draft 2020-12 meta-schema constrains each keyword on its own (no keyword's
        # rule reads another), so a shell is valid exactly when each one-keyword shell is,
        # and a new combination of seen keyword values costs no meta-schema validation.
        # Each one-keyword shell is cached under an exact key: (keyword, type, value) for a
        # str, int, bool or None value (equal values of these exact types are the same
        # JSON), (keyword, marker, count) for a shell of ``true`` subschemas, and otherwise
        # the repr of the item, which is injective on plain JSON (unlike str(), it keeps 1,
        # 1.0 and True apart) and cheaper than canonical JSON.
        height = 0
        for key, value in node.items():
            if not isinstance(key, str) or (key in _RE2_KEYWORDS and not _re2_safe(key, value)):
                return None  # the full check reports it
            child: int | None
            shell_key: object
            shell_value: Any
            if key in _SUBSCHEMA_SINGLE and isinstance(value, dict):
                shell_key, shell_value = (key, _ONE_SCHEMA), True
                child = self._node(value, known)
            elif (
                key in _SUBSCHEMA_MAPS and isinstance(value, dict) and _all_schemas(value.values())
            ):
                if key == "properties":
                    shell_key, shell_value = (key, _SCHEMA_MAP, len(value)), None
                else:
                    shell_value = dict.fromkeys(value, True)
                    shell_key = repr((key, shell_value))
                child = self._children_height(value.values(), known)
            elif key in _SUBSCHEMA_LISTS and isinstance(value, list) and _all_schemas(value):
                shell_key, shell_value = (key, _SCHEMA_LIST, len(value)), [True] * len(value)
                child = self._children_height(value, known)
            elif key == "required" and _unique_names(value):
                # (what _normalised and _plain_height give, without building the shell)
                shell_key, shell_value, child = (key, _UNIQUE_NAMES, len(value)), None, 1
            else:
                shell_value = _normalised(key, value)
                kind = type(shell_value)
                if kind in _EXACT_SCALARS:
                    shell_key = (key, kind, shell_value)
                    child = 0 if type(value) in _EXACT_SCALARS else _plain_height(value)
                else:
                    shell_key = repr((key, shell_value))
                    child = _plain_height(value)
            if child is None:
                return None
            if child > height:
                height = child
            valid = self._shells.get(shell_key)
            if valid is None:
                if shell_value is None and key == "properties":
                    shell_value = dict.fromkeys(_placeholders(len(value)), True)
                elif shell_value is None and key == "required":
                    shell_value = _normalised(key, value)
                valid = bool(_META_VALIDATOR.is_valid({key: shell_value}))
                if len(self._shells) >= DATASET_CACHE_SIZE:
                    self._shells.clear()
                self._shells[shell_key] = valid
            if not valid:
                return None
        return height + 1

    def _children_height(self, children: Any, known: KnownValid | None) -> int | None:
        height = 0
        nodes = known.nodes if known is not None else _NO_NODES
        for child in children:
            if isinstance(child, dict):
                entry = nodes.get(id(child))
                if entry is not None and entry[0] is child:
                    sub: int | None = entry[1]
                else:
                    sub = self._node(child, known)
                if sub is None:
                    return None
                if sub > height:
                    height = sub
        return height + 1


_SUBSCHEMA_SINGLE: Final = frozenset(SUBSCHEMA_SINGLE)
_SUBSCHEMA_MAPS: Final = frozenset(SUBSCHEMA_MAPS)
_SUBSCHEMA_LISTS: Final = frozenset(SUBSCHEMA_LISTS)
_RE2_KEYWORDS: Final = frozenset({"pattern", "patternProperties", "unevaluatedProperties"})
_EXACT_SCALARS: Final = frozenset({str, int, bool, type(None)})
_NO_NODES: Final[dict[int, tuple[dict[str, Any], int]]] = {}
# Markers in shell cache keys (never equal to a JSON value or a type).
_ONE_SCHEMA: Final = object()
_SCHEMA_MAP: Final = object()
_SCHEMA_LIST: Final = object()
_UNIQUE_NAMES: Final = object()


def _unique_names(value: Any) -> bool:
    """A list of distinct plain strings (``_normalised`` makes it placeholders)."""
    return (
        type(value) is list
        and all(type(item) is str for item in value)
        and len(set(value)) == len(value)
    )


# Top-level keywords ``_property_verdicts`` judges itself (the rest are annotations, which
# never affect validation); "$schema", "$defs" and the rest send a schema to its validator.
_TOP_KEYWORDS: Final = frozenset(
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
    }
)
_NO_PROPERTIES: Final[dict[str, Any]] = {}
_NO_NAMES: Final[list[str]] = []
# Keywords that make a subschema's verdict depend on more than the subschema: references
# resolve against the root document, and "$id"/"$schema" change the base URI or dialect.
_REFERENCE_KEYWORDS: Final = frozenset(
    {"$ref", "$dynamicRef", "$recursiveRef", "$id", "$schema", "$anchor", "$dynamicAnchor"}
)
_VERDICTS_PER_SCHEMA: Final = 256


def _has_reference(value: Any) -> bool:
    """Whether any dict anywhere in ``value`` has a reference keyword (data under "enum" or
    "const" included: over-cautious, never wrong)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if not _REFERENCE_KEYWORDS.isdisjoint(item):
                return True
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def _value_key(value: object) -> object:
    """An exact cache key for an argument value: (type, value) for scalars (so 1, 1.0 and
    True stay apart), canonical JSON for plain JSON containers (no tuples or non-string
    keys, which JSON text would not tell from lists and strings), else None."""
    if value is None or isinstance(value, str | bool | int | float):
        return (type(value), value)
    if _plain_height(value) is None:
        return None
    return canonical_json(value)


def _re2_safe(key: str, value: Any) -> bool:
    """The fast path's share of ``regex_keyword_errors``: regexes compile in RE2, and
    ``unevaluatedProperties`` (rare) always takes the full check."""
    if key == "pattern" and isinstance(value, str):
        return re2_error(value) is None
    if key == "patternProperties" and isinstance(value, dict):
        return all(isinstance(k, str) and re2_error(k) is None for k in value)
    return key != "unevaluatedProperties"


@lru_cache(maxsize=256)
def _placeholders(count: int) -> tuple[str, ...]:
    return tuple(f"p{i}" for i in range(count))


def _all_schemas(values: Any) -> bool:
    return all(isinstance(value, dict | bool) for value in values)


SCHEMAS = SchemaCache()


def _reroot(errors: tuple[FieldError, ...], prefix: str, target: str) -> list[FieldError]:
    return [
        FieldError(
            target + e.path[len(prefix) :] if e.path.startswith(prefix) else e.path, e.message
        )
        for e in errors
    ]


@lru_cache(maxsize=4096)
def _executor_errors(executor: ToolExecutor) -> tuple[FieldError, ...]:
    tool = Tool("x", "x", _PLACEHOLDER_SCHEMA, executor)
    return tuple(validate_harness(Harness(tools=(tool,))))


@lru_cache(maxsize=8192)
def _section_errors(section: PromptSection) -> tuple[FieldError, ...]:
    return tuple(validate_harness(Harness(prompt=Prompt(sections=(section,)))))


@lru_cache(maxsize=8192)
def _hook_rule_errors(hook: Hook) -> tuple[FieldError, ...]:
    return tuple(validate_harness(Harness(hooks=(hook,))))


@lru_cache(maxsize=8192)
def _condition_error(kind: str, source: str, event: str) -> str | None:
    try:
        compiled_condition(kind, source, event)
    except ConditionError as exc:
        return exc.message
    return None


def _hook_errors(hook: Hook) -> tuple[FieldError, ...]:
    """validate_harness's errors for one hook. Every rule but the condition is checked on
    the hook with a cheap placeholder condition (a one-character regex, so a cache miss costs
    no CEL compile), cached by that hook; the real condition goes through the compile cache.
    Thresholds, wording and matchers thus vary without recompiling anything."""
    if (
        hook.condition_kind not in CONDITION_KINDS
        or hook.event not in HOOK_EVENTS
        or not isinstance(hook.condition, str)
    ):
        return _hook_rule_errors(hook)
    errors = _hook_rule_errors(replace_hook(hook, condition="x", condition_kind="regex"))
    message = _condition_error(hook.condition_kind, hook.condition, hook.event)
    if message is None:
        return errors
    return (*errors, FieldError("hooks[0].condition", message))


def _name_error(
    path: str, value: str, pattern: re.Pattern[str], raw: str, help_text: str
) -> list[FieldError]:
    if isinstance(value, str) and pattern.fullmatch(value):
        return []
    if not isinstance(value, str):
        return [FieldError(path, "name must be a string")]
    return [FieldError(path, f"name '{value}' must match {raw} ({help_text})")]


def _duplicates(base: str, field: str, names: list[str], label: str) -> list[FieldError]:
    first: dict[str, int] = {}
    errors = []
    for index, name in enumerate(names):
        if name in first:
            errors.append(
                FieldError(
                    join_path(base, index, field),
                    f"duplicate {label} '{name}' (already used by {base}[{first[name]}]); "
                    f"{label}s must be unique",
                )
            )
        else:
            first[name] = index
    return errors


def _one_skill_errors(skill: Skill) -> tuple[FieldError, ...]:
    """Name and description errors of one skill, with paths under ``skills[0]``."""
    path = "skills[0]"
    errors = _name_error(
        f"{path}.name", skill.name, _SKILL_NAME, SKILL_NAME_PATTERN, SKILL_NAME_HELP
    )
    if not isinstance(skill.description, str) or not skill.description.strip():
        errors.append(FieldError(f"{path}.description", "description must not be empty"))
    if isinstance(skill.description, str) and (
        len(skill.description) > MAX_SKILL_DESCRIPTION_CHARS
    ):
        errors.append(
            FieldError(
                f"{path}.description",
                f"description is {len(skill.description)} characters; the limit is "
                f"{MAX_SKILL_DESCRIPTION_CHARS}",
            )
        )
    return tuple(errors)


_SKILL: IdentityCache[tuple[FieldError, ...]] = IdentityCache()


def _skill_errors(skills: tuple[Skill, ...], tool_names: set[str]) -> list[FieldError]:
    errors = _duplicates("skills", "name", [s.name for s in skills], "skill name")
    for index, skill in enumerate(skills):
        found = _SKILL.get(skill)
        if found is None:
            found = _one_skill_errors(skill)
            _SKILL.put(skill, found)
        if found:
            errors += _reroot(found, "skills[0]", f"skills[{index}]")
        for position, name in enumerate(skill.allowed_tools):
            if name not in tool_names:
                known = ", ".join(sorted(tool_names)) or "none defined"
                errors.append(
                    FieldError(
                        f"skills[{index}].allowed_tools[{position}]",
                        f"unknown tool '{name}'; allowed_tools must name tools of this harness "
                        f"(known: {known})",
                    )
                )
    return errors


def _one_tool_errors(tool: Tool, known: KnownValid | None = None) -> tuple[FieldError, ...]:
    """Errors of one tool, with paths under ``tools[0]``."""
    path = "tools[0]"
    errors = _name_error(f"{path}.name", tool.name, _TOOL_NAME, TOOL_NAME_PATTERN, TOOL_NAME_HELP)
    if not isinstance(tool.description, str) or not tool.description.strip():
        errors.append(FieldError(f"{path}.description", "description must not be empty"))
    errors += [
        FieldError(
            join_path(f"{path}.input_schema", e.path) if e.path else f"{path}.input_schema",
            e.message,
        )
        for e in SCHEMAS.errors(tool.input_schema, known)
    ]
    errors += _executor_errors(tool.executor)
    return tuple(errors)


_TOOL: IdentityCache[tuple[FieldError, ...]] = IdentityCache(4096)


def _tool_errors(tools: tuple[Tool, ...], known: KnownValid | None = None) -> list[FieldError]:
    errors = _duplicates("tools", "name", [t.name for t in tools], "tool name")
    for index, tool in enumerate(tools):
        if known is not None:
            if known.tools.get(id(tool)) is tool:
                continue  # a tool of the verified original: no errors
            twin = known.parts.get(_parts(tool))
            if (
                twin is not None
                and twin.description is tool.description
                and twin.input_schema is tool.input_schema
                and twin.executor is tool.executor
            ):
                # A renamed copy: ``_one_tool_errors`` reads only the name, description,
                # schema and executor, and the last three are the verified twin's objects.
                errors += _name_error(
                    f"tools[{index}].name", tool.name, _TOOL_NAME, TOOL_NAME_PATTERN, TOOL_NAME_HELP
                )
                continue
        found = _TOOL.get(tool)
        if found is None:
            found = _one_tool_errors(tool, known)
            _TOOL.put(tool, found)
        if found:
            errors += _reroot(found, "tools[0]", f"tools[{index}]")
    return errors


def _prompt_errors(sections: tuple[PromptSection, ...]) -> list[FieldError]:
    errors = _duplicates("prompt.sections", "id", [s.id for s in sections], "section id")
    for index, section in enumerate(sections):
        errors += _reroot(
            _section_errors(section), "prompt.sections[0]", f"prompt.sections[{index}]"
        )
    return errors


def _hooks_errors(hooks: tuple[Hook, ...]) -> list[FieldError]:
    errors = _duplicates("hooks", "name", [k.name for k in hooks], "hook name")
    errors += hook_count_errors(hooks)
    for index, hook in enumerate(hooks[:MAX_HOOKS]):
        errors += _reroot(_hook_errors(hook), "hooks[0]", f"hooks[{index}]")
    return errors


# Results per component tuple, by identity: an augmented harness shares the tuples its
# transforms did not touch. Skills depend on the tool names too, so their entry records the
# tool names they were checked against.
_SKILLS: IdentityCache[tuple[tuple[str, ...], list[FieldError]]] = IdentityCache(64)
_TOOLS: IdentityCache[list[FieldError]] = IdentityCache(64)
_PROMPTS: IdentityCache[list[FieldError]] = IdentityCache(64)
_HOOKS: IdentityCache[list[FieldError]] = IdentityCache(64)


def harness_problems(harness: Harness, known: KnownValid | None = None) -> list[FieldError]:
    """Every rule violation ``validate_harness`` would report (same paths), computed with
    cached component checks. ``known``: objects of an already verified harness
    (``known_valid``), which are valid without a look-up."""
    tool_names = tuple(tool.name for tool in harness.tools)
    skills_hit = _SKILLS.get(harness.skills)
    if skills_hit is not None and skills_hit[0] == tool_names:
        skill_errors = skills_hit[1]
    else:
        skill_errors = _skill_errors(harness.skills, set(tool_names))
        _SKILLS.put(harness.skills, (tool_names, skill_errors))
    tool_errors = _TOOLS.get(harness.tools)
    if tool_errors is None:
        tool_errors = _tool_errors(harness.tools, known)
        _TOOLS.put(harness.tools, tool_errors)
    prompt_errors = _PROMPTS.get(harness.prompt.sections)
    if prompt_errors is None:
        prompt_errors = _prompt_errors(harness.prompt.sections)
        _PROMPTS.put(harness.prompt.sections, prompt_errors)
    hook_errors = _HOOKS.get(harness.hooks)
    if hook_errors is None:
        hook_errors = _hooks_errors(harness.hooks)
        _HOOKS.put(harness.hooks, hook_errors)
    return [*skill_errors, *tool_errors, *prompt_errors, *hook_errors]


def known_valid(harness: Harness) -> KnownValid:
    """The objects of a harness ``harness_problems`` accepts, for checking its edits."""
    if harness_problems(harness):
        raise ValueError("known_valid needs a valid harness")
    nodes: dict[int, tuple[dict[str, Any], int]] = {}
    for tool in harness.tools:
        nodes.update(SCHEMAS.node_heights(tool.input_schema))
    return KnownValid(
        tools={id(tool): tool for tool in harness.tools},
        schemas={id(tool.input_schema): tool.input_schema for tool in harness.tools},
        nodes=nodes,
        parts={_parts(tool): tool for tool in harness.tools},
    )


def _parts(tool: Tool) -> tuple[int, int, int]:
    return (id(tool.description), id(tool.input_schema), id(tool.executor))


def schema_errors(schema: object, known: KnownValid | None = None) -> tuple[FieldError, ...]:
    """Cached ``input_schema_errors(schema, "")`` of one tool schema."""
    return SCHEMAS.errors(schema, known)


def arguments_valid(
    schema: dict[str, Any], arguments: object, known: KnownValid | None = None
) -> bool:
    """Cached: do ``arguments`` validate against a *valid* tool schema? ``known``: the
    verified original's objects, whose entries are worth keeping."""
    return SCHEMAS.arguments_valid(schema, arguments, known)


def argument_validator(schema: dict[str, Any]) -> Validator:
    """Cached argument validator of a *valid* tool schema."""
    return SCHEMAS.validator(schema)
