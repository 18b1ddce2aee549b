"""A local checkpoint as the agent runtime's ``ChatModel``, batching concurrent calls.

QA and BFCL eval runs call ``complete(messages, ...)`` from a pool of worker threads (one
item each). Here each call is queued, and one generator thread takes whatever calls are
waiting (up to ``max_batch``, gathering for ``gather_s`` after the first), renders each with
the checkpoint's chat template (``add_generation_prompt``, as ``transformers serve`` does),
pads on the left and runs one greedy ``generate`` for all of them, then hands each caller the
new tokens of its own row, cut at the end of turn and at its own ``max_tokens``. On 2 CPU
cores a batch of 16 decodes ~4x the tokens per second of one sequence (docs/RESULTS.md).

Greedy only (an eval run's decoding): a call with ``temperature > 0`` is refused. Text tool
mode only (SmolLM2 has no tool-call parser). Left padding with an attention mask gives the
same greedy answer as one sequence alone up to floating-point rounding of the padded
matmuls, so an answer can differ in rare near-ties; a run records its batch size.

``close()`` stops the generator thread; calls after it fail as ``unavailable``.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inference.agents.model_answer import AnswerTimings, AnswerUsage, ModelAnswer
from inference.agents.model_port import ModelCallFailed


@dataclass
class _Call:
    messages: list[dict[str, str]]
    max_tokens: int
    done: threading.Event = field(default_factory=threading.Event)
    answer: ModelAnswer | None = None
    error: ModelCallFailed | None = None


@dataclass
class BatchStats:
    """What the generator did: batches run, calls answered, the largest batch."""

    batches: int = 0
    calls: int = 0
    largest: int = 0
    generated_tokens: int = 0
    seconds: float = 0.0


class BatchedLocalChatModel:
    def __init__(
        self,
        model_dir: Path | str,
        *,
        name: str = "local",
        max_batch: int = 16,
        gather_s: float = 0.05,
        dtype: str = "auto",
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if not 1 <= max_batch <= 256:
            raise ValueError("max_batch must be between 1 and 256")
        self.name = name
        self.max_batch = max_batch
        self.gather_s = gather_s
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir, padding_side="left")
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        torch_dtype: Any = dtype if dtype == "auto" else getattr(torch, dtype)
        self.model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch_dtype)
        self.model.eval()
        self.stats = BatchStats()
        self._calls: queue.Queue[_Call | None] = queue.Queue()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="batched-generate", daemon=True)
        self._thread.start()

    # --- ChatModel -------------------------------------------------------------------------

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None,
        max_tokens: int,
        temperature: float,
        timeout_s: float,
    ) -> ModelAnswer:
        """Blocks until the call's batch is generated (``timeout_s`` is not applied: a local
        run has no network to wait on, and a queued call's time is the batch's)."""
        if tools:
            raise ModelCallFailed("protocol", "a local checkpoint runs in text tool mode only")
        if temperature > 0:
            raise ModelCallFailed("protocol", "a local eval model decodes greedily only")
        if self._closed.is_set():
            raise ModelCallFailed("unavailable", "the local model is closed")
        call = _Call(
            [{"role": m["role"], "content": m.get("content") or ""} for m in messages],
            max(1, int(max_tokens)),
        )
        self._calls.put(call)
        call.done.wait()
        if call.error is not None:
            raise call.error
        assert call.answer is not None
        return call.answer

    def close(self) -> None:
        self._closed.set()
        self._calls.put(None)
        self._thread.join(timeout=60)

    def __enter__(self) -> BatchedLocalChatModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the generator thread --------------------------------------------------------------

    def _serve(self) -> None:
        while True:
            first = self._calls.get()
            if first is None:
                break
            batch = [first]
            deadline = time.monotonic() + self.gather_s
            stop = False
            while len(batch) < self.max_batch:
                try:
                    more = self._calls.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                batch.append(more)
            self._run(batch)
            if stop:
                break
        while True:  # fail whatever is still queued
            try:
                left = self._calls.get_nowait()
            except queue.Empty:
                return
            if left is not None:
                left.error = ModelCallFailed("unavailable", "the local model is closed")
                left.done.set()

    def _run(self, batch: list[_Call]) -> None:
        try:
            answers = self.generate([c.messages for c in batch], [c.max_tokens for c in batch])
        except Exception as exc:  # every caller gets the failure; the thread lives on
            for call in batch:
                call.error = ModelCallFailed("unavailable", f"{type(exc).__name__}: {exc}")
                call.done.set()
            return
        for call, answer in zip(batch, answers, strict=True):
            call.answer = answer
            call.done.set()

    def generate(
        self, conversations: list[list[dict[str, str]]], max_tokens: list[int]
    ) -> list[ModelAnswer]:
        """One greedy answer per conversation (the batch, in order)."""
        import torch

        started = time.perf_counter()
        rendered = [
            self.tokenizer.apply_chat_template(m, tokenize=False, add_generation_prompt=True)
            for m in conversations
        ]
        encoded = self.tokenizer(
            rendered, return_tensors="pt", padding=True, add_special_tokens=False
        )
        with torch.inference_mode():
            output = self.model.generate(
                **encoded,
                max_new_tokens=max(max_tokens),
                do_sample=False,
                temperature=None,
                top_p=None,
                top_k=None,
                pad_token_id=self.tokenizer.pad_token_id,
            )
        width = encoded["input_ids"].shape[1]
        prompt_lengths = encoded["attention_mask"].sum(dim=1).tolist()
        eos = self.tokenizer.eos_token_id
        elapsed = time.perf_counter() - started
        answers = []
        for row, limit, prompt_tokens in zip(output, max_tokens, prompt_lengths, strict=True):
            tokens = row[width:].tolist()[:limit]
            finish = "length"
            if eos in tokens:
                tokens = tokens[: tokens.index(eos)]
                finish = "stop"
            self.stats.generated_tokens += len(tokens)
            answers.append(
                ModelAnswer(
                    content=str(self.tokenizer.decode(tokens, skip_special_tokens=True)),
                    finish_reason=finish,
                    usage=AnswerUsage(int(prompt_tokens), len(tokens)),
                    timings=AnswerTimings(total_s=elapsed),
                )
            )
        self.stats.batches += 1
        self.stats.calls += len(conversations)
        self.stats.largest = max(self.stats.largest, len(conversations))
        self.stats.seconds += elapsed
        return answers
