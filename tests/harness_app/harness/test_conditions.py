from __future__ import annotations

import time

import pytest

from harness_app.harness.conditions import (
    EVENT_VARIABLES,
    MAX_CEL_AST_NODES,
    MAX_CEL_ESTIMATED_STEPS,
    MAX_CEL_EVAL_STEPS,
    MAX_CEL_LITERAL_ITEMS,
    ConditionError,
    ConditionRuntimeError,
    ConditionTimeout,
    compile_condition,
    inspected_text,
    matcher_matches,
    sample_activation,
)

PRICE_HOOK = "quoted_prices.exists(p, !(p in catalog_prices))"
CLAIMS = r"(?i)\b(best|cheapest|guaranteed|100%|number one|never fails)\b"


def reply_activation(**changes: object) -> dict[str, object]:
    activation: dict[str, object] = {
        "reply": "It is 129.00 today.",
        "comment": "price?",
        "quoted_prices": [129.0],
        "catalog_prices": [129.0],
        "tool_names": ["get_product"],
    }
    activation.update(changes)
    return activation


def rejected(kind: str, source: str, event: str = "pre_reply") -> str:
    with pytest.raises(ConditionError) as caught:
        compile_condition(kind, source, event)
    return caught.value.message


def test_event_variables_declare_cel_types() -> None:
    assert EVENT_VARIABLES["pre_reply"] == {
        "reply": "string",
        "comment": "string",
        "quoted_prices": "list(double)",
        "catalog_prices": "list(double)",
        "tool_names": "list(string)",
    }
    assert set(EVENT_VARIABLES) == {"on_comment", "pre_tool_use", "post_tool_use", "pre_reply"}


# ------------------------------------------------------------------------------ CEL evaluate


def test_price_hook_fires_only_for_a_price_not_in_the_catalog() -> None:
    condition = compile_condition("cel", PRICE_HOOK, "pre_reply")

    assert condition.evaluate(reply_activation(quoted_prices=[129.0])) is False
    assert condition.evaluate(reply_activation(quoted_prices=[129.0, 99.0])) is True
    assert condition.evaluate(reply_activation(quoted_prices=[])) is False


def test_integer_prices_are_converted_to_doubles() -> None:
    condition = compile_condition("cel", PRICE_HOOK, "pre_reply")

    assert (
        condition.evaluate(reply_activation(quoted_prices=[129], catalog_prices=[129.0])) is False
    )


def test_map_arguments_are_converted() -> None:
    condition = compile_condition(
        "cel", 'tool_name == "get_shipping" && !has(args.region)', "pre_tool_use"
    )

    assert condition.evaluate({"tool_name": "get_shipping", "args": {"sku": "A"}}) is True
    assert (
        condition.evaluate(
            {"tool_name": "get_shipping", "args": {"sku": "A", "region": "Zhejiang"}}
        )
        is False
    )


def test_post_tool_use_result_fields() -> None:
    condition = compile_condition("cel", "has(result.stock) && result.stock == 0", "post_tool_use")

    activation = {"tool_name": "check_stock", "args": {}, "result": {"stock": 0}, "error": ""}
    assert condition.evaluate(activation) is True
    assert condition.evaluate({**activation, "result": {"stock": 3}}) is False


def test_missing_map_key_at_run_time_is_a_runtime_error() -> None:
    condition = compile_condition("cel", 'args.region == "Tibet"', "pre_tool_use")

    with pytest.raises(ConditionRuntimeError, match="no such member in mapping: 'region'"):
        condition.evaluate({"tool_name": "get_shipping", "args": {"sku": "A"}})


def test_missing_variable_in_activation_is_a_runtime_error() -> None:
    condition = compile_condition("cel", PRICE_HOOK, "pre_reply")

    with pytest.raises(ConditionRuntimeError, match="missing catalog_prices"):
        condition.evaluate({"reply": "", "comment": "", "quoted_prices": [], "tool_names": []})


