from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest
from hypothesis import given, settings

from harness_app.harness.errors import FieldError, HarnessValidationError
from harness_app.harness.model import (
    Harness,
    Hook,
    Prompt,
    PromptSection,
    Skill,
    Tool,
    ToolExecutor,
)
from harness_app.harness.validation import (
    MAX_HOOKS,
    MAX_HOOKS_PER_EVENT,
    ensure_valid,
    harness_warnings,
    validate_harness,
)
from harness_app.harness.webhook_address import AddressPolicy, parse_networks
from tests.harness_app.harness.strategies import harnesses

CATALOG = ToolExecutor(kind="catalog", operation="get_product")
WEBHOOK = ToolExecutor(
    kind="webhook",
    url="https://hooks.example.com/x",
    timeout_s=5.0,
    secret_ref="SHOP_WEBHOOK_SECRET",
)


def tool(**changes: Any) -> Tool:
    return dataclasses.replace(
        Tool("get_product", "Look up a product.", executor=CATALOG), **changes
    )


def hook(**changes: Any) -> Hook:
    base = Hook(
        name="check", event="pre_reply", condition="size(reply) > 280", feedback="Shorter, please."
    )
    return dataclasses.replace(base, **changes)


def only_error(harness: Harness) -> FieldError:
    errors = validate_harness(harness)
    assert len(errors) == 1, errors
    return errors[0]


@settings(max_examples=50, deadline=None)
@given(harnesses())
def test_generated_harnesses_are_valid(harness: Harness) -> None:
    assert validate_harness(harness) == []


def test_demo_harness_is_valid_without_warnings(live_harness: Harness) -> None:
    assert validate_harness(live_harness) == []
    assert harness_warnings(live_harness) == []


# ---------------------------------------------------------------------------------- skills


def test_skill_name_must_be_lowercase_slug() -> None:
    error = only_error(Harness(skills=(Skill("Promo Push", "Use when a deal is asked for."),)))

    assert error == FieldError(
        "skills[0].name",
        "name 'Promo Push' must match ^[a-z0-9-]{1,64}$ (lowercase letters, digits, hyphens; "
        "1-64 characters)",
    )


def test_skill_name_longer_than_64_is_rejected() -> None:
    error = only_error(Harness(skills=(Skill("a" * 65, "Use when x."),)))

    assert error.path == "skills[0].name"


def test_skill_names_must_be_unique() -> None:
    skills = (Skill("qa", "Use when a."), Skill("promo", "Use when b."), Skill("qa", "Use when c."))

    error = only_error(Harness(skills=skills))

    assert error == FieldError(
        "skills[2].name",
        "duplicate skill name 'qa' (already used by skills[0]); skill names must be unique",
    )


def test_skill_description_must_not_be_empty() -> None:
    error = only_error(Harness(skills=(Skill("qa", "   "),)))

    assert error == FieldError("skills[0].description", "description must not be empty")


def test_skill_description_is_limited_to_1024_characters() -> None:
    error = only_error(Harness(skills=(Skill("qa", "Use when " + "x" * 1020),)))

    assert error.path == "skills[0].description"
    assert error.message == "description is 1029 characters; the limit is 1024"


def test_skill_allowed_tools_must_exist() -> None:
    harness = Harness(
        skills=(Skill("qa", "Use when x.", allowed_tools=("get_product", "nope")),), tools=(tool(),)
    )

    error = only_error(harness)

    assert error.path == "skills[0].allowed_tools[1]"
    assert error.message.startswith("unknown tool 'nope'")
    assert "(known: get_product)" in error.message


@pytest.mark.parametrize(
    "description",
    ["Use when a viewer asks.", "Handles deals. Use this for coupons.", "Use for sizes."],
)
def test_description_saying_when_to_use_has_no_warning(description: str) -> None:
    harness = Harness(skills=(Skill("qa", description, body="Do it."),))

    assert harness_warnings(harness) == []


