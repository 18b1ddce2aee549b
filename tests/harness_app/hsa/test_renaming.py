"""References to renamed names: free text, templates, schemas and hook conditions."""

from __future__ import annotations

import random

from harness_app.harness.model import Harness, Hook, Prompt, PromptSection, Tool
from harness_app.harness.prompt import template_variables
from harness_app.hsa.cel_refs import cel_references
from harness_app.hsa.naming import candidate_name, looks_like_identifier, render_style, tokens
from harness_app.hsa.renaming import (
    param_rename_guard,
    rename_tools,
    rewrite_text,
    tool_rename_guard,
)


def test_only_whole_identifiers_are_rewritten() -> None:
    renames = {"get_product": "fetchItem", "after-sales": "post-venta", "uber.ride": "uber.trip"}
    text = (
        "Call get_product, then get_product_v2 and my_get_product; see after-sales. "
        "Also `get_product`() and uber.ride.fast vs uber.ride."
    )
    assert rewrite_text(text, renames) == (
        "Call fetchItem, then get_product_v2 and my_get_product; see post-venta. "
        "Also `fetchItem`() and uber.ride.fast vs uber.trip."
    )


def test_plain_words_are_never_rewritten() -> None:
    assert not looks_like_identifier("search")
    assert rewrite_text("search the catalog", {"search": "sousuo_tool"}) == "search the catalog"


def test_swaps_happen_in_one_pass() -> None:
    assert rewrite_text("a_b then c_d", {"a_b": "c_d", "c_d": "a_b"}) == "c_d then a_b"


def test_template_slots_are_never_touched() -> None:
    tool = Tool("tools_x", "A tool.")
    section = PromptSection("s", "Use tools_x", "Prefer tools_x.\n{tools}\n{{tools_x}} {skills}")
    harness = Harness(tools=(tool,), prompt=Prompt((section,)))
    renamed = rename_tools(harness, {"tools_x": "outils_x"})
    new = renamed.prompt.sections[0]
    assert new.title == "Use outils_x"
    assert new.template == "Prefer outils_x.\n{tools}\n{{outils_x}} {skills}"
    assert template_variables(new.template) == {"tools", "skills"}


def test_schema_descriptions_are_rewritten_and_untouched_schemas_are_shared() -> None:
    mentions = Tool(
        "a_tool",
        "Uses b_tool.",
        {"type": "object", "properties": {"x": {"type": "string", "description": "From b_tool."}}},
    )
    plain = Tool("c_tool", "Alone.", {"type": "object", "properties": {}})
    harness = Harness(tools=(mentions, plain, Tool("b_tool", "B.")))
    renamed = rename_tools(harness, {"b_tool": "bee_tool"})
    assert renamed.tools[0].input_schema["properties"]["x"]["description"] == "From bee_tool."
    assert renamed.tools[0].description == "Uses bee_tool."
    assert renamed.tools[1] is plain


def test_cel_literals_are_rewritten_only_when_exact() -> None:
    hooks = (
        Hook("a", "pre_tool_use", "tool_name == \"get_x\" || tool_name == 'get_y'", action="allow"),
        Hook("b", "pre_reply", '"get_x" in tool_names', action="allow"),
        Hook("c", "pre_reply", 'reply.contains("get_x")', action="allow"),  # reads no tool names
    )
    harness = Harness(tools=(Tool("get_x", "X."), Tool("get_y", "Y.")), hooks=hooks)
    renamed = rename_tools(harness, {"get_x": "fetch_x", "get_y": "fetch_y"})
    assert [h.condition for h in renamed.hooks] == [
        "tool_name == \"fetch_x\" || tool_name == 'fetch_y'",
        '"fetch_x" in tool_names',
        'reply.contains("get_x")',
    ]


def test_guards_pin_names_hooks_read_indirectly() -> None:
    hooks = (
        Hook("p", "pre_reply", 'tool_names.exists(t, t.startsWith("get_"))', action="allow"),
        Hook("m", "pre_tool_use", 'tool_name.matches("^list_.*")', action="allow"),
        Hook("e", "pre_tool_use", 'tool_name == "check_stock"', action="allow"),
    )
    tools = tuple(
        Tool(n, "T.") for n in ("get_product", "list_coupons", "check_stock", "other_one")
    )
    guard = tool_rename_guard(Harness(tools=tools, hooks=hooks))
    assert guard.pinned == {"get_product", "list_coupons"}
    assert not guard.accept("other_one", "get_other")  # would start matching startsWith
    assert guard.accept("check_stock", "query_stock")


def test_param_guard_reads_args_references() -> None:
    tool = Tool(
        "t_x",
        "T.",
        {"type": "object", "properties": {"sku": {"type": "string"}, "size": {"type": "string"}}},
    )
    hook = Hook("h", "pre_tool_use", "has(args.size)", matcher="t_*", action="allow")
    guard = param_rename_guard(Harness(tools=(tool,), hooks=(hook,)), tool)
    assert guard.renameable == ("sku",)
    assert not guard.accept("size")
    regex_hook = Hook("r", "pre_tool_use", '"sku"', condition_kind="regex", action="allow")
    assert param_rename_guard(Harness(tools=(tool,), hooks=(regex_hook,)), tool).renameable == ()
    patterned = Tool(
        "t_y", "T.", {"type": "object", "patternProperties": {"^s": {}}, "properties": {"s": {}}}
    )
    assert param_rename_guard(Harness(tools=(patterned,)), patterned).renameable == ()


def test_naming_styles_and_tokens() -> None:
    assert (
        tokens("getProduct") == tokens("get_product") == tokens("GET-PRODUCT") == ["get", "product"]
    )
    assert tokens("aws.lexv2_models") == ["aws", "lexv2", "models"]
    assert [
        render_style(["get", "product"], s) for s in ("camel", "pascal", "dotted", "screaming")
    ] == [
        "getProduct",
        "GetProduct",
        "get.product",
        "GET_PRODUCT",
    ]
    rng = random.Random(0)
    for _ in range(50):
        assert looks_like_identifier(candidate_name("search", "tool", "style", "train", rng))
        name = candidate_name("refund", "skill", "synonym", "heldout", rng)
        assert looks_like_identifier(name) and name == name.lower()


def test_thresholds_are_found_with_positions() -> None:
    references = cel_references("size(reply) > 280 || 2.5 <= x && y == 3")
    assert references is not None
    assert [(t.raw, t.operator) for t in references.thresholds] == [("280", ">"), ("2.5", "<=")]
