"""The GPU profile: what a Celery ``train`` worker on a GPU machine runs instead of the CPU
profile's in-process trainer.

One stage becomes ``accelerate launch --config_file accelerate.yaml -m
training_app.pipeline.stage_cli --job job.json`` (one process per GPU, bf16, DeepSpeed ZeRO-3
so a MoE backbone's parameters, gradients and optimizer state are sharded across GPUs), and
the sampling-heavy stages (General OPD, HSA-RL) generate with TRL's vLLM integration:

- ``colocate``: vLLM runs inside each training process and shares its GPU
  (``vllm_gpu_memory_utilization`` of it); nothing else to start;
- ``server``: ``trl vllm-serve`` runs on GPUs set apart for it (``CUDA_VISIBLE_DEVICES``) and
  the trainers reach it at ``vllm_server_host:vllm_server_port``; the trainers then use the
  remaining GPUs.

``write_bundle`` writes the files and the commands; the tests parse them with accelerate's
own config loader and launch parser, since no GPU is here to run them.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from training_app.pipeline.contract import STAGE_ORDER, StageKind

VllmMode = Literal["colocate", "server"]
# Stages that sample from the policy while training, and so can generate with vLLM.
SAMPLING_STAGES: frozenset[str] = frozenset({"opd", "hsa_rl"})


class GpuProfileError(ValueError):
    """A profile that cannot run; the message names the field."""


@dataclass(frozen=True)
class GpuProfile:
    gpus_per_machine: int = 8
    machines: int = 1
    zero_stage: int = 3
    mixed_precision: Literal["bf16", "fp16", "no"] = "bf16"
    activation_checkpointing: bool = True
    offload_optimizer: bool = False
    vllm_mode: VllmMode = "colocate"
    # server mode: GPUs of each machine given to `trl vllm-serve` (the first ones)
    vllm_server_gpus: int = 1
    vllm_server_host: str = "127.0.0.1"
    vllm_server_port: int = 8001
    vllm_tensor_parallel_size: int = 1
    vllm_gpu_memory_utilization: float = 0.3
    main_process_ip: str = ""
    main_process_port: int = 29500

    def __post_init__(self) -> None:
        if not 1 <= self.gpus_per_machine <= 64:
            raise GpuProfileError("gpus_per_machine must be between 1 and 64")
        if not 1 <= self.machines <= 1024:
            raise GpuProfileError("machines must be between 1 and 1024")
        if self.zero_stage not in (0, 1, 2, 3):
            raise GpuProfileError("zero_stage must be 0, 1, 2 or 3")
        if self.mixed_precision not in ("bf16", "fp16", "no"):
            raise GpuProfileError("mixed_precision must be bf16, fp16 or no")
        if self.vllm_mode not in ("colocate", "server"):
            raise GpuProfileError("vllm_mode must be colocate or server")
        if not 0.05 <= self.vllm_gpu_memory_utilization <= 0.95:
            raise GpuProfileError("vllm_gpu_memory_utilization must be between 0.05 and 0.95")
        if self.vllm_mode == "server":
            if not 1 <= self.vllm_server_gpus < self.gpus_per_machine:
                raise GpuProfileError(
                    "vllm_server_gpus must leave at least one GPU for training "
                    f"(1..{self.gpus_per_machine - 1})"
                )
            if self.vllm_server_gpus % self.vllm_tensor_parallel_size:
                raise GpuProfileError(
                    "vllm_server_gpus must be a multiple of vllm_tensor_parallel_size"
                )
        if self.machines > 1 and not self.main_process_ip:
            raise GpuProfileError("main_process_ip is required when machines > 1")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> GpuProfile:
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise GpuProfileError(f"unknown gpu profile key {unknown[0]!r}")
        return cls(**dict(data))

    def training_gpus(self, kind: str) -> int:
        """GPUs per machine that train ``kind`` (server mode keeps some for vLLM)."""
        if self.vllm_mode == "server" and kind in SAMPLING_STAGES:
            return self.gpus_per_machine - self.vllm_server_gpus
        return self.gpus_per_machine


def load_gpu_profile(path: Path) -> GpuProfile:
    """The profile in a YAML (or JSON) file: a mapping of ``GpuProfile`` fields."""
    try:
        data = yaml.safe_load(path.read_text("utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise GpuProfileError(f"cannot read the GPU profile {path}: {exc}") from exc
    if not isinstance(data, Mapping):
        raise GpuProfileError(f"the GPU profile {path} must be a mapping of profile fields")
    return GpuProfile.from_mapping(data)


def accelerate_config(profile: GpuProfile, kind: str) -> dict[str, Any]:
    """The ``accelerate launch --config_file`` document for one stage."""
    processes = profile.training_gpus(kind) * profile.machines
    config: dict[str, Any] = {
        "compute_environment": "LOCAL_MACHINE",
        "debug": False,
        "distributed_type": "DEEPSPEED" if profile.zero_stage else "MULTI_GPU",
        "downcast_bf16": "no",
        "machine_rank": 0,
        "main_training_function": "main",
        "mixed_precision": profile.mixed_precision,
        "num_machines": profile.machines,
        "num_processes": processes,
        "rdzv_backend": "static",
        "same_network": True,
        "use_cpu": False,
    }
    if profile.zero_stage:
        config["deepspeed_config"] = {
            "deepspeed_multinode_launcher": "standard",
            "offload_optimizer_device": "cpu" if profile.offload_optimizer else "none",
            "offload_param_device": "none",
            "zero3_init_flag": profile.zero_stage == 3,
            "zero3_save_16bit_model": profile.zero_stage == 3,
            "zero_stage": profile.zero_stage,
        }
    if profile.machines > 1:
        config["main_process_ip"] = profile.main_process_ip
        config["main_process_port"] = profile.main_process_port
    return config


def trainer_overrides(profile: GpuProfile, kind: str) -> dict[str, Any]:
    """TRL config fields the GPU profile sets on top of the stage's own params."""
    overrides: dict[str, Any] = {
        "bf16": profile.mixed_precision == "bf16",
        "fp16": profile.mixed_precision == "fp16",
        "activation_checkpointing": profile.activation_checkpointing,
    }
    if kind in SAMPLING_STAGES:
        overrides["use_vllm"] = True
        overrides["vllm_mode"] = profile.vllm_mode
        if profile.vllm_mode == "server":
            overrides["vllm_server_host"] = profile.vllm_server_host
            overrides["vllm_server_port"] = profile.vllm_server_port
        else:
            overrides["vllm_gpu_memory_utilization"] = profile.vllm_gpu_memory_utilization
            overrides["vllm_tensor_parallel_size"] = profile.vllm_tensor_parallel_size
    return overrides