def test_description_not_saying_when_to_use_is_a_warning_not_an_error() -> None:
    harness = Harness(skills=(Skill("qa", "Answers product questions.", body="Do it."),))

    assert validate_harness(harness) == []
    (warning,) = harness_warnings(harness)
    assert warning.path == "skills[0].description"
    assert "does not say when to use the skill" in warning.message


def test_other_warnings() -> None:
    harness = Harness(
        skills=(Skill("qa", "Use when asked."),),
        tools=(tool(read_only=True, destructive=True),),
        hooks=(hook(max_retries=0),),
    )

    assert [w.path for w in harness_warnings(harness)] == [
        "skills[0].body",
        "tools[0].destructive",
        "hooks[0].max_retries",
    ]


# ----------------------------------------------------------------------------------- tools


def test_tool_name_pattern() -> None:
    error = only_error(Harness(tools=(tool(name="get product!"),)))

    assert error.path == "tools[0].name"
    assert "must match ^[A-Za-z0-9_.-]{1,64}$" in error.message


def test_tool_names_must_be_unique() -> None:
    error = only_error(Harness(tools=(tool(), tool())))

    assert error.path == "tools[1].name"
    assert error.message.startswith("duplicate tool name 'get_product'")


def test_tool_description_required() -> None:
    error = only_error(Harness(tools=(tool(description=""),)))

    assert error == FieldError("tools[0].description", "description must not be empty")


def test_tool_schema_must_be_valid_draft_2020_12() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "dict"}}, "required": "x"}

    errors = validate_harness(Harness(tools=(tool(input_schema=schema),)))

    assert [e.path for e in errors] == [
        "tools[0].input_schema.properties.x.type",
        "tools[0].input_schema.required",
    ]
    assert "type 'dict' is not a JSON Schema type; use one of array, boolean" in errors[0].message
    assert "'x' is not of type 'array'" in errors[1].message


def test_tool_schema_pattern_must_be_a_regex() -> None:
    schema = {"type": "object", "properties": {"sku": {"type": "string", "pattern": "("}}}

    error = only_error(Harness(tools=(tool(input_schema=schema),)))

    assert error.path == "tools[0].input_schema.properties.sku.pattern"
    assert "is not a 'regex'" in error.message


def test_tool_schema_must_describe_an_object() -> None:
    error = only_error(Harness(tools=(tool(input_schema={"type": "array"}),)))

    assert error.path == "tools[0].input_schema.type"
    assert error.message.startswith('top-level type must be "object"')


def test_catalog_executor_needs_a_known_operation() -> None:
    error = only_error(Harness(tools=(tool(executor=ToolExecutor(operation="delete_all")),)))

    assert error == FieldError(
        "tools[0].executor.operation",
        "catalog operation 'delete_all' must be one of get_product, check_stock, list_coupons, "
        "get_shipping, search_products",
    )


def test_unknown_executor_kind() -> None:
    executor = ToolExecutor(kind="shell", operation="x")  # type: ignore[arg-type]

    error = only_error(Harness(tools=(tool(executor=executor),)))

    assert error == FieldError(
        "tools[0].executor.kind", "kind 'shell' must be one of catalog, webhook"
    )


def test_valid_webhook_executor() -> None:
    assert validate_harness(Harness(tools=(tool(executor=WEBHOOK),))) == []


