"""Hook conditions: CEL expressions or linear-time regexes, never Python.

Stored hooks are edited by operators and merchants, so a condition is *data*: either a CEL
expression (cel-python) over the variables its event declares, or a deny-list pattern for
RE2 (google-re2: linear time, no backreferences or look-around, so no ReDoS).

"Type-checked at save time" means ``compile_condition`` rejects, with a message an operator
can act on: syntax errors, variables the event does not declare, unknown functions, results
that are not bool, type errors (e.g. ``reply + 1``), and conditions over budget (source
length, AST size, nesting, nested macros). cel-python has no static type checker, so types are
checked by evaluating the expression against two typed sample activations per event (empty
values and populated values, so both sides of ``||``/``&&`` and macro bodies run). Errors that
depend on the data (a missing map key, division by zero) cannot be decided at save time; at
run time they raise ``ConditionRuntimeError`` and the hook's ``fail_mode`` decides.

The evaluation cost is bounded by construction and enforced while evaluating:

- at save: at most ``MAX_CEL_AST_NODES`` nodes, list/map literals of at most
  ``MAX_CEL_LITERAL_ITEMS`` items, macros (the only loops) nested at most ``MAX_MACRO_NESTING``
  deep, and an estimated worst case of at most ``MAX_CEL_ESTIMATED_STEPS`` evaluation steps
  (tree nodes visited; a macro costs its body times the size of the list it iterates: a
  literal's item count, or ``ASSUMED_RUNTIME_ITEMS`` for event data), so two nested 140-item
  literals (19,600 iterations) are refused instead of taking seconds;
- at run time: every tree node the evaluator visits is one step of a budget of
  ``MAX_CEL_EVAL_STEPS`` steps and checks the evaluation's deadline (the hook's ``timeout_ms``
  or what is left of the reply's deadline, whichever is sooner), so an evaluation over large
  event data is stopped mid-way (``ConditionTimeout``) instead of being waited for.

``matches()`` runs on RE2.
"""

from __future__ import annotations

import fnmatch
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import celpy
import re2
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.celparser import CELParseError
from celpy.evaluation import Activation, CELEvalError, Evaluator, base_functions
from lark import Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedToken

from harness_app.harness.re2_text import searchable
from harness_app.harness.serialization import canonical_json

MAX_CEL_SOURCE_CHARS: Final = 2000
MAX_CEL_AST_NODES: Final = 300
# Depth of the parse tree; bounds the evaluator's recursion (about 16 nested parentheses).
MAX_CEL_TREE_DEPTH: Final = 200
MAX_MACRO_NESTING: Final = 2
MAX_REGEX_CHARS: Final = 1000
# Items in one list or map literal.
MAX_CEL_LITERAL_ITEMS: Final = 32
# The size assumed at save time for a list or map that comes from the event's data.
ASSUMED_RUNTIME_ITEMS: Final = 8
# Compile-time worst-case estimate, and the hard cap while evaluating, in evaluator steps
# (tree nodes visited: about 10 microseconds each in cel-python; see docs/RUNTIME.md).
MAX_CEL_ESTIMATED_STEPS: Final = 5_000
MAX_CEL_EVAL_STEPS: Final = 20_000

TOOL_EVENTS: tuple[str, ...] = ("pre_tool_use", "post_tool_use")

# Variables each event provides to its conditions, with their CEL types.
EVENT_VARIABLES: dict[str, dict[str, str]] = {
    "on_comment": {"comment": "string", "uv_id": "string", "product_sku": "string"},
    "pre_tool_use": {"tool_name": "string", "args": "map(string, dyn)"},
    "post_tool_use": {
        "tool_name": "string",
        "args": "map(string, dyn)",
        "result": "map(string, dyn)",
        "error": "string",
    },
    "pre_reply": {
        "reply": "string",
        "comment": "string",
        "quoted_prices": "list(double)",
        "catalog_prices": "list(double)",
        "tool_names": "list(string)",
    },
}

