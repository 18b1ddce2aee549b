"""BFCL v4 single-turn scoring (pure Python, no Django): BFCL's AST rule and its prompting
decoder, ported from ``bfcl-eval`` 2026.3.23 and held to the official checker's recorded
verdicts (docs/EVALUATION_BFCL.md).

    verdict = score_result("parallel", functions, ground_truth, "[f(a=1), g(b='x')]")
    verdict.valid, verdict.error, verdict.error_type

CLI: ``python -m training_app.evals.bfcl --category NAME --results FILE --out FILE
[--augmented FILE]``.
"""

from harness_app.hsa.bfcl_data import CATEGORIES, NO_CALL_CATEGORIES
from training_app.evals.bfcl.cases import (
    BfclCase,
    BfclInputError,
    CaseSet,
    load_augmented_cases,
    load_cases,
)
from training_app.evals.bfcl.checker import (
    PYTHON_TYPE_MAPPING,
    Verdict,
    check_calls,
    check_parallel,
    check_simple_call,
    standardize_string,
)
from training_app.evals.bfcl.decode import DecodeError, decode_python_calls
from training_app.evals.bfcl.scoring import is_call_format, is_empty_output, score_result

__all__ = [
    "CATEGORIES",
    "NO_CALL_CATEGORIES",
    "PYTHON_TYPE_MAPPING",
    "BfclCase",
    "BfclInputError",
    "CaseSet",
    "DecodeError",
    "Verdict",
    "check_calls",
    "check_parallel",
    "check_simple_call",
    "decode_python_calls",
    "is_call_format",
    "is_empty_output",
    "load_augmented_cases",
    "load_cases",
    "score_result",
    "standardize_string",
]