@pytest.mark.parametrize(
    ("changes", "path", "fragment"),
    [
        ({"url": "ftp://x.example/a"}, "executor.url", "must be an absolute http:// or https://"),
        ({"url": "https://"}, "executor.url", "with a host"),
        ({"url": "hooks.example.com/x"}, "executor.url", "absolute"),
        ({"timeout_s": 0.0}, "executor.timeout_s", "greater than 0 and at most 30 seconds"),
        ({"timeout_s": 30.5}, "executor.timeout_s", "at most 30 seconds"),
        ({"secret_ref": ""}, "executor.secret_ref", "secret_ref is required for webhooks"),
        (
            {"secret_ref": "sk-live-1234"},
            "executor.secret_ref",
            "must match ^[A-Z][A-Z0-9_]{0,63}$ (a webhook secret's name",
        ),
    ],
)
def test_webhook_executor_rules(changes: dict[str, Any], path: str, fragment: str) -> None:
    executor = dataclasses.replace(WEBHOOK, **changes)

    error = only_error(Harness(tools=(tool(executor=executor),)))

    assert error.path == f"tools[0].{path}"
    assert fragment in error.message


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://127.0.0.1:5432/", "127.0.0.1, loopback"),
        ("http://localhost/x", "127.0.0.1, loopback"),
        ("http://api.localhost/x", "127.0.0.1, loopback"),
        ("http://10.0.0.5:8080/x", "10.0.0.5, private"),
        ("http://192.168.1.20/x", "192.168.1.20, private"),
        ("http://100.64.3.4/x", "100.64.3.4, shared (CGNAT)"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254, link-local"),
        ("http://metadata.google.internal/computeMetadata/v1/", "169.254.169.254, link-local"),
        ("http://[::1]:8000/x", "::1, loopback"),
        ("http://[fd00::7]/x", "fd00::7, private"),
        ("http://[fe80::1]/x", "fe80::1, link-local"),
        ("http://[::ffff:127.0.0.1]/x", "which is 127.0.0.1, loopback"),
        ("http://0.0.0.0:80/x", "0.0.0.0, unspecified"),
        ("http://[::]/x", ":: , unspecified".replace(" ,", ",")),
        ("http://224.0.0.1/x", "224.0.0.1, multicast"),
        ("http://2130706433/x", "127.0.0.1, loopback"),
        ("http://0x7f.1/x", "127.0.0.1, loopback"),
    ],
)
def test_webhook_urls_on_internal_addresses_are_refused(url: str, shown: str) -> None:
    # given the default policy: public addresses only
    error = only_error(Harness(tools=(tool(executor=dataclasses.replace(WEBHOOK, url=url)),)))
    # then the URL field is named, with the address and why
    assert error.path == "tools[0].executor.url"
    assert shown in error.message and "internal address" in error.message


def test_an_allow_listed_network_may_be_saved() -> None:
    local = dataclasses.replace(WEBHOOK, url="http://127.0.0.1:8080/hook")
    policy = AddressPolicy(parse_networks(["127.0.0.1/32", "10.20.0.0/16"]))
    assert validate_harness(Harness(tools=(tool(executor=local),)), address_policy=policy) == []
    prod = dataclasses.replace(WEBHOOK, url="https://10.20.3.4/hook")
    assert validate_harness(Harness(tools=(tool(executor=prod),)), address_policy=policy) == []
    other = dataclasses.replace(WEBHOOK, url="https://10.21.0.1/hook")
    errors = validate_harness(Harness(tools=(tool(executor=other),)), address_policy=policy)
    assert [e.path for e in errors] == ["tools[0].executor.url"]


def test_webhook_timeout_of_exactly_30_seconds_is_allowed() -> None:
    executor = dataclasses.replace(WEBHOOK, timeout_s=30.0)

    assert validate_harness(Harness(tools=(tool(executor=executor),))) == []


# ---------------------------------------------------------------------------------- prompt


def sections(*items: PromptSection) -> Harness:
    return Harness(prompt=Prompt(sections=items))


def test_section_ids_unique_and_well_formed() -> None:
    errors = validate_harness(
        sections(
            PromptSection("persona", "Persona", "Hi"),
            PromptSection("persona", "Again", "Hi"),
            PromptSection("Rules!", "Rules", "Hi"),
        )
    )

    assert [e.path for e in errors] == ["prompt.sections[1].id", "prompt.sections[2].id"]
    assert errors[0].message.startswith("duplicate section id 'persona'")
    assert "must match ^[a-z0-9_-]{1,64}$" in errors[1].message


def test_section_title_required() -> None:
    error = only_error(sections(PromptSection("rules", " ", "x")))

    assert error == FieldError("prompt.sections[0].title", "title must not be empty")


