"""IFEval (Zhou et al., 2023, arXiv:2311.07911): the 541 prompts and a scorer whose strict and
loose verdicts are those of Google's instruction_following_eval, as lm-eval 0.4.13 carries it.

Pure Python (no Django). Apache-2.0 like the code and data it ports: see LICENSE and NOTICE
beside this file. Nothing is downloaded at run time: Punkt's English model ships in
``punkt_tab/`` and the prompts in ``data/``.

    from training_app.evals.ifeval import load_prompts, score
    prompts = load_prompts()
    result = score(prompts, {p.prompt: my_model(p.prompt) for p in prompts})
    result.accuracies.prompt_level_strict

Command line: ``python -m training_app.evals.ifeval --input-data FILE --responses FILE --out DIR``.
"""

from training_app.evals.ifeval.evaluation import (
    Accuracies,
    IFEvalResult,
    InputExample,
    OutputExample,
    accuracies,
    follow_loose,
    follow_strict,
    loose_variants,
    score,
    score_response,
)
from training_app.evals.ifeval.instructions import Instruction, InstructionArgumentError
from training_app.evals.ifeval.records import (
    InputDataError,
    load_prompts,
    parse_input_data,
    parse_responses,
    read_input_data,
    read_responses,
)
from training_app.evals.ifeval.registry import (
    INSTRUCTION_DICT,
    INSTRUCTION_IDS,
    UnknownInstruction,
    build_instruction,
)
from training_app.evals.ifeval.text import clear_caches

__all__ = [
    "INSTRUCTION_DICT",
    "INSTRUCTION_IDS",
    "Accuracies",
    "IFEvalResult",
    "InputDataError",
    "InputExample",
    "Instruction",
    "InstructionArgumentError",
    "OutputExample",
    "UnknownInstruction",
    "accuracies",
    "build_instruction",
    "clear_caches",
    "follow_loose",
    "follow_strict",
    "load_prompts",
    "loose_variants",
    "parse_input_data",
    "parse_responses",
    "read_input_data",
    "read_responses",
    "score",
    "score_response",
]