def test_mistyped_variable_in_activation_is_a_runtime_error() -> None:
    condition = compile_condition("cel", PRICE_HOOK, "pre_reply")

    with pytest.raises(ConditionRuntimeError, match="'quoted_prices' must be a list of numbers"):
        condition.evaluate(reply_activation(quoted_prices=["129"]))


def test_matches_uses_re2() -> None:
    condition = compile_condition("cel", 'comment.matches("(?i)refund")', "on_comment")

    assert condition.evaluate({"comment": "REFUND now", "uv_id": "u", "product_sku": ""}) is True


# ------------------------------------------------------------------------- CEL save-time checks


def test_syntax_error_names_the_position() -> None:
    assert rejected("cel", "size(reply) > 1 ||") == (
        "syntax error at line 1, column 17: the expression ends too early"
    )
    assert (
        rejected("cel", "reply @ 1") == "syntax error at line 1, column 7: unexpected character '@'"
    )


def test_unknown_variable_lists_the_events_variables() -> None:
    message = rejected("cel", "price > 100.0")

    assert message.startswith("unknown variable 'price' for pre_reply; available: reply (string)")
    assert "quoted_prices (list(double))" in message


def test_variable_of_another_event_is_unknown() -> None:
    assert rejected("cel", 'tool_name == "x"', "on_comment").startswith(
        "unknown variable 'tool_name' for on_comment"
    )


def test_macro_variable_is_scoped_to_its_macro() -> None:
    assert compile_condition("cel", PRICE_HOOK, "pre_reply").source == PRICE_HOOK
    assert rejected("cel", "quoted_prices.exists(p, p > 1.0) && p > 1.0").startswith(
        "unknown variable 'p'"
    )


def test_unknown_function_is_rejected() -> None:
    message = rejected("cel", 'reply.lower() == "x"')

    assert message.startswith("unknown function 'lower'; available: all, bool")


def test_non_boolean_result_is_rejected() -> None:
    assert rejected("cel", "reply") == (
        "condition must evaluate to a bool (true/false), got string"
    )
    assert rejected("cel", "size(quoted_prices)") == (
        "condition must evaluate to a bool (true/false), got int"
    )


def test_type_error_is_rejected() -> None:
    message = rejected("cel", 'reply + 1 == "x"')

    assert message.startswith("type error: no matching overload for + applied to (string, int)")


def test_type_error_hidden_behind_short_circuit_is_found() -> None:
    # The populated sample makes the left side true; the empty sample evaluates the right.
    assert rejected("cel", "size(reply) > 0 || reply + 1 == 2").startswith("type error")


def test_int_double_mix_gets_a_hint() -> None:
    message = rejected("cel", "quoted_prices.exists(p, p == 100)")

    assert "CEL does not convert between int and double (write 100.0" in message


def test_invalid_re2_pattern_in_matches_is_rejected() -> None:
    assert rejected("cel", r'reply.matches("(a)\\1")', "pre_reply").startswith(
        "matches(): invalid RE2 pattern (invalid escape sequence"
    )


def test_budget_source_length() -> None:
    source = "size(reply) > 0 && " * 110 + "true"

    assert rejected("cel", source) == (
        f"CEL condition is {len(source)} characters; the limit is 2000"
    )


def test_budget_ast_nodes() -> None:
    source = " || ".join(['comment == "a"'] * 80)

    assert rejected("cel", source, "on_comment") == (
        f"CEL condition is too large: more than {MAX_CEL_AST_NODES} AST nodes; "
        "split it into several hooks"
    )


def test_budget_nesting() -> None:
    source = "(" * 40 + "true" + ")" * 40

    assert rejected("cel", source, "on_comment").startswith("CEL condition is nested too deeply")


def test_budget_macro_nesting() -> None:
    source = "quoted_prices.exists(p, catalog_prices.exists(q, tool_names.exists(t, p == q)))"

    assert rejected("cel", source) == (
        "macros (all, exists, exists_one, filter, map) may be nested at most 2 deep"
    )