@pytest.mark.parametrize(
    ("template", "fragment"),
    [
        ("Hello {viewer_name}", "unknown variable {viewer_name}; known variables: currency"),
        ("Price {}", "positional slot {} is not allowed"),
        ("Price {0}", "positional slot {0} is not allowed"),
        ("{room_name.upper}", "{room_name.upper} uses attribute or index access"),
        ("{skills[0]}", "{skills[0]} uses attribute or index access"),
        ("{currency!r}", "uses a conversion (!r)"),
        ("{product_price:>10}", "uses a format spec (:>10)"),
        ("Open { brace", "unbalanced braces or malformed slot"),
        ("Close } brace", "unbalanced braces or malformed slot"),
    ],
)
def test_template_errors_point_at_the_template(template: str, fragment: str) -> None:
    error = only_error(sections(PromptSection("rules", "Rules", template)))

    assert error.path == "prompt.sections[0].template"
    assert fragment in error.message


def test_escaped_braces_are_allowed() -> None:
    assert (
        validate_harness(sections(PromptSection("rules", "Rules", 'Use {{"json"}} {today}'))) == []
    )


# ----------------------------------------------------------------------------------- hooks


def test_valid_hook() -> None:
    assert validate_harness(Harness(hooks=(hook(),))) == []


def test_hook_names_unique_and_well_formed() -> None:
    errors = validate_harness(Harness(hooks=(hook(), hook(), hook(name="No Claims"))))

    assert [e.path for e in errors] == ["hooks[1].name", "hooks[2].name"]
    assert errors[0].message.startswith("duplicate hook name 'check'")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (
            "event",
            "on_tip",
            "event 'on_tip' must be one of on_comment, pre_tool_use, post_tool_use, pre_reply",
        ),
        (
            "action",
            "explode",
            "action 'explode' must be one of allow, block, retry_with_feedback, fallback_reply",
        ),
        ("condition_kind", "python", "condition_kind 'python' must be one of cel, regex"),
        ("fail_mode", "maybe", "fail_mode 'maybe' must be one of open, closed"),
        ("max_retries", 6, "max_retries 6 must be an integer from 0 to 5"),
        ("max_retries", -1, "max_retries -1 must be an integer from 0 to 5"),
        ("timeout_ms", 0, "timeout_ms 0 must be an integer from 1 to 1000"),
        ("timeout_ms", 1001, "timeout_ms 1001 must be an integer from 1 to 1000"),
    ],
)
def test_hook_field_rules(field: str, value: object, message: str) -> None:
    error = only_error(Harness(hooks=(hook(**{field: value}),)))

    assert error == FieldError(f"hooks[0].{field}", message)


def test_hook_condition_must_compile_for_its_event() -> None:
    error = only_error(Harness(hooks=(hook(condition="tool_name == 'x'"),)))

    assert error.path == "hooks[0].condition"
    assert error.message.startswith("unknown variable 'tool_name' for pre_reply")


def test_regex_hook_condition_must_be_re2() -> None:
    error = only_error(Harness(hooks=(hook(condition_kind="regex", condition=r"(\w)\1"),)))

    assert error.path == "hooks[0].condition"
    assert "regex rejected by RE2" in error.message


def test_retry_with_feedback_requires_feedback() -> None:
    error = only_error(Harness(hooks=(hook(feedback=""),)))

    assert error.path == "hooks[0].feedback"
    assert error.message.startswith("feedback is required when action is retry_with_feedback")


def test_fallback_reply_action_requires_a_fallback_reply() -> None:
    error = only_error(Harness(hooks=(hook(action="fallback_reply"),)))

    assert error.path == "hooks[0].fallback_reply"
    assert error.message.startswith("fallback_reply is required when action is fallback_reply")


def test_matcher_must_be_a_tool_name_glob() -> None:
    error = only_error(
        Harness(hooks=(hook(event="pre_tool_use", condition="true", matcher="get_[a-z]+"),))
    )

    assert error.path == "hooks[0].matcher"
    assert "matcher 'get_[a-z]+' must match ^[A-Za-z0-9_.*?-]{1,64}$" in error.message


def test_matcher_glob_is_accepted_for_tool_events() -> None:
    harness = Harness(
        hooks=(hook(event="post_tool_use", condition='error != ""', matcher="get_*"),)
    )

    assert validate_harness(harness) == []


