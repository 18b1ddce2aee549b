"""The messages BFCL sends a prompting (non-FC) chat model, ported from ``bfcl-eval``
2026.3.23 (Apache-2.0): ``_func_doc_language_specific_pre_processing`` (a Python hint on
every function description), ``formulate_system_prompt`` with the default format
``ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=classic``
and ``system_prompt_pre_processing_chat_model`` (the system prompt first, or prepended to the
question's own system message). The model's text answer is then scored by
``scoring.score_result`` exactly as BFCL's runner scores a prompting model.

Only the Python categories exist in the shipped data, so the Java/JavaScript parameter
rewrites are not ported. The template's missing space between persona and task
("functions.You are") is BFCL's own and kept.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

PYTHON_HINT = " Note that the provided function is in Python 3 syntax."
_PERSONA = "You are an expert in composing functions."
_TASK = (
    "You are given a question and a set of possible functions. Based on the question, you "
    "will need to make one or more function/tool calls to achieve the purpose. If none of the "
    "functions can be used, point it out. If the given question lacks the parameters required "
    "by the function, also point it out."
)
_OUTPUT_FORMAT = (
    "[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]"
)
_TOOL_CALL_NO_TAG = (
    "You should only return the function calls in your response.\n\nIf you decide to invoke "
    "any of the function(s), you MUST put it in the format of {output_format}. {param_types} "
    "You SHOULD NOT include any other text in the response."
)
_MULTITURN = (
    "At each turn, you should try your best to complete the tasks requested by the user within "
    "the current turn. Continue to output functions to call until you have fulfilled the user's "
    "request to the best of your ability. Once you have no more functions to call, the system "
    "will consider the current turn complete and proceed to the next turn or task."
)
_AVAILABLE_TOOLS = (
    "Here is a list of functions in {format} format that you can invoke.\n{functions}\n"
)
_PLAINTEXT = "{persona}{task}\n\n{tool_call_format}\n\n{multiturn_behavior}\n\n{available_tools}"


def with_language_hint(functions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """BFCL's Python hint appended to each function's description (a copy)."""
    hinted = copy.deepcopy([dict(f) for f in functions])
    for function in hinted:
        function["description"] = function["description"] + PYTHON_HINT
    return hinted


def system_prompt(functions: Sequence[Mapping[str, Any]]) -> str:
    """BFCL's default system prompt for ``functions`` (already hinted)."""
    return _PLAINTEXT.format(
        persona=_PERSONA,
        task=_TASK,
        tool_call_format=_TOOL_CALL_NO_TAG.format(output_format=_OUTPUT_FORMAT, param_types=""),
        multiturn_behavior=_MULTITURN,
        available_tools=_AVAILABLE_TOOLS.format(
            format="json", functions=json.dumps(list(functions), indent=4)
        ),
    )


def prompting_messages(
    first_turn: Sequence[Mapping[str, Any]], functions: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The chat messages of a single-turn case: its first turn with BFCL's system prompt."""
    messages = [dict(m) for m in first_turn]
    prompt = system_prompt(with_language_hint(functions))
    if messages and messages[0].get("role") == "system":
        messages[0]["content"] = prompt + "\n\n" + str(messages[0]["content"])
    else:
        messages.insert(0, {"role": "system", "content": prompt})
    return messages