# Two samples per event: "empty" values exercise the other side of short-circuit operators,
# "populated" values run macro bodies and map lookups with realistic types.
_EMPTY_SAMPLES: dict[str, dict[str, Any]] = {
    "on_comment": {"comment": "", "uv_id": "", "product_sku": ""},
    "pre_tool_use": {"tool_name": "", "args": {}},
    "post_tool_use": {"tool_name": "", "args": {}, "result": {}, "error": ""},
    "pre_reply": {
        "reply": "",
        "comment": "",
        "quoted_prices": [],
        "catalog_prices": [],
        "tool_names": [],
    },
}
_SAMPLE_ARGS = {"sku": "SKU-1001", "size": "M", "region": "Zhejiang", "quantity": 1}
_POPULATED_SAMPLES: dict[str, dict[str, Any]] = {
    "on_comment": {
        "comment": "Is the red one still in stock in size M?",
        "uv_id": "uv-42",
        "product_sku": "SKU-1001",
    },
    "pre_tool_use": {"tool_name": "check_stock", "args": _SAMPLE_ARGS},
    "post_tool_use": {
        "tool_name": "get_product",
        "args": _SAMPLE_ARGS,
        "result": {"sku": "SKU-1001", "title": "Linen shirt", "price": 129.0, "stock": 12},
        "error": "timeout",
    },
    "pre_reply": {
        "reply": "The linen shirt is 129.00 today and size M is in stock.",
        "comment": "How much is the linen shirt?",
        "quoted_prices": [129.0, 99.0],
        "catalog_prices": [129.0],
        "tool_names": ["get_product", "check_stock"],
    },
}

_MACROS: frozenset[str] = frozenset({"all", "exists", "exists_one", "map", "filter"})
_GLOBAL_MACROS: frozenset[str] = frozenset({"has", "dyn"})
_CEL_FUNCTIONS: frozenset[str] = frozenset(
    name for name in base_functions if name.isidentifier() and not name.startswith("_")
)
# Type names are identifiers in CEL (``type(x) == string``).
_CEL_TYPE_NAMES: frozenset[str] = frozenset(
    {
        "bool",
        "bytes",
        "double",
        "duration",
        "int",
        "list",
        "map",
        "null_type",
        "string",
        "timestamp",
        "type",
        "uint",
    }
)
# Single-child grammar levels (operator precedence) that are not real AST nodes.
_PRECEDENCE_WRAPPERS: frozenset[str] = frozenset(
    {
        "expr",
        "conditionalor",
        "conditionaland",
        "relation",
        "addition",
        "multiplication",
        "unary",
        "member",
        "primary",
        "exprlist",
    }
)
# Errors whose cause is the data, not the expression's types (decided at run time).
_DATA_DEPENDENT_CAUSES: tuple[type[BaseException], ...] = (
    KeyError,
    IndexError,
    ZeroDivisionError,
    ValueError,
    OverflowError,
)
_OPERATOR_NAMES = {
    "relation_eq": "==",
    "relation_ne": "!=",
    "relation_lt": "<",
    "relation_le": "<=",
    "relation_gt": ">",
    "relation_ge": ">=",
    "relation_in": "in",
    "addition_add": "+",
    "addition_sub": "-",
    "multiplication_mul": "*",
    "multiplication_div": "/",
    "multiplication_mod": "%",
    "unary_not": "!",
    "unary_neg": "-",
}


class ConditionError(ValueError):
    """A condition was rejected at save time; ``message`` says why and what is allowed."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConditionRuntimeError(RuntimeError):
    """A compiled condition could not be evaluated for one event (the hook's fail_mode
    decides what happens)."""


class ConditionTimeout(ConditionRuntimeError):
    """The evaluation was stopped: it reached its time limit or its step budget."""


def describe_event_variables(event: str) -> str:
    """``reply (string), comment (string), ...`` for messages and the editor's help text."""
    return ", ".join(f"{name} ({cel_type})" for name, cel_type in EVENT_VARIABLES[event].items())


