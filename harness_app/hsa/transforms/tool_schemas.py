"""Tool schemas: rename tools and parameters, reorder parameters, reword descriptions, add
optional parameters with defaults, add distractor tools, and restyle a schema's surface
without changing which arguments it accepts."""

from __future__ import annotations

import random
import re
from functools import lru_cache, partial
from typing import Any, Final
from urllib.parse import quote

from harness_app.harness.model import Harness, Tool, ToolExecutor
from harness_app.hsa.banks import (
    DISTRACTOR_TOOLS,
    IMPERATIVE_VERBS,
    LABEL_FRAMES,
    OPTIONAL_PARAMETERS,
    PARAMETER_FRAMES,
    VERB_FRAMES,
    Split,
)
from harness_app.hsa.identity_cache import DATASET_CACHE_SIZE, DerivedCache
from harness_app.hsa.mapping import RenameMapping
from harness_app.hsa.naming import (
    RenameMode,
    candidate_name,
    choose_renames,
    guess_style,
    name_is_valid,
    naming_context,
    render_style,
    tokens,
)
from harness_app.hsa.renaming import (
    RENAME_SAFE_SCHEMA_KEYS,
    param_rename_guard,
    rename_params,
    rename_tools,
    tool_rename_guard,
)
from harness_app.hsa.trajectory import GoldTrajectory
from harness_app.hsa.transforms.base import (
    ApplyFn,
    Transform,
    TransformResult,
    pick_items,
    unchanged,
)

DISTRACTOR_WEBHOOK_BASE: Final = "https://example.invalid/hsa/"
KEY_ORDER_VARIANTS: Final = 8
# The same edit of the same tool gives the same object, so downstream checks hit their caches.
EDITS = DerivedCache(8192)
DISTRACTOR_SECRET_REF: Final = "HSA_DISTRACTOR_SECRET"
# Keywords under which a schema holds subschemas (maps of schemas, lists of schemas, one).
_SCHEMA_MAPS: Final = (
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
)
_SCHEMA_LISTS: Final = ("prefixItems", "allOf", "anyOf", "oneOf")
_SCHEMA_SINGLE: Final = (
    "items",
    "additionalProperties",
    "not",
    "contains",
    "if",
    "then",
    "else",
    "propertyNames",
    "additionalItems",
)
# A schema using these is left alone by surface restyling: annotations from subschemas
# (unevaluated*) or JSON pointers into the schema ($ref) would see the change.
_RESTYLE_BLOCKERS: Final = frozenset(
    {"unevaluatedProperties", "unevaluatedItems", "$ref", "$dynamicRef", "$anchor", "$id"}
)


def _with_schema(tool: Tool, schema: dict[str, Any]) -> Tool:
    return Tool(
        tool.name, tool.description, schema, tool.executor, tool.read_only, tool.destructive
    )


def _replace_tools(harness: Harness, tools: list[Tool]) -> Harness:
    if all(new is old for new, old in zip(tools, harness.tools, strict=True)):
        return harness
    return Harness(harness.skills, tuple(tools), harness.prompt, harness.hooks)


def _properties(tool: Tool) -> dict[str, Any] | None:
    properties = tool.input_schema.get("properties")
    return properties if isinstance(properties, dict) else None


# ---------------------------------------------------------------------------------- renames


def rename_tool_names(
    harness: Harness, mode: RenameMode, split: Split, rng: random.Random
) -> tuple[Harness, dict[str, str]]:
    guard = tool_rename_guard(harness)
    context = naming_context()
    names = [tool.name for tool in harness.tools]
    renames = choose_renames(
        [name for name in names if name not in guard.pinned and name not in context.pinned],
        "tool",
        lambda old: candidate_name(old, "tool", mode, split, rng),
        taken=[*names, *context.reserved_tools],
        accept=guard.accept,
    )
    return rename_tools(harness, renames), renames


def rename_param_names(
    harness: Harness, mode: RenameMode, split: Split, rng: random.Random
) -> tuple[Harness, dict[str, dict[str, str]]]:
    """Rename the parameters of some tools (``pick_items``), keyed by tool name."""
    renames: dict[str, dict[str, str]] = {}
    context = naming_context()
    chosen = pick_items(len(harness.tools), rng)
    for index, tool in enumerate(harness.tools):
        if index not in chosen:
            continue
        guard = param_rename_guard(harness, tool)
        renameable = [name for name in guard.renameable if name not in context.pinned]
        if not renameable:
            continue
        tool_renames = choose_renames(
            renameable,
            "param",
            lambda old: candidate_name(old, "param", mode, split, rng),
            taken=[*(_properties(tool) or ()), *context.params_reserved_for(tool.name)],
            accept=lambda _old, new, guard=guard: guard.accept(new),  # type: ignore[misc]
        )
        if tool_renames:
            renames[tool.name] = tool_renames
    return rename_params(harness, renames), renames


