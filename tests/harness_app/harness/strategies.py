"""Hypothesis strategies for *valid* harnesses (every draw passes ``validate_harness``).

Small on purpose (a few items per component) so property tests stay fast, but the text is
hostile: any Unicode except surrogates, so YAML/JSON/SKILL.md round trips meet quotes,
colons, ``---``, tabs, carriage returns, NULs and non-Latin scripts.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from harness_app.harness.model import (
    CATALOG_OPERATIONS,
    FAIL_MODES,
    HOOK_ACTIONS,
    Harness,
    Hook,
    Prompt,
    PromptSection,
    Skill,
    Tool,
    ToolExecutor,
)
from harness_app.harness.prompt import PROMPT_VARIABLES

# Characters that YAML, JSON, SKILL.md frontmatter or zip text handling treat specially.
_TRICKY = [*"\n\r\t\x00\x85\u2028\u2029\ufeff :#'\"-{}[]|>&*!%@`,?~=\\", "---", "...", "\r\n"]
any_text = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=40),
    st.lists(
        st.one_of(st.sampled_from(_TRICKY), st.sampled_from(["a", "Z", "0", "é", "直播"])),
        max_size=12,
    ).map("".join),
)
non_blank_text = any_text.filter(lambda text: bool(text.strip()))
skill_names = st.from_regex(r"[a-z0-9-]{1,24}", fullmatch=True)
tool_names = st.from_regex(r"[A-Za-z0-9_.-]{1,24}", fullmatch=True)
section_ids = st.from_regex(r"[a-z0-9_-]{1,16}", fullmatch=True)
hook_names = st.from_regex(r"[a-z0-9-]{1,24}", fullmatch=True)

# Conditions known to compile for each event (the strategy is about round trips, not CEL).
VALID_CONDITIONS: dict[str, list[tuple[str, str]]] = {
    "on_comment": [
        ("cel", 'comment.contains("refund") && product_sku != ""'),
        ("regex", r"(?i)\b(fake|scam)\b"),
    ],
    "pre_tool_use": [
        ("cel", 'tool_name == "get_shipping" && !has(args.region)'),
        ("regex", r'"sku":"[^"]*\.\.'),
    ],
    "post_tool_use": [
        ("cel", 'error != "" || size(result) == 0'),
        ("regex", r"(?i)internal error"),
    ],
    "pre_reply": [
        ("cel", "quoted_prices.exists(p, !(p in catalog_prices))"),
        ("cel", 'size(reply) > 280 || reply.matches("(?i)guaranteed")'),
        ("regex", r"(?i)\b(best|cheapest|guaranteed)\b"),
    ],
}

_json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    any_text,
)


@st.composite
def parameter_schemas(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["string", "integer", "number", "boolean", "array"]))
    schema: dict[str, Any] = {"type": kind}
    if draw(st.booleans()):
        schema["description"] = draw(any_text)
    if kind == "string" and draw(st.booleans()):
        schema["enum"] = draw(st.lists(any_text, min_size=1, max_size=3, unique=True))
    if kind == "number" and draw(st.booleans()):
        schema["minimum"] = draw(st.floats(allow_nan=False, allow_infinity=False))
    if kind == "array":
        schema["items"] = {"type": draw(st.sampled_from(["string", "integer"]))}
    if draw(st.booleans()):
        schema["default"] = draw(_json_scalars)
    return schema


@st.composite
def input_schemas(draw: st.DrawFn) -> dict[str, Any]:
    properties = draw(st.dictionaries(any_text, parameter_schemas(), max_size=3))
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if properties:
        required = draw(st.lists(st.sampled_from(sorted(properties)), unique=True))
        if required:
            schema["required"] = required
    if draw(st.booleans()):
        schema["additionalProperties"] = False
    return schema


executors = st.one_of(
    st.builds(
        ToolExecutor,
        kind=st.just("catalog"),
        operation=st.sampled_from(CATALOG_OPERATIONS),
    ),
    st.builds(
        ToolExecutor,
        kind=st.just("webhook"),
        url=st.sampled_from(
            ["https://hooks.example.com/stock", "http://hooks.example.net:8080/x?y=1"]
        ),
        timeout_s=st.floats(min_value=0.001, max_value=30.0),
        secret_ref=st.from_regex(r"[A-Z][A-Z0-9_]{0,20}", fullmatch=True),
    ),
)

tools = st.builds(
    Tool,
    name=tool_names,
    description=non_blank_text,
    input_schema=input_schemas(),
    executor=executors,
    read_only=st.booleans(),
    destructive=st.booleans(),
)


def _template_piece() -> st.SearchStrategy[str]:
    literal = any_text.map(lambda text: text.replace("{", "{{").replace("}", "}}"))
    variable = st.sampled_from(sorted(PROMPT_VARIABLES)).map(lambda name: "{" + name + "}")
    return st.one_of(literal, variable)


templates = st.lists(_template_piece(), max_size=5).map("".join)
sections = st.builds(PromptSection, id=section_ids, title=non_blank_text, template=templates)


@st.composite
def hooks(draw: st.DrawFn) -> Hook:
    event = draw(st.sampled_from(sorted(VALID_CONDITIONS)))
    kind, condition = draw(st.sampled_from(VALID_CONDITIONS[event]))
    action = draw(st.sampled_from(HOOK_ACTIONS))
    matcher = "*"
    if event in ("pre_tool_use", "post_tool_use"):
        matcher = draw(
            st.one_of(st.just("*"), st.from_regex(r"[A-Za-z0-9_.*?-]{1,12}", fullmatch=True))
        )
    feedback = draw(non_blank_text if action == "retry_with_feedback" else any_text)
    fallback = draw(non_blank_text if action == "fallback_reply" else any_text)
    return Hook(
        name=draw(hook_names),
        event=event,  # type: ignore[arg-type]
        condition=condition,
        condition_kind=kind,  # type: ignore[arg-type]
        matcher=matcher,
        action=action,  # type: ignore[arg-type]
        feedback=feedback,
        fallback_reply=fallback,
        max_retries=draw(st.integers(0, 5)),
        timeout_ms=draw(st.integers(1, 1000)),
        fail_mode=draw(st.sampled_from(FAIL_MODES)),  # type: ignore[arg-type]
    )


@st.composite
def harnesses(draw: st.DrawFn) -> Harness:
    """A valid harness with up to 3 skills, tools, sections and hooks."""
    tool_list = draw(st.lists(tools, max_size=3, unique_by=lambda tool: tool.name))
    names = [tool.name for tool in tool_list]
    allowed = st.lists(st.sampled_from(names), unique=True).map(tuple) if names else st.just(())
    skill_list = draw(
        st.lists(
            st.builds(
                Skill,
                name=skill_names,
                description=st.one_of(
                    non_blank_text, any_text.map(lambda text: f"Use when {text}")
                ).filter(lambda text: len(text) <= 1024),
                body=any_text,
                allowed_tools=allowed,
            ),
            max_size=3,
            unique_by=lambda skill: skill.name,
        )
    )
    section_list = draw(st.lists(sections, max_size=3, unique_by=lambda section: section.id))
    hook_list = draw(st.lists(hooks(), max_size=3, unique_by=lambda hook: hook.name))
    return Harness(
        skills=tuple(skill_list),
        tools=tuple(tool_list),
        prompt=Prompt(sections=tuple(section_list)),
        hooks=tuple(hook_list),
    )
