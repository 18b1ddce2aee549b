"""Scoring one model output for one BFCL case, as BFCL's eval runner scores it.

``score_result(category, functions, ground_truth, result)`` takes the output either in BFCL's
decoded form (a list of ``{function_name: {argument: value}}``) or as a string of Python
calls (decoded by ``decode.decode_python_calls``, BFCL's prompting decoder), and follows
``eval_runner._evaluate_single_ast_entry`` / ``_evaluate_single_relevance_entry``:

- call categories: an undecodable string is invalid (``ast_decoder:decoder_failed``), a
  decoded output that is not a list of one-pair ``{name: {arguments}}`` dicts is invalid
  (``ast_decoder:decoder_wrong_output_format``), anything else goes to BFCL's AST rule
  (``checker.check_calls``);
- irrelevance categories: correct when no call is made: the string does not decode, or the
  decoded output is empty (``[]``, ``[{}]``, or not in the call format; ``utils.is_empty_output``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from harness_app.hsa.bfcl_data import NO_CALL_CATEGORIES
from training_app.evals.bfcl.checker import VALID, Verdict, check_calls
from training_app.evals.bfcl.decode import DecodeError, decode_python_calls

CALL_FORMAT: Final = "[{function_name: {argument: value}}, ...]"


def is_call_format(decoded: Any) -> bool:
    """BFCL's ``utils.is_function_calling_format_output`` (``[]`` included)."""
    return type(decoded) is list and all(
        type(item) is dict and len(item) == 1 and type(next(iter(item.values()))) is dict
        for item in decoded
    )


def is_empty_output(decoded: Any) -> bool:
    """BFCL's ``utils.is_empty_output``: not in the call format, ``[]`` or ``[{}]``."""
    return not is_call_format(decoded) or len(decoded) == 0


def score_result(
    category: str,
    functions: Sequence[Mapping[str, Any]],
    ground_truth: Sequence[Mapping[str, Any]],
    result: Any,
    *,
    underscore_to_dot: bool = False,
) -> Verdict:
    """BFCL's verdict on one output (see module doc). ``underscore_to_dot`` is BFCL's
    setting for FC models whose API forbids dots in names (expected names then carry
    underscores); prompting models, the default, compare names as they are."""
    decoded = result
    if category in NO_CALL_CATEGORIES:
        if isinstance(result, str):
            try:
                decoded = decode_python_calls(result)
            except DecodeError:
                return VALID  # no call decodes from it
        if is_empty_output(decoded):
            return VALID
        names = ", ".join(repr(next(iter(call))) for call in decoded)
        return Verdict(
            False,
            f"a function call where none is wanted: {names}",
            "irrelevance_error:decoder_success",
        )
    if isinstance(result, str):
        try:
            decoded = decode_python_calls(result)
        except DecodeError as exc:
            return Verdict(False, f"undecodable output: {exc}", "ast_decoder:decoder_failed")
    if not is_call_format(decoded):
        return Verdict(
            False,
            f"the decoded output is not in the call format {CALL_FORMAT}: {_short(decoded)}",
            "ast_decoder:decoder_wrong_output_format",
        )
    return check_calls(
        category, functions, decoded, ground_truth, underscore_to_dot=underscore_to_dot
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."