def _tool_renamer(modes: tuple[RenameMode, ...], split: Split) -> ApplyFn:
    def apply(harness: Harness, _trajectory: GoldTrajectory, rng: random.Random) -> TransformResult:
        new, renames = rename_tool_names(harness, rng.choice(modes), split, rng)
        return TransformResult(new, RenameMapping(tool_renames=renames))

    return apply


def _param_renamer(modes: tuple[RenameMode, ...], split: Split) -> ApplyFn:
    def apply(harness: Harness, _trajectory: GoldTrajectory, rng: random.Random) -> TransformResult:
        new, renames = rename_param_names(harness, rng.choice(modes), split, rng)
        return TransformResult(new, RenameMapping(param_renames=renames))

    return apply


def _tool_and_param_renamer(mode: RenameMode, split: Split) -> ApplyFn:
    """Tools then parameters; the parameter renames are re-keyed to the original tool names
    by composing the two mappings."""

    def apply(harness: Harness, _trajectory: GoldTrajectory, rng: random.Random) -> TransformResult:
        renamed, tool_renames = rename_tool_names(harness, mode, split, rng)
        final, param_renames = rename_param_names(renamed, mode, split, rng)
        mapping = RenameMapping(tool_renames=tool_renames).compose(
            RenameMapping(param_renames=param_renames)
        )
        return TransformResult(final, mapping)

    return apply


# ------------------------------------------------------------------------------ structure


def _reordered(tool: Tool, order: tuple[str, ...], required_order: tuple[str, ...] | None) -> Tool:
    schema: dict[str, Any] = {}
    for key, value in tool.input_schema.items():
        if key == "properties":
            schema[key] = {name: value[name] for name in order}
        elif key == "required" and required_order is not None:
            schema[key] = list(required_order)
        else:
            schema[key] = value
    return _with_schema(tool, schema)


def _reorder_params(
    harness: Harness, _trajectory: GoldTrajectory, rng: random.Random
) -> TransformResult:
    tools = []
    chosen = pick_items(len(harness.tools), rng)
    for index, tool in enumerate(harness.tools):
        properties = _properties(tool)
        if properties is None or len(properties) < 2 or index not in chosen:
            tools.append(tool)
            continue
        names = tuple(properties)
        order = tuple(rng.sample(names, len(names)))
        required = tool.input_schema.get("required")
        required_order = (
            tuple(rng.sample(required, len(required))) if isinstance(required, list) else None
        )
        if order == names and (required_order is None or list(required_order) == required):
            tools.append(tool)
            continue
        key = ("reorder", order, required_order)
        tools.append(EDITS.derive(tool, key, partial(_reordered, tool, order, required_order)))
    return TransformResult(_replace_tools(harness, tools))


Frame = tuple[str, str]  # (template, placeholder name)


def _description_frame(text: str, split: Split, rng: random.Random) -> Frame:
    """A verb frame for descriptions that start with an imperative verb ("Look up ..." ->
    "Use this to look up ..."), a label frame ("Purpose: ...") otherwise."""
    stripped = text.strip()
    first = stripped.split(maxsplit=1)[0] if stripped else ""
    if (
        first.lower() in IMPERATIVE_VERBS
        and first[:1].isupper()
        and (len(first) == 1 or first[1:].islower())
    ):
        return rng.choice(VERB_FRAMES[split]), "verb_phrase"
    return rng.choice(LABEL_FRAMES[split]), "text"


def _framed(text: str, frame: Frame) -> str:
    template, placeholder = frame
    stripped = text.strip()
    if placeholder == "verb_phrase":
        first = stripped.split(maxsplit=1)[0]
        return template.format(verb_phrase=first.lower() + stripped[len(first) :])
    return template.format(text=stripped)


def _reworded(tool: Tool, tool_frame: Frame | None, param_frames: tuple[Frame | None, ...]) -> Tool:
    description = _framed(tool.description, tool_frame) if tool_frame else tool.description
    schema = tool.input_schema
    properties = _properties(tool)
    if properties and any(param_frames):
        schema = {
            **schema,
            "properties": {
                name: {**sub, "description": _framed(sub["description"], frame)} if frame else sub
                for (name, sub), frame in zip(properties.items(), param_frames, strict=True)
            },
        }
    return Tool(tool.name, description, schema, tool.executor, tool.read_only, tool.destructive)


