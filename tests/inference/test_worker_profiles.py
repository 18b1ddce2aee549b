"""Launch commands: every flag pinned, so a changed command line is a reviewed change."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from inference.workers.profiles import (
    OFFLINE_ENV,
    MtpConfig,
    VllmProfile,
    qwen_moe_h20_profile,
    served_model_id,
    transformers_serve_command,
    vllm_serve_command,
)
from inference.workers.serve_local import parse_args, server_environment


def test_transformers_serve_command_pins_the_local_checkpoint_on_cpu(tmp_path: Path) -> None:
    command = transformers_serve_command(tmp_path / "ckpt", "127.0.0.1", 8011)
    assert command == [
        sys.executable,
        "-m",
        "transformers.cli.transformers",
        "serve",
        str((tmp_path / "ckpt").resolve()),
        "--host",
        "127.0.0.1",
        "--port",
        "8011",
        "--device",
        "cpu",
        "--dtype",
        "auto",
        "--no-continuous-batching",
        "--log-level",
        "warning",
    ]


def test_served_model_id_is_the_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert served_model_id("var/models/m") == str(tmp_path / "var" / "models" / "m")


def test_vllm_command_for_the_production_profile() -> None:
    command = vllm_serve_command(qwen_moe_h20_profile("/models/hat-ckpt-42"))
    assert command == [
        "vllm",
        "serve",
        "/models/hat-ckpt-42",
        "--served-model-name",
        "hat-host",
        "--host",
        "0.0.0.0",
        "--port",
        "8000",
        "--dtype",
        "auto",
        "--tensor-parallel-size",
        "1",
        "--gpu-memory-utilization",
        "0.9",
        "--max-model-len",
        "32768",
        "--max-num-seqs",
        "4",
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "qwen3_coder",
        "--reasoning-parser",
        "qwen3",
        "--speculative-config",
        '{"method":"mtp","num_speculative_tokens":1}',
    ]
    speculative = command[command.index("--speculative-config") + 1]
    assert json.loads(speculative) == {"method": "mtp", "num_speculative_tokens": 1}


def test_vllm_command_leaves_features_off_when_not_configured() -> None:
    profile = VllmProfile(
        model="Qwen/Qwen3-8B",
        served_model_name="react",
        port=8100,
        tool_call_parser=None,
        enable_auto_tool_choice=False,
        reasoning_parser=None,
        mtp=None,
        max_model_len=None,
        tensor_parallel_size=2,
        gpu_memory_utilization=0.85,
        extra_args=("--enforce-eager",),
    )
    command = vllm_serve_command(profile)
    for flag in (
        "--tool-call-parser",
        "--enable-auto-tool-choice",
        "--reasoning-parser",
        "--speculative-config",
        "--max-model-len",
        "--max-num-seqs",
    ):
        assert flag not in command
    assert command[-1] == "--enforce-eager"
    assert command[command.index("--tensor-parallel-size") + 1] == "2"
    assert command[command.index("--gpu-memory-utilization") + 1] == "0.85"


def test_hermes_parser_for_qwen3_with_two_speculative_tokens() -> None:
    profile = VllmProfile(
        model="Qwen/Qwen3-30B-A3B", served_model_name="m", mtp=MtpConfig(num_speculative_tokens=2)
    )
    command = vllm_serve_command(profile)
    assert command[command.index("--tool-call-parser") + 1] == "hermes"
    assert json.loads(command[command.index("--speculative-config") + 1]) == {
        "method": "mtp",
        "num_speculative_tokens": 2,
    }


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"gpu_memory_utilization": 0.0}, "gpu_memory_utilization"),
        ({"gpu_memory_utilization": 1.2}, "gpu_memory_utilization"),
        ({"tensor_parallel_size": 0}, "tensor_parallel_size"),
        ({"tool_call_parser": None}, "needs a tool_call_parser"),
        ({"mtp": MtpConfig(num_speculative_tokens=0)}, "num_speculative_tokens"),
    ],
)
def test_invalid_profiles_are_rejected(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        VllmProfile(model="m", served_model_name="m", **overrides)  # type: ignore[arg-type]


def test_serve_local_defaults_and_offline_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HAT_LOCAL_MODEL_DIR", raising=False)
    args = parse_args([])
    assert (args.host, args.port) == ("127.0.0.1", 8011)
    assert args.model_dir.parts[-3:] == ("var", "models", "smollm2-135m-instruct")
    monkeypatch.setenv("HAT_LOCAL_MODEL_DIR", "/tmp/elsewhere")
    assert parse_args(["--port", "9000"]).model_dir == Path("/tmp/elsewhere")
    env = server_environment({"PATH": "/bin", "HF_HUB_OFFLINE": "0"})
    assert env["PATH"] == "/bin"
    assert {k: env[k] for k in OFFLINE_ENV} == OFFLINE_ENV
    assert env["HF_HUB_DISABLE_UPDATE_CHECK"] == "1"  # the CLI would ask PyPI otherwise
