"""`manage.py vllm_command`: the exact `vllm serve` line for an endpoint."""

from __future__ import annotations

import shlex
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from inference.workers.profiles import (
    VllmProfile,
    qwen_moe_h20_profile,
    vllm_serve_command,
)
from training_app.models import ModelEndpoint

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command("vllm_command", *args, stdout=out)
    return out.getvalue().strip()


def test_a_qwen_moe_endpoint_gets_the_h20_profile() -> None:
    ModelEndpoint.objects.create(
        name="qwen-moe", base_url="http://10.0.0.5:8001/v1", model_name="Qwen/Qwen3.6-35B-A3B"
    )
    line = run("--endpoint", "qwen-moe")
    expected = vllm_serve_command(
        qwen_moe_h20_profile(
            "Qwen/Qwen3.6-35B-A3B", served_model_name="Qwen/Qwen3.6-35B-A3B", port=8001
        )
    )
    assert shlex.split(line) == expected
    assert line == shlex.join(expected)
    assert '--speculative-config \'{"method":"mtp","num_speculative_tokens":1}\'' in line
    assert "--max-num-seqs 4" in line and "--tool-call-parser qwen3_coder" in line


def test_gpu_memory_utilization_and_weights_can_be_overridden() -> None:
    ModelEndpoint.objects.create(
        name="qwen-moe", base_url="http://10.0.0.5:8001/v1", model_name="hat-host"
    )
    line = run(
        "--endpoint",
        "qwen-moe",
        "--gpu-memory-utilization",
        "0.85",
        "--model",
        "/models/qwen3.6-35b-a3b",
    )
    argv = shlex.split(line)
    assert argv[:3] == ["vllm", "serve", "/models/qwen3.6-35b-a3b"]
    assert argv[argv.index("--gpu-memory-utilization") + 1] == "0.85"
    assert argv[argv.index("--served-model-name") + 1] == "hat-host"


def test_another_model_gets_a_plain_profile_from_the_endpoint() -> None:
    ModelEndpoint.objects.create(
        name="small",
        base_url="http://127.0.0.1:9000/v1",
        model_name="HuggingFaceTB/SmolLM2-1.7B-Instruct",
        tool_mode="text",
        max_concurrency=16,
    )
    line = run("--endpoint", "small")
    expected = vllm_serve_command(
        VllmProfile(
            model="HuggingFaceTB/SmolLM2-1.7B-Instruct",
            served_model_name="HuggingFaceTB/SmolLM2-1.7B-Instruct",
            port=9000,
            tool_call_parser=None,
            enable_auto_tool_choice=False,
            reasoning_parser=None,
            max_model_len=None,
            max_num_seqs=16,
        )
    )
    assert shlex.split(line) == expected
    assert "--tool-call-parser" not in line and "--speculative-config" not in line


def test_the_api_key_comes_from_its_variable_never_the_command_line() -> None:
    ModelEndpoint.objects.create(
        name="keyed",
        base_url="http://h:8000/v1",
        model_name="Qwen/Qwen2.5-7B-Instruct",
        api_key_ref="VLLM_KEY",
    )
    line = run("--endpoint", "keyed")
    assert line.startswith('VLLM_API_KEY="${VLLM_KEY}" vllm serve Qwen/Qwen2.5-7B-Instruct ')
    assert "--api-key" not in line


def test_unknown_endpoint_names_the_known_ones() -> None:
    ModelEndpoint.objects.create(name="alpha", base_url="http://x:1/v1", model_name="m")
    ModelEndpoint.objects.create(name="beta", base_url="http://x:2/v1", model_name="m")
    with pytest.raises(
        CommandError, match="no model endpoint named 'gamma'; known endpoints: alpha, beta"
    ):
        run("--endpoint", "gamma")


def test_bad_utilization_and_missing_weights_are_command_errors() -> None:
    ModelEndpoint.objects.create(name="pinned", base_url="http://x:1/v1", model_name="")
    with pytest.raises(CommandError, match="has no model name"):
        run("--endpoint", "pinned")
    ModelEndpoint.objects.create(name="m", base_url="http://x:1/v1", model_name="m")
    with pytest.raises(CommandError, match="gpu_memory_utilization must be in"):
        run("--endpoint", "m", "--gpu-memory-utilization", "1.5")