def test_macro_without_variable_is_rejected() -> None:
    assert rejected("cel", "quoted_prices.exists(1, true)").startswith(
        "exists() takes a variable name and an expression"
    )


def test_empty_condition_and_unknown_kind_and_event() -> None:
    assert rejected("cel", "  ") == "condition is empty"
    assert rejected("python", "True") == "condition kind 'python' must be one of cel, regex"
    assert rejected("cel", "true", "on_tip").startswith("unknown event 'on_tip'")


def test_data_dependent_errors_are_accepted_at_save_time() -> None:
    # Division by zero on the empty sample depends on the data, not on the types.
    condition = compile_condition("cel", "100 / size(tool_names) > 10", "pre_reply")

    assert condition.evaluate(reply_activation(tool_names=["a", "b"])) is True


# ------------------------------------------------------------------------------------ regex


def test_regex_hook_fires_on_the_reply() -> None:
    condition = compile_condition("regex", CLAIMS, "pre_reply")

    assert condition.evaluate(reply_activation(reply="The BEST price in town")) is True
    assert condition.evaluate(reply_activation(reply="A good price today")) is False


def test_regex_rejects_backreferences_and_lookaround() -> None:
    assert rejected("regex", r"(a)\1").startswith(
        r"regex rejected by RE2 (invalid escape sequence: \1); RE2 runs in linear time"
    )
    assert "invalid perl operator: (?=" in rejected("regex", "best(?= price)")


def test_regex_length_limit() -> None:
    assert rejected("regex", "a" * 1001) == "regex is 1001 characters; the limit is 1000"


def test_regex_matching_empty_text_is_rejected() -> None:
    assert rejected("regex", "x*").startswith("regex matches empty text")


def test_regex_runs_in_linear_time_on_a_redos_pattern() -> None:
    condition = compile_condition("regex", r"(a+)+$", "on_comment")
    text = "a" * 50_000 + "!"

    started = time.perf_counter()
    fired = condition.evaluate({"comment": text, "uv_id": "u", "product_sku": ""})

    assert fired is False
    assert time.perf_counter() - started < 1.0  # Python's re would take longer than the universe


def test_inspected_text_per_event() -> None:
    assert inspected_text("on_comment", {"comment": "hi"}) == "hi"
    assert inspected_text("pre_reply", {"reply": "ok"}) == "ok"
    assert inspected_text("pre_tool_use", {"args": {"b": 1, "a": "x"}}) == '{"a":"x","b":1}'
    assert inspected_text("post_tool_use", {"result": {"ok": True}, "error": ""}) == '{"ok":true}'
    assert inspected_text("post_tool_use", {"result": {}, "error": "timeout"}) == "{}\ntimeout"


def test_regex_on_tool_arguments_sees_canonical_json() -> None:
    condition = compile_condition("regex", r'"region":"Tibet"', "pre_tool_use")

    assert (
        condition.evaluate({"tool_name": "get_shipping", "args": {"sku": "A", "region": "Tibet"}})
        is True
    )


def test_regex_missing_text_is_a_runtime_error() -> None:
    condition = compile_condition("regex", CLAIMS, "pre_reply")

    with pytest.raises(ConditionRuntimeError, match="missing 'reply'"):
        condition.evaluate({"comment": "x"})


# -------------------------------------------------------------------------------- helpers


@pytest.mark.parametrize(
    ("matcher", "tool_name", "expected"),
    [
        ("*", "get_product", True),
        ("get_*", "get_product", True),
        ("get_*", "check_stock", False),
        ("check_?tock", "check_stock", True),
        ("Get_*", "get_product", False),
    ],
)
def test_matcher_is_a_case_sensitive_glob(matcher: str, tool_name: str, expected: bool) -> None:
    assert matcher_matches(matcher, tool_name) is expected


def test_sample_activation_has_every_declared_variable() -> None:
    for event, variables in EVENT_VARIABLES.items():
        assert set(sample_activation(event)) == set(variables)
        assert set(sample_activation(event, populated=False)) == set(variables)


# --- cost bounded by construction and enforced while evaluating (issue 9) ---------------------

