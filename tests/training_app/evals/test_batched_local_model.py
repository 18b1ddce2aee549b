"""The batching in-process ChatModel on the embedded SmolLM2-135M: calls made at once from
several threads are generated as one batch, and each caller gets the answer it would get
alone (greedy, left padding with an attention mask), cut at its own ``max_tokens``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from inference.agents.model_port import ModelCallFailed
from inference.workers.local_model import ensure_local_checkpoint
from training_app.evals.batched_local_model import BatchedLocalChatModel

CONVERSATIONS = [
    [{"role": "user", "content": "Hi"}],
    [
        {"role": "system", "content": "You host a live stream selling sweaters."},
        {"role": "user", "content": "is the merino sweater itchy?"},
    ],
    [{"role": "user", "content": "Write a haiku about autumn scarves."}],
    [{"role": "user", "content": "What is 2 + 2? Answer with one number."}],
]


@pytest.fixture(scope="module")
def smollm2() -> Path:
    return ensure_local_checkpoint().path


@pytest.fixture
def model(smollm2: Path) -> Iterator[BatchedLocalChatModel]:
    with BatchedLocalChatModel(smollm2, max_batch=4, gather_s=0.5) as chat:
        yield chat


def _ask(chat: BatchedLocalChatModel, messages: list[dict[str, str]], tokens: int = 12) -> str:
    answer = chat.complete(messages, tools=None, max_tokens=tokens, temperature=0.0, timeout_s=5)
    return answer.content


def test_concurrent_calls_share_a_batch_and_get_their_own_answers(
    model: BatchedLocalChatModel,
) -> None:
    alone = [_ask(model, c) for c in CONVERSATIONS]  # one at a time: batches of one
    assert model.stats.batches == 4 and model.stats.largest == 1
    together: list[str | None] = [None] * len(CONVERSATIONS)
    start = threading.Barrier(len(CONVERSATIONS))

    def worker(index: int) -> None:
        start.wait()
        together[index] = _ask(model, CONVERSATIONS[index])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(CONVERSATIONS))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert model.stats.largest > 1, "the concurrent calls were not batched"
    assert together == alone
    assert all(answer for answer in alone)


def test_each_call_is_cut_at_its_own_max_tokens(model: BatchedLocalChatModel) -> None:
    answers = model.generate([CONVERSATIONS[2], CONVERSATIONS[2]], [3, 12])
    assert answers[0].usage.completion_tokens == 3 and answers[0].finish_reason == "length"
    assert answers[1].usage.completion_tokens > 3
    assert answers[1].content.startswith(answers[0].content)
    assert answers[0].usage.prompt_tokens == answers[1].usage.prompt_tokens > 0


def test_sampling_native_tools_and_a_closed_model_are_refused(smollm2: Path) -> None:
    chat = BatchedLocalChatModel(smollm2, max_batch=2)
    with pytest.raises(ModelCallFailed, match="greedily"):
        chat.complete(CONVERSATIONS[0], tools=None, max_tokens=4, temperature=0.7, timeout_s=5)
    with pytest.raises(ModelCallFailed, match="text tool mode"):
        chat.complete(
            CONVERSATIONS[0],
            tools=[{"type": "function", "function": {"name": "x"}}],
            max_tokens=4,
            temperature=0.0,
            timeout_s=5,
        )
    chat.close()
    with pytest.raises(ModelCallFailed) as caught:
        _ask(chat, CONVERSATIONS[0])
    assert caught.value.kind == "unavailable"
    with pytest.raises(ValueError, match="max_batch"):
        BatchedLocalChatModel(smollm2, max_batch=0)