def matcher_matches(matcher: str, tool_name: str) -> bool:
    """Whether a hook's tool matcher (a glob: ``*``, ``get_*``, ``check_?tock``) selects a
    tool. Case-sensitive, like tool names."""
    return fnmatch.fnmatchcase(tool_name, matcher)


def sample_activation(event: str, *, populated: bool = True) -> dict[str, Any]:
    """A typed example activation for ``event`` (used for save-time checks and previews)."""
    samples = _POPULATED_SAMPLES if populated else _EMPTY_SAMPLES
    return dict(samples[event])


# ----------------------------------------------------------------------------- activations


def _to_cel(name: str, cel_type: str, value: object) -> celtypes.Value:
    if cel_type == "string":
        if not isinstance(value, str):
            raise ConditionRuntimeError(
                f"variable '{name}' must be a string, got {type(value).__name__}"
            )
        return celtypes.StringType(value)
    if cel_type == "list(double)":
        if not isinstance(value, list | tuple) or not all(
            isinstance(item, int | float) and not isinstance(item, bool) for item in value
        ):
            raise ConditionRuntimeError(f"variable '{name}' must be a list of numbers")
        return celtypes.ListType([celtypes.DoubleType(float(item)) for item in value])
    if cel_type == "list(string)":
        if not isinstance(value, list | tuple) or not all(isinstance(i, str) for i in value):
            raise ConditionRuntimeError(f"variable '{name}' must be a list of strings")
        return celtypes.ListType([celtypes.StringType(item) for item in value])
    if cel_type == "map(string, dyn)":
        if not isinstance(value, Mapping):
            raise ConditionRuntimeError(f"variable '{name}' must be a mapping")
        try:
            return json_to_cel(_plain_json(value))
        except (TypeError, ValueError) as exc:
            raise ConditionRuntimeError(f"variable '{name}' is not JSON data: {exc}") from exc
    raise ConditionRuntimeError(f"variable '{name}' has unsupported type {cel_type}")


def _plain_json(value: object) -> Any:
    # Round-trip through canonical JSON: rejects non-JSON values and turns tuples into lists.
    return json.loads(canonical_json(value))


def cel_activation(event: str, activation: Mapping[str, object]) -> dict[str, celtypes.Value]:
    """Convert Python values to CEL values using the event's declared types."""
    declared = EVENT_VARIABLES[event]
    missing = [name for name in declared if name not in activation]
    if missing:
        raise ConditionRuntimeError(
            f"activation for {event} is missing {', '.join(missing)}; "
            f"expected {describe_event_variables(event)}"
        )
    return {name: _to_cel(name, cel_type, activation[name]) for name, cel_type in declared.items()}


def inspected_text(event: str, activation: Mapping[str, object]) -> str:
    """The text a regex condition searches: the comment, the reply, or the canonical JSON of
    the tool arguments (pre_tool_use) / result plus any error text (post_tool_use)."""
    key = {
        "on_comment": "comment",
        "pre_reply": "reply",
        "pre_tool_use": "args",
        "post_tool_use": "result",
    }.get(event)
    if key is None:
        raise ConditionRuntimeError(f"unknown event '{event}'")
    if key not in activation:
        raise ConditionRuntimeError(f"activation for {event} is missing '{key}'")
    value = activation[key]
    if key in ("comment", "reply"):
        if not isinstance(value, str):
            raise ConditionRuntimeError(f"'{key}' must be a string")
        return value
    try:
        text = canonical_json(value)
    except (TypeError, ValueError) as exc:
        raise ConditionRuntimeError(f"'{key}' is not JSON data: {exc}") from exc
    error = activation.get("error", "") if event == "post_tool_use" else ""
    return f"{text}\n{error}" if isinstance(error, str) and error else text


# ------------------------------------------------------------------------ compiled objects


