"""Model output as a string of Python calls -> BFCL's decoded form, the way BFCL decodes it.

``decode_python_calls("[f(a=1), g(b='x')]") == [{"f": {"a": 1}}, {"g": {"b": "x"}}]``

A port of ``bfcl-eval`` 2026.3.23 ``default_decode_ast_prompting`` (``model_handler/utils.py``,
Python return format, no tool-call tag), which every prompting model's handler uses: strip
backticks, newlines and spaces from both ends, wrap in ``[...]`` where a bracket is missing,
``ast.parse`` the text as one expression (a call, or a list/tuple/set of calls), and read
each call's dotted name and keyword arguments. Positional arguments are dropped, as BFCL
drops them. Values are read as BFCL's ``resolve_ast_by_type`` reads them, quirks included:

- literals as they are (``...`` reads as the string ``"..."``), lists, tuples, dicts;
- a bare name (``unit=celsius``) reads as its text ``"celsius"``;
- a call without keyword arguments reads as its source text (``"math.sqrt(2)"``); a call
  with keyword arguments as a nested decoded call ``{name: {argument: value}}``;
- a subscript reads as its source text (``"x[0]"``);
- a unary operator on a literal reads as the literal negated, whatever the operator
  (``-5`` is -5, but BFCL also reads ``+5`` as -5 and ``not True`` as -1);
- binary operators are evaluated (``2*3.5`` is 7.0, ``'a'+'b'`` is ``'ab'``).

Nothing is ever passed to ``eval``. BFCL evaluates a binary operation with ``eval``; here
only literal arithmetic is evaluated (numbers, strings, bytes, lists, tuples, sets, dicts,
comparisons, ``and``/``or``, ``x if c else y``, subscripts, with Python's own operators), with
bounds on the size of what it builds. An operand that is a name or a call (``abs(-2)*3``)
is not evaluated and the output does not decode, where BFCL would evaluate it in its
module's namespace: the one place the two can differ (docs/EVALUATION_BFCL.md).

Whatever BFCL fails to decode (prose, JSON objects, lambdas, attributes such as ``math.pi``,
f-strings, unbalanced brackets) raises ``DecodeError`` with the reason; BFCL's runner scores
such an output invalid (``ast_decoder:decoder_failed``), and correct in the irrelevance
categories (no call was made).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any, Final

# A model output longer than this is not parsed (BFCL outputs are a few hundred characters).
MAX_RESULT_CHARS: Final = 100_000
# Bounds on what literal arithmetic may build.
MAX_INT_BITS: Final = 10_000
MAX_SEQUENCE_ITEMS: Final = 100_000
MAX_ARITHMETIC_DEPTH: Final = 100

DecodedCall = dict[Any, dict[Any, Any]]


class DecodeError(ValueError):
    """The output is not BFCL's Python call syntax; the message says where and why."""


def decode_python_calls(result: str) -> list[DecodedCall]:
    """BFCL's decoded form of a string of Python calls (see module doc)."""
    if len(result) > MAX_RESULT_CHARS:
        raise DecodeError(
            f"the result is {len(result):,} characters long; at most {MAX_RESULT_CHARS:,} "
            "are decoded"
        )
    text = result.strip("`\n ")
    if not text.startswith("["):
        text = "[" + text
    if not text.endswith("]"):
        text = text + "]"
    # (BFCL then strips whitespace and single quotes, a no-op on text inside brackets)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        where = f" at line {exc.lineno}, column {exc.offset}" if exc.lineno else ""
        raise DecodeError(f"not Python call syntax{where}: {exc.msg}") from None
    except (ValueError, MemoryError, RecursionError) as exc:
        raise DecodeError(f"not Python call syntax: {type(exc).__name__}: {exc}") from None
    body = tree.body
    if isinstance(body, ast.Call):
        return [_call(body)]
    if not isinstance(body, ast.List | ast.Tuple | ast.Set):
        raise DecodeError(f"expected a call or a list of calls, got {type(body).__name__}")
    calls = []
    for index, element in enumerate(body.elts):
        if not isinstance(element, ast.Call):
            raise DecodeError(
                f"item {index} of the list is not a function call: {_snippet(element)}"
            )
        calls.append(_call(element))
    return calls