def launch_command(
    profile: GpuProfile, kind: str, *, config_file: Path, job_file: Path, machine_rank: int = 0
) -> list[str]:
    if kind not in STAGE_ORDER:
        raise GpuProfileError(f"unknown stage kind {kind!r}")
    command = [
        "accelerate",
        "launch",
        "--config_file",
        str(config_file),
        "--machine_rank",
        str(machine_rank),
    ]
    if profile.vllm_mode == "server" and kind in SAMPLING_STAGES:
        first = profile.vllm_server_gpus
        gpus = ",".join(str(i) for i in range(first, profile.gpus_per_machine))
        command += ["--gpu_ids", gpus]
    return [*command, "-m", "training_app.pipeline.stage_cli", "--job", str(job_file)]


def vllm_server_command(profile: GpuProfile, model_dir: Path) -> list[str] | None:
    """``trl vllm-serve`` for server mode (None in colocate mode), on the first GPUs."""
    if profile.vllm_mode != "server":
        return None
    gpus = ",".join(str(i) for i in range(profile.vllm_server_gpus))
    return [
        "env",
        f"CUDA_VISIBLE_DEVICES={gpus}",
        "trl",
        "vllm-serve",
        "--model",
        str(model_dir),
        "--tensor_parallel_size",
        str(profile.vllm_tensor_parallel_size),
        "--data_parallel_size",
        str(profile.vllm_server_gpus // profile.vllm_tensor_parallel_size),
        "--host",
        profile.vllm_server_host,
        "--port",
        str(profile.vllm_server_port),
    ]


def write_bundle(
    profile: GpuProfile, kind: StageKind, *, out_dir: Path, job_file: Path, model_dir: Path
) -> dict[str, Path]:
    """Write ``accelerate.yaml``, ``trainer_overrides.json``, ``profile.json`` and
    ``launch.sh`` for one stage under ``out_dir``; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    config_file = out_dir / "accelerate.yaml"
    config_file.write_text(yaml.safe_dump(accelerate_config(profile, kind), sort_keys=True))
    overrides_file = out_dir / "trainer_overrides.json"
    overrides_file.write_text(json.dumps(trainer_overrides(profile, kind), indent=2))
    profile_file = out_dir / "profile.json"
    profile_file.write_text(json.dumps(asdict(profile), indent=2))
    lines = ["#!/usr/bin/env bash", "set -euo pipefail"]
    server = vllm_server_command(profile, model_dir) if kind in SAMPLING_STAGES else None
    if server:
        lines += [
            "# the vLLM generation server on its own GPUs; the trainers reach it over HTTP",
            shlex.join(server) + " &",
            "trap 'kill %1' EXIT",
        ]
    lines.append(
        shlex.join(launch_command(profile, kind, config_file=config_file, job_file=job_file))
    )
    script = out_dir / "launch.sh"
    script.write_text("\n".join(lines) + "\n")
    script.chmod(0o755)
    return {
        "accelerate_config": config_file,
        "trainer_overrides": overrides_file,
        "profile": profile_file,
        "launch": script,
    }
