"""Record the messages BFCL's own prompting handler builds for a sample of cases, so the
port in ``training_app/evals/bfcl/prompting.py`` can be held to them.

Run inside the reference venv (``scripts/bfcl_reference/make_venv.sh``); imports nothing of
the project. Input: BFCL case lines (``id``, ``question``, ``function``) on stdin; output:
``{"id", "messages"}`` lines on stdout, the messages exactly as bfcl-eval 2026.3.23's
``add_language_specific_hint_to_function_doc`` + ``system_prompt_pre_processing_chat_model``
make them for a prompting chat model.

    python -c "...print the sample..." | var/bfcl-reference-venv/bin/python \\
        scripts/bfcl_reference/reference_prompts.py | gzip > \\
        tests/training_app/evals/data/bfcl_reference_prompts.jsonl.gz
"""

from __future__ import annotations

import copy
import json
import sys

from bfcl_eval.model_handler.utils import system_prompt_pre_processing_chat_model
from bfcl_eval.utils import add_language_specific_hint_to_function_doc


def main() -> None:
    for line in sys.stdin:
        entry = json.loads(line)
        hinted = add_language_specific_hint_to_function_doc([copy.deepcopy(entry)])[0]
        messages = system_prompt_pre_processing_chat_model(
            hinted["question"][0], hinted["function"], hinted["id"]
        )
        print(json.dumps({"id": entry["id"], "messages": messages}))


if __name__ == "__main__":
    main()