def _snippet(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."


def _call(node: ast.Call) -> DecodedCall:
    """BFCL's ``resolve_ast_call``: the dotted name (``a.b.c``) and the keyword arguments
    (a repeated keyword keeps its last value; ``**x`` lands under the key None)."""
    parts = []
    func = node.func
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    arguments: dict[Any, Any] = {}
    for keyword in node.keywords:
        arguments[keyword.arg] = _value(keyword.value)
    return {".".join(reversed(parts)): arguments}


def _value(node: ast.AST | None) -> Any:
    """BFCL's ``resolve_ast_by_type``."""
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        operand = node.operand
        number = operand.value if isinstance(operand, ast.Constant) else None
        if isinstance(number, int | float | complex):  # (bool is an int)
            return -number  # BFCL negates whatever the operator is
        raise DecodeError(f"cannot decode {_snippet(node)}: BFCL negates only a literal number")
    if isinstance(node, ast.List):
        return [_value(element) for element in node.elts]
    if isinstance(node, ast.Dict):
        try:
            return {_value(k): _value(v) for k, v in zip(node.keys, node.values, strict=True)}
        except TypeError as exc:
            raise DecodeError(f"cannot decode {_snippet(node)}: {exc}") from None
    if isinstance(node, ast.BinOp):
        return _arithmetic(node, 0)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        return ast.unparse(node) if not node.keywords else _call(node)
    if isinstance(node, ast.Tuple):
        return tuple(_value(element) for element in node.elts)
    if isinstance(node, ast.Subscript):
        return ast.unparse(node.value) + "[" + ast.unparse(node.slice) + "]"
    what = "**" if node is None else type(node).__name__
    raise DecodeError(
        f"cannot decode a value of kind {what}" + (f": {_snippet(node)}" if node else "")
    )


# ----------------------------------------------------------------------- literal arithmetic

_BINARY: Final[dict[type[ast.operator], Callable[[Any, Any], Any]]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul,
}
_UNARY: Final[dict[type[ast.unaryop], Callable[[Any], Any]]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
    ast.Invert: operator.invert,
}
_COMPARE: Final[dict[type[ast.cmpop], Callable[[Any, Any], Any]]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


def _arithmetic(node: ast.AST, depth: int) -> Any:
    """The value Python gives a literal expression, without ``eval`` and within bounds."""
    if depth > MAX_ARITHMETIC_DEPTH:
        raise DecodeError(f"arithmetic nested deeper than {MAX_ARITHMETIC_DEPTH} levels")
    try:
        return _evaluate(node, depth + 1)
    except DecodeError:
        raise
    except (ArithmeticError, TypeError, ValueError, IndexError, KeyError) as exc:
        raise DecodeError(
            f"cannot evaluate {_snippet(node)}: {type(exc).__name__}: {exc}"
        ) from None


def _evaluate(node: ast.AST, depth: int) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left = _arithmetic(node.left, depth)
        right = _arithmetic(node.right, depth)
        _check_operation_size(node.op, left, right)
        return _bounded(_BINARY[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_arithmetic(node.operand, depth))
    if isinstance(node, ast.List):
        return [_arithmetic(element, depth) for element in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_arithmetic(element, depth) for element in node.elts)
    if isinstance(node, ast.Set):
        return {_arithmetic(element, depth) for element in node.elts}
    if isinstance(node, ast.Dict):
        built: dict[Any, Any] = {}
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            if key_node is None:
                built.update(_arithmetic(value_node, depth))  # {**{...}}
            else:
                built[_arithmetic(key_node, depth)] = _arithmetic(value_node, depth)
        return built
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        left = _arithmetic(node.left, depth)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _arithmetic(comparator, depth)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.BoolOp):
        outcome: Any = None
        for operand in node.values:
            outcome = _arithmetic(operand, depth)
            if (isinstance(node.op, ast.And) and not outcome) or (
                isinstance(node.op, ast.Or) and outcome
            ):
                return outcome
        return outcome
    if isinstance(node, ast.IfExp):
        test = _arithmetic(node.test, depth)
        return _arithmetic(node.body if test else node.orelse, depth)
    if isinstance(node, ast.Subscript):
        container = _arithmetic(node.value, depth)
        return container[_arithmetic(node.slice, depth)]
    if isinstance(node, ast.Slice):
        parts = (node.lower, node.upper, node.step)
        return slice(*(None if p is None else _arithmetic(p, depth) for p in parts))
    if isinstance(node, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in node.values):
        return "".join(str(v.value) for v in node.values if isinstance(v, ast.Constant))
    raise DecodeError(
        f"only literal arithmetic is evaluated; {_snippet(node)} ({type(node).__name__}) is not"
    )


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str | bytes | list | tuple) else 0


def _check_operation_size(op: ast.operator, left: Any, right: Any) -> None:
    """Refuse, before computing it, an operation whose result would exceed the bounds."""
    if (
        isinstance(op, ast.Pow)
        and _is_int(left)
        and _is_int(right)
        and right > 0
        and abs(left) > 1
        and right * max(1, abs(left).bit_length() - 1) > MAX_INT_BITS
    ):
        raise DecodeError(f"{left}**{right} is larger than {MAX_INT_BITS} bits")
    if (
        isinstance(op, ast.LShift)
        and _is_int(left)
        and _is_int(right)
        and (right > MAX_INT_BITS or abs(left).bit_length() + right > MAX_INT_BITS)
    ):
        raise DecodeError(f"{left} << {right} is larger than {MAX_INT_BITS} bits")
    if isinstance(op, ast.Mult):
        for sequence, count in ((left, right), (right, left)):
            if _size(sequence) and _is_int(count) and _size(sequence) * count > MAX_SEQUENCE_ITEMS:
                raise DecodeError(f"a repetition longer than {MAX_SEQUENCE_ITEMS:,} items")
    if isinstance(op, ast.Mod) and isinstance(left, str | bytes):
        raise DecodeError("%-formatting is not evaluated")


def _is_int(value: Any) -> bool:
    return isinstance(value, int)  # bool included, as in Python arithmetic


def _bounded(value: Any) -> Any:
    if _is_int(value) and value.bit_length() > MAX_INT_BITS:
        raise DecodeError(f"an integer larger than {MAX_INT_BITS} bits")
    if _size(value) > MAX_SEQUENCE_ITEMS:
        raise DecodeError(f"a value longer than {MAX_SEQUENCE_ITEMS:,} items")
    return value
