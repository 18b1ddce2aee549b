"""Launch commands for the model servers, as pure functions of a profile.

Keeping the command lines here (not in shell scripts, Procfiles or Celery tasks) gives one
place that says how a worker starts, lets tests pin every flag, and lets the console show an
operator exactly what a model endpoint runs. Nothing here starts a process.

Flag names follow the current vLLM CLI (``vllm serve --help``): ``--speculative-config``
takes a JSON object such as ``{"method": "mtp", "num_speculative_tokens": 1}``;
``--tool-call-parser`` only takes effect with ``--enable-auto-tool-choice``.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Environment both servers need to stay off the network: no hub downloads, no
# "is there a newer version" check (the transformers CLI asks PyPI at start-up otherwise).
OFFLINE_ENV: dict[str, str] = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_UPDATE_CHECK": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}


def served_model_id(model_dir: Path | str) -> str:
    """The model id ``transformers serve`` answers to when pinned to a local directory:
    the absolute path, exactly as passed on its command line. A request naming any other
    model is rejected with HTTP 400, so clients must send this id (or none)."""
    return str(Path(model_dir).resolve())


def transformers_serve_command(
    model_dir: Path | str, host: str = "127.0.0.1", port: int = 8011
) -> list[str]:
    """``transformers serve`` pinned to one local checkpoint on CPU.

    Pinning (the positional FORCE_MODEL) preloads the model before the port opens, so
    "port answers" means "ready", and it refuses requests for other models instead of
    trying to download them. Runs through ``sys.executable -m`` so the venv's transformers
    is used whatever PATH says.
    """
    return [
        sys.executable,
        "-m",
        "transformers.cli.transformers",
        "serve",
        served_model_id(model_dir),
        "--host",
        host,
        "--port",
        str(port),
        "--device",
        "cpu",
        "--dtype",
        "auto",
        "--no-continuous-batching",
        "--log-level",
        "warning",
    ]


@dataclass(frozen=True)
class MtpConfig:
    """Multi-token-prediction speculative decoding with the model's own MTP head.

    The report measured it on one H20: worth it at concurrency 1 (P50 3.4 s), no longer at
    concurrency 4-8, where the GPU is compute-bound and rejected drafts cost more than they
    save. ``num_speculative_tokens`` 1-2 is the usual range for Qwen MTP heads.
    """

    num_speculative_tokens: int = 1
    method: str = "mtp"

    def as_json(self) -> str:
        config: dict[str, Any] = {
            "method": self.method,
            "num_speculative_tokens": self.num_speculative_tokens,
        }
        return json.dumps(config, separators=(",", ":"))


@dataclass(frozen=True)
class VllmProfile:
    """Everything ``vllm serve`` needs for one model endpoint.

    ``tool_call_parser`` must match the model's tool-call markup: ``hermes`` for JSON inside
    ``<tool_call>`` (Qwen2.5, Qwen3), ``qwen3_coder`` for the XML ``<function=...>`` form
    (Qwen3-Coder, Qwen3.5/3.6). ``reasoning_parser`` (``qwen3``) moves ``<think>`` text into
    ``reasoning_content``. None leaves a feature off.
    """

    model: str
    served_model_name: str
    host: str = "0.0.0.0"
    port: int = 8000
    tool_call_parser: str | None = "hermes"
    enable_auto_tool_choice: bool = True
    reasoning_parser: str | None = "qwen3"
    mtp: MtpConfig | None = None
    max_model_len: int | None = 32768
    gpu_memory_utilization: float = 0.90
    tensor_parallel_size: int = 1
    max_num_seqs: int | None = None
    dtype: str = "auto"
    api_key_env: str | None = None
    extra_args: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not 0.0 < self.gpu_memory_utilization <= 1.0:
            raise ValueError("gpu_memory_utilization must be in (0, 1]")
        if self.tensor_parallel_size < 1:
            raise ValueError("tensor_parallel_size must be >= 1")
        if self.enable_auto_tool_choice and not self.tool_call_parser:
            raise ValueError("enable_auto_tool_choice needs a tool_call_parser")
        if self.mtp is not None and self.mtp.num_speculative_tokens < 1:
            raise ValueError("num_speculative_tokens must be >= 1")


def vllm_serve_command(profile: VllmProfile) -> list[str]:
    """The ``vllm serve`` argv for ``profile``. An API key is referenced by environment
    variable name, never placed on the command line (it would show in ``ps``)."""
    command = [
        "vllm",
        "serve",
        profile.model,
        "--served-model-name",
        profile.served_model_name,
        "--host",
        profile.host,
        "--port",
        str(profile.port),
        "--dtype",
        profile.dtype,
        "--tensor-parallel-size",
        str(profile.tensor_parallel_size),
        "--gpu-memory-utilization",
        f"{profile.gpu_memory_utilization:g}",
    ]
    if profile.max_model_len is not None:
        command += ["--max-model-len", str(profile.max_model_len)]
    if profile.max_num_seqs is not None:
        command += ["--max-num-seqs", str(profile.max_num_seqs)]
    if profile.tool_call_parser:
        if profile.enable_auto_tool_choice:
            command.append("--enable-auto-tool-choice")
        command += ["--tool-call-parser", profile.tool_call_parser]
    if profile.reasoning_parser:
        command += ["--reasoning-parser", profile.reasoning_parser]
    if profile.mtp is not None:
        command += ["--speculative-config", profile.mtp.as_json()]
    command += list(profile.extra_args)
    return command


def qwen_moe_h20_profile(
    model: str = "Qwen/Qwen3.6-35B-A3B", *, served_model_name: str = "hat-host", port: int = 8000
) -> VllmProfile:
    """The report's production shape: the 35B-A3B MoE on one H20 (96 GB), MTP on, tuned for
    concurrency 1 (``max_num_seqs`` 4: beyond that MTP stops paying and a second replica is
    the better way to add capacity). Qwen3.6 writes tool calls in the XML form, hence
    ``qwen3_coder``; switch to ``hermes`` for a Qwen3 / Qwen2.5 checkpoint."""
    return VllmProfile(
        model=model,
        served_model_name=served_model_name,
        port=port,
        tool_call_parser="qwen3_coder",
        reasoning_parser="qwen3",
        mtp=MtpConfig(num_speculative_tokens=1),
        max_model_len=32768,
        gpu_memory_utilization=0.90,
        tensor_parallel_size=1,
        max_num_seqs=4,
    )
