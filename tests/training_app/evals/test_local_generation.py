"""Batched in-process generation gives the answers one-at-a-time generation gives, and the
answers transformers' own chat pipeline gives, on the embedded SmolLM2-135M checkpoint (the
tiny random model mostly answers special tokens, which would make the comparison empty)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inference.workers.local_model import ensure_local_checkpoint
from training_app.evals.local_generation import (
    GenerationError,
    GenerationSettings,
    generate_responses,
)


@pytest.fixture(scope="module")
def smollm2() -> Path:
    return ensure_local_checkpoint().path


PROMPTS = [
    "Hi",
    "Write a haiku about autumn scarves.",
    "Explain in one sentence why wool keeps you warm even when it is slightly damp.",
    "What sizes does the merino sweater come in, and is there a coupon today?",
]


def test_batched_answers_equal_one_at_a_time_and_keep_the_order(smollm2: Path) -> None:
    single = generate_responses(
        smollm2, PROMPTS, GenerationSettings(max_new_tokens=8, batch_size=1)
    )
    seen: list[tuple[int, int]] = []
    batched = generate_responses(
        smollm2,
        PROMPTS,
        GenerationSettings(max_new_tokens=8, batch_size=3),
        progress=lambda done, total: seen.append((done, total)),
    )
    assert batched == single
    assert all(answer for answer in batched)
    assert seen == [(3, 4), (4, 4)]


def test_the_answers_are_the_chat_pipeline_answers(smollm2: Path) -> None:
    from transformers import pipeline

    chat = pipeline("text-generation", model=str(smollm2), dtype="auto")
    reference = [
        # the pipeline leaves "content" out when the model answers EOS at once
        chat([{"role": "user", "content": p}], max_new_tokens=8, do_sample=False)[0][
            "generated_text"
        ][-1].get("content", "")
        for p in PROMPTS
    ]
    ours = generate_responses(smollm2, PROMPTS, GenerationSettings(max_new_tokens=8))
    assert ours == [answer.strip() for answer in reference]
    assert any(ours)  # not only empty answers


def test_a_stop_request_leaves_the_rest_unanswered(tiny_model_dir: Path) -> None:
    calls = iter([False, True])
    answers = generate_responses(
        tiny_model_dir,
        PROMPTS,
        GenerationSettings(max_new_tokens=4, batch_size=2),
        should_stop=lambda: next(calls),
    )
    assert sum(answer is not None for answer in answers) == 2


@pytest.mark.parametrize(
    ("field", "value"),
    [("max_new_tokens", 0), ("batch_size", 1000), ("dtype", "int8")],
)
def test_bad_settings_name_the_field(field: str, value: object) -> None:
    with pytest.raises(GenerationError, match=field):
        GenerationSettings(**{field: value})  # type: ignore[arg-type]
    assert GenerationSettings().record()["decoding"] == "greedy"