@dataclass(frozen=True, eq=False)
class CompiledCondition:
    """A condition that passed the save-time checks, ready to evaluate per event."""

    kind: str
    source: str
    event: str
    _runner: _BudgetedRunner | None = None
    _regex: Any = None  # re2._Regexp (google-re2 ships no type information)

    def evaluate(
        self, activation: Mapping[str, object], *, time_limit_s: float | None = None
    ) -> bool:
        """True when the hook fires. Raises ``ConditionRuntimeError`` if the activation is
        missing/mistyped or the expression fails on this data, and ``ConditionTimeout`` when
        a CEL evaluation runs past ``time_limit_s`` or ``MAX_CEL_EVAL_STEPS`` (it is stopped
        there, not waited for). A regex search is linear in the text (RE2) and not stopped."""
        if self.kind == "regex":
            text = searchable(inspected_text(self.event, activation))
            return self._regex.search(text) is not None
        assert self._runner is not None
        deadline = None if time_limit_s is None else time.perf_counter() + time_limit_s
        outcome = _run(self._runner, cel_activation(self.event, activation), deadline)
        if isinstance(outcome, CELEvalError):
            raise ConditionRuntimeError(f"condition failed: {_clean_cel_message(outcome)}")
        if isinstance(outcome, RecursionError):
            raise ConditionRuntimeError("condition is too deeply nested to evaluate")
        if not isinstance(outcome, celtypes.BoolType):
            raise ConditionRuntimeError(f"condition returned {_cel_type_name(outcome)}, not a bool")
        return bool(outcome)


def compile_condition(kind: str, source: str, event: str) -> CompiledCondition:
    """Compile and type-check a hook condition for ``event``; raises ``ConditionError``."""
    if event not in EVENT_VARIABLES:
        raise ConditionError(
            f"unknown event '{event}'; conditions exist for {', '.join(EVENT_VARIABLES)}"
        )
    if not source.strip():
        raise ConditionError("condition is empty")
    if kind == "cel":
        return _compile_cel(source, event)
    if kind == "regex":
        return _compile_regex(source, event)
    raise ConditionError(f"condition kind '{kind}' must be one of cel, regex")


# -------------------------------------------------------------------------------------- CEL

# One environment for every condition. cel-python raises the interpreter's recursion limit
# (to 2500) when it is created; doing that once at import keeps the limit stable afterwards.
_ENVIRONMENT = celpy.Environment()


class _BudgetExceeded(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Budget:
    """Steps and wall time of one evaluation, shared by its macro sub-evaluators."""

    __slots__ = ("deadline", "max_steps", "steps")

    def __init__(self, max_steps: int, deadline: float | None) -> None:
        self.max_steps = max_steps
        self.deadline = deadline
        self.steps = 0

    def step(self) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise _BudgetExceeded(f"more than {self.max_steps} evaluation steps")
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise _BudgetExceeded("its time limit")


class _BudgetedEvaluator(Evaluator):
    """cel-python's tree-walking evaluator with one budget step per node visited (lark's
    ``Interpreter._visit_tree`` is the one place every node, macro bodies included, passes)."""

    def __init__(self, ast: Tree[Any], activation: Activation, budget: _Budget) -> None:
        super().__init__(ast, activation)
        self._budget = budget

    def sub_evaluator(self, ast: Tree[Any]) -> Evaluator:
        return _BudgetedEvaluator(ast, self.activation, self._budget)

    def _visit_tree(self, tree: Tree[Any]) -> Any:
        self._budget.step()
        return super()._visit_tree(tree)


class _BudgetedRunner(celpy.InterpretedRunner):
    def evaluate_within(
        self, context: dict[str, celtypes.Value], budget: _Budget
    ) -> celtypes.Value:
        return _BudgetedEvaluator(self.ast, self.new_activation(), budget).evaluate(context)


def _compile_cel(source: str, event: str) -> CompiledCondition:
    if len(source) > MAX_CEL_SOURCE_CHARS:
        raise ConditionError(
            f"CEL condition is {len(source)} characters; the limit is {MAX_CEL_SOURCE_CHARS}"
        )
    environment = _ENVIRONMENT
    try:
        ast = environment.compile(source)
    except CELParseError as exc:
        raise ConditionError(_describe_parse_error(exc)) from exc
    except RecursionError as exc:
        raise ConditionError("CEL condition is too deeply nested") from exc
    _check_ast(ast, event)
    estimate = estimated_steps(ast)
    if estimate > MAX_CEL_ESTIMATED_STEPS:
        raise ConditionError(
            f"CEL condition is too expensive: about {estimate} evaluation steps in the worst "
            f"case, the limit is {MAX_CEL_ESTIMATED_STEPS} (a macro costs its body times the "
            f"items it iterates: a literal's size, or {ASSUMED_RUNTIME_ITEMS} for event data); "
            "use smaller lists, fewer nested macros, or split it into several hooks"
        )
    runner = _BudgetedRunner(environment, ast, {"matches": _re2_matches})
    for populated in (False, True):
        _type_check(runner, event, populated)
    return CompiledCondition(kind="cel", source=source, event=event, _runner=runner)


def _re2_matches(text: celtypes.Value, pattern: celtypes.Value) -> celtypes.Value | CELEvalError:
    """CEL ``matches()`` on RE2 (as cel-python does) but without RE2's stderr logging and
    with a readable error for a bad pattern."""
    options = re2.Options()
    options.log_errors = False
    try:
        compiled = re2.compile(str(pattern), options)
    except re2.error as exc:
        return CELEvalError(
            f"matches(): invalid RE2 pattern ({_re2_detail(exc)})", TypeError, exc.args
        )
    return celtypes.BoolType(compiled.search(searchable(str(text))) is not None)


def _re2_detail(exc: Exception) -> str:
    detail = exc.args[0] if exc.args else exc
    return detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)