NUMBERS_140 = "[" + ",".join(str(i) for i in range(140)) + "]"
NUMBERS_32 = "[" + ",".join(str(i) for i in range(32)) + "]"
# The condition: 280 literal items fit the 300-node limit, 19,600 iterations took
# seconds per evaluation, and two evaluations ran at every save.
NESTED_140 = f"{NUMBERS_140}.all(x, {NUMBERS_140}.all(y, x + y >= 0))"


def test_a_list_literal_over_the_item_limit_is_refused_at_once() -> None:
    started = time.perf_counter()
    message = rejected("cel", NESTED_140, "on_comment")
    assert time.perf_counter() - started < 0.5
    assert message == f"a list literal has 140 items; the limit is {MAX_CEL_LITERAL_ITEMS}"
    map_literal = "{" + ",".join(f"'k{i}': {i}" for i in range(33)) + "}"
    assert "a map literal has 33 items" in rejected("cel", f"size({map_literal}) > 0")


def test_nested_macros_over_literals_are_refused_by_the_cost_estimate() -> None:
    # 32 x 32 iterations: each literal is allowed, their product is not.
    started = time.perf_counter()
    message = rejected("cel", f"{NUMBERS_32}.all(x, {NUMBERS_32}.all(y, x + y >= 0))")
    assert time.perf_counter() - started < 0.5
    assert message.startswith("CEL condition is too expensive: about ")
    assert f"the limit is {MAX_CEL_ESTIMATED_STEPS}" in message


def test_the_cost_estimate_follows_the_steps_actually_taken() -> None:
    from harness_app.harness.conditions import _ENVIRONMENT, estimated_steps

    source = "quoted_prices.all(x, catalog_prices.exists(y, x == y))"
    estimate = estimated_steps(_ENVIRONMENT.compile(source))
    eight = [float(i) for i in range(8)]  # ASSUMED_RUNTIME_ITEMS items each
    compiled = compile_condition("cel", source, "pre_reply")
    assert compiled.evaluate(reply_activation(quoted_prices=eight, catalog_prices=eight))
    assert 300 < estimate < MAX_CEL_ESTIMATED_STEPS


def test_large_event_data_is_stopped_at_the_time_limit_not_waited_for() -> None:
    # Cheap by the estimate, but 2,000 x 2,000 prices at run time: it is stopped mid-way.
    compiled = compile_condition(
        "cel", "quoted_prices.all(x, catalog_prices.exists(y, x == y + 0.5))", "pre_reply"
    )
    prices = [float(i) for i in range(2000)]
    activation = reply_activation(quoted_prices=prices, catalog_prices=prices)
    started = time.perf_counter()
    with pytest.raises(ConditionTimeout, match="its time limit"):
        compiled.evaluate(activation, time_limit_s=0.05)
    assert time.perf_counter() - started < 0.15


def test_without_a_time_limit_the_step_budget_still_stops_an_evaluation() -> None:
    compiled = compile_condition(
        "cel", "quoted_prices.all(x, catalog_prices.exists(y, x == y + 0.5))", "pre_reply"
    )
    prices = [float(i) for i in range(2000)]
    with pytest.raises(ConditionTimeout, match=f"more than {MAX_CEL_EVAL_STEPS} evaluation steps"):
        compiled.evaluate(reply_activation(quoted_prices=prices, catalog_prices=prices))
    # ...and the timeout is a runtime error, so every caller's fail_mode handling applies.
    assert issubclass(ConditionTimeout, ConditionRuntimeError)


def test_re2_searches_text_with_a_lone_surrogate() -> None:
    # JSON from a model may carry "\ud800"; RE2 needs UTF-8, which such a string is not.
    regex = compile_condition("regex", r"(?i)\bbest\b", "pre_reply")
    assert regex.evaluate(reply_activation(reply="the best \ud800 coat")) is True
    cel = compile_condition("cel", "reply.matches('coat$')", "pre_reply")
    assert cel.evaluate(reply_activation(reply="a \ud800 coat")) is True