def _reword(split: Split) -> ApplyFn:
    def apply(harness: Harness, _trajectory: GoldTrajectory, rng: random.Random) -> TransformResult:
        tools = []
        chosen = pick_items(len(harness.tools), rng)
        for index, tool in enumerate(harness.tools):
            if index not in chosen:
                tools.append(tool)
                continue
            tool_frame = (
                _description_frame(tool.description, split, rng)
                if tool.description.strip()
                else None
            )
            param_frames: list[Frame | None] = []
            for sub in (_properties(tool) or {}).values():
                framable = (
                    isinstance(sub, dict)
                    and isinstance(sub.get("description"), str)
                    and bool(sub["description"].strip())
                )
                reword = framable and rng.random() < 0.5
                param_frames.append(
                    (rng.choice(PARAMETER_FRAMES[split]), "text") if reword else None
                )
            if tool_frame is None and not any(param_frames):
                tools.append(tool)
                continue
            frames = tuple(param_frames)
            key = ("reword", tool_frame, frames)
            tools.append(EDITS.derive(tool, key, partial(_reworded, tool, tool_frame, frames)))
        return TransformResult(_replace_tools(harness, tools))

    return apply


def _with_optional(tool: Tool, name: str, extra: dict[str, object], position: int) -> Tool:
    items = list(tool.input_schema["properties"].items())
    # The bank's schema is shared, not copied: schemas are immutable by convention, and a
    # shared node is verified once.
    items.insert(position, (name, extra))
    return _with_schema(tool, {**tool.input_schema, "properties": dict(items)})


def _optional_params(split: Split) -> ApplyFn:
    def apply(harness: Harness, _trajectory: GoldTrajectory, rng: random.Random) -> TransformResult:
        tools = []
        chosen = pick_items(len(harness.tools), rng)
        for index, tool in enumerate(harness.tools):
            properties = _properties(tool)
            if (
                properties is None
                or not set(tool.input_schema) <= RENAME_SAFE_SCHEMA_KEYS
                or index not in chosen
            ):
                tools.append(tool)
                continue
            guard = param_rename_guard(harness, tool)
            # Never a name a rename freed: it would map back to the original parameter.
            reserved = naming_context().params_reserved_for(tool.name)
            options = [
                (name, schema)
                for name, schema in OPTIONAL_PARAMETERS[split]
                if name not in properties
                and name not in reserved
                and guard.accept(name)
                and name_is_valid(name, "param")
            ]
            if not options:
                tools.append(tool)
                continue
            name, extra = rng.choice(options)
            position = rng.randint(0, len(properties))
            key = ("optional", name, position)
            tools.append(
                EDITS.derive(tool, key, partial(_with_optional, tool, name, extra, position))
            )
        return TransformResult(_replace_tools(harness, tools))

    return apply


_WORD = re.compile(r"[a-z]+")
# Words that say what a tool does in general, not which domain it serves.
GENERIC_TOOL_WORDS: Final = frozenset(
    {
        "get",
        "list",
        "set",
        "create",
        "update",
        "delete",
        "check",
        "fetch",
        "find",
        "show",
        "add",
        "remove",
        "return",
        "search",
        "info",
        "data",
        "the",
        "a",
        "an",
        "of",
        "for",
        "to",
        "and",
        "or",
        "in",
        "on",
        "by",
        "with",
        "from",
        "its",
        "is",
        "are",
        "that",
        "this",
        "it",
        "number",
        "date",
        "name",
    }
)


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


@lru_cache(maxsize=2 * DATASET_CACHE_SIZE)
def topic_words(text: str) -> frozenset[str]:
    """Domain words of a name or text: lowercase word tokens, plurals folded, generic tool
    verbs and function words left out."""
    words = set(_WORD.findall(" ".join(tokens(text)) + " " + text.lower()))
    return frozenset(_stem(w) for w in words if w not in GENERIC_TOOL_WORDS and len(w) > 1)


def distractor_may_answer(
    name: str, description: str, harness: Harness, trajectory: GoldTrajectory
) -> bool:
    """A distractor could answer the task when a domain word of its name or description is
    one of the task's (the viewer's message, the names of the harness's tools):
    a ``get_weather`` distractor beside a weather question could be called instead of the
    gold tool. Such distractors are never added."""
    return _answers_task(name, description, _task_words(harness, trajectory))