def _describe_parse_error(exc: CELParseError) -> str:
    where = f"line {exc.line}, column {exc.column}" if exc.line else "CEL"
    cause = exc.__context__
    if isinstance(cause, UnexpectedToken):
        if cause.token.type == "$END":
            return f"syntax error at {where}: the expression ends too early"
        return f"syntax error at {where}: unexpected '{cause.token}'"
    if isinstance(cause, UnexpectedCharacters):
        return f"syntax error at {where}: unexpected character '{cause.char}'"
    return f"syntax error at {where}"


@dataclass
class _Frame:
    node: Tree[Any]
    bound: frozenset[str]
    macro_depth: int
    depth: int


def _bare_identifier(node: Tree[Any]) -> str | None:
    while len(node.children) == 1 and isinstance(node.children[0], Tree):
        node = node.children[0]
    if node.data == "ident" and len(node.children) == 1:
        return str(node.children[0])
    return None


def _check_ast(ast: Tree[Any], event: str) -> None:
    """Budget, variables and functions, checked by one iterative walk (no recursion limit)."""
    declared = EVENT_VARIABLES[event]
    nodes = 0
    stack = [_Frame(ast, frozenset(), 0, 0)]
    while stack:
        frame = stack.pop()
        node = frame.node
        depth = frame.depth + 1
        if depth > MAX_CEL_TREE_DEPTH:
            raise ConditionError(
                "CEL condition is nested too deeply; remove nested parentheses or split it "
                "into several hooks"
            )
        if not (node.data in _PRECEDENCE_WRAPPERS and len(node.children) == 1):
            nodes += 1
            if nodes > MAX_CEL_AST_NODES:
                raise ConditionError(
                    f"CEL condition is too large: more than {MAX_CEL_AST_NODES} AST nodes; "
                    "split it into several hooks"
                )
        children = [c for c in node.children if isinstance(c, Tree)]
        tokens = [c for c in node.children if isinstance(c, Token)]
        bound, macro_depth = frame.bound, frame.macro_depth

        if node.data in ("list_lit", "map_lit"):
            items = _literal_items(node)
            if items > MAX_CEL_LITERAL_ITEMS:
                kind = "list" if node.data == "list_lit" else "map"
                raise ConditionError(
                    f"a {kind} literal has {items} items; the limit is {MAX_CEL_LITERAL_ITEMS}"
                )
        if node.data in ("ident", "dot_ident"):
            _check_identifier(str(tokens[0]), bound, declared, event)
            continue
        if node.data in ("ident_arg", "dot_ident_arg"):
            name = str(tokens[0])
            if name not in _CEL_FUNCTIONS and name not in _GLOBAL_MACROS:
                raise ConditionError(_unknown_function(name))
        if node.data == "member_dot_arg":
            method = str(tokens[0])
            target, *rest = children
            arguments = rest[0].children if rest else []
            variable = (
                _bare_identifier(arguments[0])
                if method in _MACROS and len(arguments) in (2, 3) and isinstance(arguments[0], Tree)
                else None
            )
            if variable is not None:
                if macro_depth + 1 > MAX_MACRO_NESTING:
                    raise ConditionError(
                        f"macros ({', '.join(sorted(_MACROS))}) may be nested at most "
                        f"{MAX_MACRO_NESTING} deep"
                    )
                stack.append(_Frame(target, bound, macro_depth, depth))
                stack.extend(
                    _Frame(arg, bound | {variable}, macro_depth + 1, depth)
                    for arg in arguments[1:]
                    if isinstance(arg, Tree)
                )
                continue
            if method in _MACROS:
                raise ConditionError(
                    f"{method}() takes a variable name and an expression, "
                    f"e.g. list.{method}(x, x > 0)"
                )
            if method not in _CEL_FUNCTIONS:
                raise ConditionError(_unknown_function(method))
        stack.extend(_Frame(child, bound, macro_depth, depth) for child in children)


