"""Batched greedy generation from a local checkpoint, in process: the fast path for scoring a
local model on prompt sets such as IFEval (the embedded server answers one request at a time:
541 IFEval prompts took 31 minutes through it).

It renders each prompt with the checkpoint's own chat template (``add_generation_prompt``, as
``transformers serve`` does for a chat completion), loads the weights with ``dtype="auto"`` (the
serving profile's dtype), pads on the left and decodes only the new tokens. Prompts are
batched by length, so a batch pads little, and the answers come back in the prompts' order.
``GenerationSettings`` is what an eval run records.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


class GenerationError(ValueError):
    """Settings that cannot generate; the message names the field."""


@dataclass(frozen=True)
class GenerationSettings:
    """Greedy decoding with the same budget for every model (``max_new_tokens`` >= 256 for
    IFEval, so length instructions are not failed by truncation)."""

    max_new_tokens: int = 512
    batch_size: int = 8
    dtype: str = "auto"
    system_prompt: str = ""

    def __post_init__(self) -> None:
        if not 1 <= self.max_new_tokens <= 8192:
            raise GenerationError("max_new_tokens must be between 1 and 8192")
        if not 1 <= self.batch_size <= 256:
            raise GenerationError("batch_size must be between 1 and 256")
        if self.dtype not in ("auto", "float32", "bfloat16", "float16"):
            raise GenerationError("dtype must be auto, float32, bfloat16 or float16")

    def record(self) -> dict[str, Any]:
        """The settings as stored with a run (greedy is implied: no sampling parameters)."""
        return {"decoding": "greedy", **asdict(self)}


def chat_messages(prompt: str, settings: GenerationSettings) -> list[dict[str, str]]:
    messages = [{"role": "user", "content": prompt}]
    if settings.system_prompt:
        messages.insert(0, {"role": "system", "content": settings.system_prompt})
    return messages


def generate_responses(
    model_dir: Path,
    prompts: Sequence[str],
    settings: GenerationSettings = GenerationSettings(),
    *,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[str | None]:
    """One greedy answer per prompt, in order. ``progress(done, total)`` after each batch;
    when ``should_stop()`` turns true the remaining prompts are left ``None``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir, padding_side="left")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    dtype: Any = settings.dtype if settings.dtype == "auto" else getattr(torch, settings.dtype)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype)
    model.eval()
    rendered = [
        tokenizer.apply_chat_template(
            chat_messages(prompt, settings), tokenize=False, add_generation_prompt=True
        )
        for prompt in prompts
    ]
    lengths = [len(tokenizer(text, add_special_tokens=False)["input_ids"]) for text in rendered]
    order = sorted(range(len(prompts)), key=lambda i: lengths[i])
    answers: list[str | None] = [None] * len(prompts)
    done = 0
    for start in range(0, len(order), settings.batch_size):
        if should_stop is not None and should_stop():
            break
        batch = order[start : start + settings.batch_size]
        encoded = tokenizer(
            [rendered[i] for i in batch],
            return_tensors="pt",
            padding=True,
            add_special_tokens=False,
        )
        with torch.inference_mode():
            output = model.generate(
                **encoded,
                max_new_tokens=settings.max_new_tokens,
                do_sample=False,
                temperature=None,
                top_p=None,
                top_k=None,
                pad_token_id=tokenizer.pad_token_id,
            )
        new_tokens = output[:, encoded["input_ids"].shape[1] :]
        for index, tokens in zip(batch, new_tokens, strict=True):
            answers[index] = str(tokenizer.decode(tokens, skip_special_tokens=True)).strip()
        done += len(batch)
        if progress is not None:
            progress(done, len(prompts))
    return answers