def _task_words(harness: Harness, trajectory: GoldTrajectory) -> frozenset[str]:
    task = topic_words(trajectory.comment)
    for tool in harness.tools:
        task |= topic_words(tool.name)
    return task | _reserved_topic_words(naming_context().reserved_tools)


@lru_cache(maxsize=DATASET_CACHE_SIZE)
def _reserved_topic_words(names: frozenset[str]) -> frozenset[str]:
    return frozenset().union(*(topic_words(n) for n in names))


def _answers_task(name: str, description: str, task: frozenset[str]) -> bool:
    return not (topic_words(name) | topic_words(description)).isdisjoint(task)


def _distractor_tools(split: Split) -> ApplyFn:
    def apply(harness: Harness, trajectory: GoldTrajectory, rng: random.Random) -> TransformResult:
        taken = {tool.name for tool in harness.tools} | naming_context().reserved_tools
        # Distractors follow the naming style of the harness, so style never gives them away.
        style = guess_style(rng.choice(harness.tools).name) if harness.tools else "snake"
        task = _task_words(harness, trajectory)  # (once, not once per candidate)
        options = []
        for name, description, schema in DISTRACTOR_TOOLS[split]:
            styled = render_style(tokens(name), style)
            if (
                name_is_valid(styled, "tool")
                and styled not in taken
                and not _answers_task(name, description, task)
            ):
                options.append((styled, description, schema))
        if not options:
            return unchanged(harness)
        tools = list(harness.tools)
        for name, description, schema in rng.sample(options, min(len(options), rng.randint(1, 2))):
            tool = Tool(
                name,
                description,
                # The bank's schema is shared, not copied (schemas are immutable by
                # convention), so its checks are cached once for every distractor use.
                schema,
                ToolExecutor(
                    kind="webhook",
                    url=DISTRACTOR_WEBHOOK_BASE + quote(name, safe=""),
                    secret_ref=DISTRACTOR_SECRET_REF,
                ),
                read_only=False,
                destructive=False,
            )
            tools.insert(rng.randint(0, len(tools)), tool)
        return TransformResult(Harness(harness.skills, tuple(tools), harness.prompt, harness.hooks))

    return apply


# ------------------------------------------------------------------------- surface style


def _has_blocker(schema: Any) -> bool:
    if isinstance(schema, dict):
        return any(key in _RESTYLE_BLOCKERS or _has_blocker(value) for key, value in schema.items())
    if isinstance(schema, list):
        return any(_has_blocker(item) for item in schema)
    return False