def _literal_items(node: Tree[Any]) -> int:
    """Items of a ``list_lit`` / ``map_lit`` node (a map's inits alternate key, value)."""
    inits = [c for c in node.children if isinstance(c, Tree)]
    if not inits:
        return 0
    count = len([c for c in inits[0].children if isinstance(c, Tree)])
    return count // 2 if node.data == "map_lit" else count


def _unwrapped(node: Tree[Any]) -> Tree[Any]:
    while (
        node.data not in ("list_lit", "map_lit")
        and len(node.children) == 1
        and isinstance(node.children[0], Tree)
    ):
        node = node.children[0]
    return node


def _iterated_items(target: Tree[Any]) -> int:
    """How many items a macro over ``target`` iterates, at worst: a literal's size, the size
    of the list a map()/filter() makes, or the assumed size of event data."""
    node = _unwrapped(target)
    if node.data in ("list_lit", "map_lit"):
        return _literal_items(node)
    if node.data == "member_dot_arg":
        method = next((str(c) for c in node.children if isinstance(c, Token)), "")
        inner = node.children[0]
        if method in ("map", "filter") and isinstance(inner, Tree):
            return _iterated_items(inner)
    return ASSUMED_RUNTIME_ITEMS


def estimated_steps(ast: Tree[Any]) -> int:
    """A worst-case estimate of the evaluator steps (tree nodes visited) of one evaluation:
    every node once, and a macro's body once per item it iterates. Recursive, on a tree whose
    depth ``_check_ast`` has already bounded."""
    cost = 1
    if ast.data == "member_dot_arg":
        method = next((str(c) for c in ast.children if isinstance(c, Token)), "")
        trees = [c for c in ast.children if isinstance(c, Tree)]
        if method in _MACROS and len(trees) == 2:
            target, arguments = trees
            parts = [c for c in arguments.children if isinstance(c, Tree)]
            body = sum(estimated_steps(part) for part in parts[1:])
            return cost + estimated_steps(target) + 1 + _iterated_items(target) * body
    for child in ast.children:
        if isinstance(child, Tree):
            cost += estimated_steps(child)
    return cost


def _check_identifier(
    name: str, bound: frozenset[str], declared: Mapping[str, str], event: str
) -> None:
    if name in bound or name in declared or name in _CEL_TYPE_NAMES:
        return
    raise ConditionError(
        f"unknown variable '{name}' for {event}; available: {describe_event_variables(event)}"
    )


def _unknown_function(name: str) -> str:
    available = sorted(_CEL_FUNCTIONS | _MACROS | _GLOBAL_MACROS)
    return f"unknown function '{name}'; available: {', '.join(available)}"


