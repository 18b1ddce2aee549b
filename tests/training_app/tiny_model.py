"""A tiny causal LM for training tests: SmolLM2's real tokenizer and chat template (from the
converted embedded checkpoint) on a 2-layer, 64-wide Llama with seeded random weights. It
trains a step in well under a second on a CPU core, so the stage runners, resume and the
Celery jobs are exercised for real without the 135M model's minutes.

``tiny_model_dir`` (session fixture) builds it once per test session under a temp folder."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja")


def build_tiny_model(target: Path, *, seed: int = 0) -> Path:
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from inference.workers.local_model import ensure_local_checkpoint

    source = ensure_local_checkpoint().path
    tokenizer = AutoTokenizer.from_pretrained(source)
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = LlamaForCausalLM(config)
    target.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(target)
    for name in TOKENIZER_FILES:
        if (source / name).is_file():
            shutil.copy2(source / name, target / name)
    tokenizer.save_pretrained(target)
    return target


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield build_tiny_model(tmp_path_factory.mktemp("tiny-model") / "tiny-llama")