def _is_object(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return (
        kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in schema
    )


def _title(name: str) -> str:
    words = tokens(name)
    return (" ".join(words).capitalize() if words else name.strip()) or "Value"


RESTYLE_OPERATIONS: Final = ("type_list", "explicit_additional", "const", "titles", "key_order")


def restyle_schema(
    schema: Any, rng: random.Random, operations: frozenset[str], *, top: bool = False
) -> Any:
    """The same schema written differently, applying ``operations`` to every node they fit:
    ``type_list`` writes ``"type": "string"`` as ``["string"]``; ``explicit_additional``
    adds ``additionalProperties: true`` (the default) to objects; ``const`` writes a one-value
    ``enum`` as ``const``; ``titles`` adds a title to each property; ``key_order`` shuffles
    keyword order. None changes what is accepted. Nodes no operation fits are returned as
    they are (the same object)."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    changed = False
    for key, value in schema.items():
        new = value
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            mapped = {name: restyle_schema(sub, rng, operations) for name, sub in value.items()}
            if any(mapped[name] is not value[name] for name in value):
                new = mapped
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            items = [restyle_schema(sub, rng, operations) for sub in value]
            if any(a is not b for a, b in zip(items, value, strict=True)):
                new = items
        elif key in _SCHEMA_SINGLE and isinstance(value, dict):
            new = restyle_schema(value, rng, operations)
        changed = changed or new is not value
        out[key] = new
    if "type_list" in operations and not top and isinstance(out.get("type"), str):
        out["type"] = [out["type"]]
        changed = True
    if (
        "explicit_additional" in operations
        and _is_object(out)
        and "additionalProperties" not in out
    ):
        out["additionalProperties"] = True
        changed = True
    enum = out.get("enum")
    if "const" in operations and isinstance(enum, list) and len(enum) == 1 and "const" not in out:
        out.pop("enum")
        out["const"] = enum[0]
        changed = True
    properties = out.get("properties")
    if "titles" in operations and isinstance(properties, dict):
        titled = {
            name: {**sub, "title": _title(name)}
            if isinstance(sub, dict) and "title" not in sub
            else sub
            for name, sub in properties.items()
        }
        if any(titled[name] is not properties[name] for name in properties):
            out["properties"] = titled
            changed = True
    if "key_order" in operations and len(out) > 1:
        keys = list(out)
        order = rng.sample(keys, len(keys))
        if order != keys:
            out = {key: out[key] for key in order}
            changed = True
    return out if changed else schema


def _restyled(tool: Tool, operations: frozenset[str], variant: int) -> Tool:
    schema = restyle_schema(tool.input_schema, random.Random(variant), operations, top=True)
    return tool if schema is tool.input_schema else _with_schema(tool, schema)


def _surface_style(
    harness: Harness, _trajectory: GoldTrajectory, rng: random.Random
) -> TransformResult:
    tools = []
    chosen = pick_items(len(harness.tools), rng)
    for index, tool in enumerate(harness.tools):
        if index not in chosen or _has_blocker(tool.input_schema):
            tools.append(tool)
            continue
        operations = frozenset(rng.sample(RESTYLE_OPERATIONS, rng.randint(1, 2)))
        # Key order comes from one of a few fixed shuffles, so the edit is a pure function of
        # (tool, operations, variant) and can be memoised.
        variant = rng.randrange(KEY_ORDER_VARIANTS) if "key_order" in operations else 0
        key = ("restyle", operations, variant)
        tools.append(EDITS.derive(tool, key, partial(_restyled, tool, operations, variant)))
    return TransformResult(_replace_tools(harness, tools))


TRANSFORMS: tuple[Transform, ...] = (
    Transform(
        "tool_schemas.rename_tools",
        "tool_schemas",
        "train",
        "Rename tools: synonyms, another naming style, random ids or Spanish "
        "(get_product -> fetch_item / getProduct / fn_k2m9 / obtener_producto).",
        _tool_renamer(("synonym", "style", "random", "translate"), "train"),
    ),
    Transform(
        "tool_schemas.rename_params",
        "tool_schemas",
        "train",
        "Rename the parameters of some tools (sku -> itemCode); `required` follows.",
        _param_renamer(("synonym", "style", "translate"), "train"),
    ),
    Transform(
        "tool_schemas.reorder_params",
        "tool_schemas",
        "train",
        "Shuffle the order of properties and of the required list.",
        _reorder_params,
    ),
    Transform(
        "tool_schemas.reword_descriptions",
        "tool_schemas",
        "train",
        "Reframe tool and parameter descriptions from a template bank, keeping their text.",
        _reword("train"),
    ),
    Transform(
        "tool_schemas.optional_params",
        "tool_schemas",
        "train",
        "Add an optional parameter with a default to some tools.",
        _optional_params("train"),
    ),
    Transform(
        "tool_schemas.distractor_tools",
        "tool_schemas",
        "train",
        "Add one or two unrelated tools the gold answer never calls.",
        _distractor_tools("train"),
    ),
    Transform(
        "tool_schemas.surface_style",
        "tool_schemas",
        "train",
        "Rewrite schemas in another surface style that accepts exactly the same arguments.",
        _surface_style,
    ),
    Transform(
        "tool_schemas.pinyin_names",
        "tool_schemas",
        "heldout",
        "Rename tools and parameters into Pinyin (get_product -> huoqu_shangpin).",
        _tool_and_param_renamer("translate", "heldout"),
    ),
    Transform(
        "tool_schemas.unseen_synonym_names",
        "tool_schemas",
        "heldout",
        "Rename tools and parameters with held-out synonyms (get_product -> load_listing).",
        _tool_and_param_renamer("synonym", "heldout"),
    ),
    Transform(
        "tool_schemas.unseen_descriptions",
        "tool_schemas",
        "heldout",
        "Reframe descriptions from the held-out template bank.",
        _reword("heldout"),
    ),
    Transform(
        "tool_schemas.unseen_optional_params",
        "tool_schemas",
        "heldout",
        "Add optional parameters from the held-out bank.",
        _optional_params("heldout"),
    ),
    Transform(
        "tool_schemas.unseen_distractor_tools",
        "tool_schemas",
        "heldout",
        "Add unrelated tools from the held-out bank.",
        _distractor_tools("heldout"),
    ),
)