def _run(
    runner: _BudgetedRunner,
    activation: dict[str, celtypes.Value],
    deadline: float | None = None,
) -> object:
    """Evaluate within ``MAX_CEL_EVAL_STEPS`` and ``deadline``, returning the result, the CEL
    error or a RecursionError; raises ``ConditionTimeout`` when the budget runs out."""
    try:
        return runner.evaluate_within(activation, _Budget(MAX_CEL_EVAL_STEPS, deadline))
    except _BudgetExceeded as exc:
        raise ConditionTimeout(f"condition stopped after {exc.reason}") from None
    except CELEvalError as exc:
        return exc
    except RecursionError as exc:
        return exc
    except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
        # cel-python occasionally lets a Python error escape for odd inputs.
        return CELEvalError(str(exc), type(exc), exc.args)


def _type_check(runner: _BudgetedRunner, event: str, populated: bool) -> None:
    sample = "populated" if populated else "empty"
    try:
        outcome = _run(runner, cel_activation(event, sample_activation(event, populated=populated)))
    except ConditionTimeout as exc:
        raise ConditionError(
            f"CEL condition is too expensive: on {sample} sample values it needed more than "
            f"{MAX_CEL_EVAL_STEPS} evaluation steps"
        ) from exc
    if isinstance(outcome, RecursionError):
        raise ConditionError("CEL condition is too deeply nested to evaluate")
    if isinstance(outcome, CELEvalError):
        message = _clean_cel_message(outcome)
        cause = outcome.args[1] if len(outcome.args) > 1 else None
        if message.startswith("undeclared reference"):
            raise ConditionError(f"{message}; available: {describe_event_variables(event)}")
        if isinstance(cause, type) and issubclass(cause, _DATA_DEPENDENT_CAUSES):
            return  # depends on the data; decided at run time
        if message.startswith("matches():"):
            raise ConditionError(message)
        details = repr(outcome.args)
        hint = (
            "; CEL does not convert between int and double (write 100.0 to compare with a double)"
            if "DoubleType" in details and "IntType" in details
            else ""
        )
        raise ConditionError(f"type error: {message} (checked with {sample} sample values){hint}")
    if not isinstance(outcome, celtypes.BoolType):
        raise ConditionError(
            f"condition must evaluate to a bool (true/false), got {_cel_type_name(outcome)}"
        )


def _cel_type_name(value: object) -> str:
    name = type(value).__name__
    return "null" if value is None else name.removesuffix("Type").lower()


def _clean_cel_message(error: CELEvalError) -> str:
    message = str(error.args[0]) if error.args else "evaluation error"
    message = re.sub(r"\(in activation .*", "", message, flags=re.DOTALL).strip()
    message = re.sub(
        r"Token\('RULE', '(\w+)'\)", lambda m: _OPERATOR_NAMES.get(m[1], m[1]), message
    )
    message = re.sub(
        r"<class '(?:celpy\.celtypes\.)?(\w+?)(?:Type)?'>", lambda m: m[1].lower(), message
    )
    message = message.replace("found no matching overload", "no matching overload")
    return message.replace("'(", "(").replace(")'", ")")


# ------------------------------------------------------------------------------------ regex


def _compile_regex(source: str, event: str) -> CompiledCondition:
    if len(source) > MAX_REGEX_CHARS:
        raise ConditionError(f"regex is {len(source)} characters; the limit is {MAX_REGEX_CHARS}")
    options = re2.Options()
    options.log_errors = False
    try:
        pattern = re2.compile(source, options)
    except re2.error as exc:
        raise ConditionError(
            f"regex rejected by RE2 ({_re2_detail(exc)}); RE2 runs in linear time and has no "
            "backreferences or look-around"
        ) from exc
    if pattern.search("") is not None:
        raise ConditionError(
            "regex matches empty text, so the hook would fire on every event; "
            "make it require at least one character"
        )
    return CompiledCondition(kind="regex", source=source, event=event, _regex=pattern)