def test_matcher_other_than_star_only_applies_to_tool_events() -> None:
    error = only_error(Harness(hooks=(hook(matcher="get_*"),)))

    assert error == FieldError(
        "hooks[0].matcher",
        "matcher 'get_*' only applies to pre_tool_use and post_tool_use hooks; use '*' for "
        "pre_reply",
    )


# -------------------------------------------------------------------------------- ensure_valid


def test_ensure_valid_raises_with_every_error() -> None:
    harness = Harness(skills=(Skill("Bad Name", ""),))

    with pytest.raises(HarnessValidationError) as caught:
        ensure_valid(harness)

    assert [e.path for e in caught.value.errors] == ["skills[0].name", "skills[0].description"]
    assert str(caught.value).startswith("2 problems:\n- skills[0].name: name 'Bad Name'")


def test_ensure_valid_passes_a_valid_harness(live_harness: Harness) -> None:
    ensure_valid(live_harness)  # no exception is the behaviour under test
    assert validate_harness(live_harness) == []


def test_deeply_nested_schema_is_rejected_before_meta_validation() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(3000):
        schema = {"type": "object", "properties": {"x": schema}}

    error = only_error(Harness(tools=(tool(input_schema=schema),)))

    assert error.path.startswith("tools[0].input_schema.properties.x.properties.x")
    assert error.message == "is nested more than 64 levels deep"


def test_non_json_schema_values_from_python_are_rejected() -> None:
    schema = {"type": "object", "properties": {"x": {"enum": (1, {2})}}}

    error = only_error(Harness(tools=(tool(input_schema=schema),)))

    assert error.path == "tools[0].input_schema.properties.x.enum[1]"
    assert error.message.startswith("must be JSON data")


# ------------------------------------------------------------- hook cost and counts (issue 9)

_LIST_140 = "[" + ",".join(str(i) for i in range(140)) + "]"


def test_saving_the_issues_eight_expensive_hooks_is_refused_in_well_under_a_second() -> None:
    # Eight hooks of two nested 140-item literals took 32.5 s to save.
    source = f"{_LIST_140}.all(x, {_LIST_140}.all(y, x + y >= 0))"
    hooks = tuple(hook(name=f"h{i}", condition=source) for i in range(8))
    started = time.perf_counter()
    errors = validate_harness(Harness(hooks=hooks))
    elapsed = time.perf_counter() - started
    assert elapsed < 0.5
    assert [e.path for e in errors] == [f"hooks[{i}].condition" for i in range(8)]
    assert all("a list literal has 140 items" in e.message for e in errors)


def test_saving_eight_hooks_at_the_cost_limit_is_fast() -> None:
    # Allowed conditions are checked against samples under the step budget: still cheap.
    source = "quoted_prices.all(x, catalog_prices.exists(y, x == y)) && size(reply) > 0"
    hooks = tuple(hook(name=f"h{i}", condition=source) for i in range(8))
    started = time.perf_counter()
    assert validate_harness(Harness(hooks=hooks)) == []
    assert time.perf_counter() - started < 0.5


def test_hooks_per_harness_and_per_event_are_capped() -> None:
    events = ("on_comment", "pre_tool_use", "post_tool_use", "pre_reply")
    too_many = tuple(
        hook(name=f"h{i}", event=events[i % 4], condition="true", action="block", feedback="")
        for i in range(MAX_HOOKS + 1)
    )
    errors = validate_harness(Harness(hooks=too_many))
    assert (
        FieldError(
            "hooks", f"a harness has at most {MAX_HOOKS} hooks; this one has {MAX_HOOKS + 1}"
        )
        in errors
    )
    per_event = tuple(
        hook(name=f"h{i}", condition="true", action="block", feedback="")
        for i in range(MAX_HOOKS_PER_EVENT + 1)
    )
    assert only_error(Harness(hooks=per_event)) == FieldError(
        f"hooks[{MAX_HOOKS_PER_EVENT}].event",
        f"more than {MAX_HOOKS_PER_EVENT} hooks for event 'pre_reply'; the limit is "
        f"{MAX_HOOKS_PER_EVENT} per event",
    )
