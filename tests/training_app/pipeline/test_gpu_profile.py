"""The GPU profile's generated files, checked by the tools that will read them on a GPU
machine: accelerate's config loader and launch parser, TRL's config dataclasses and its
``vllm-serve`` parser. Nothing here needs a GPU."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path

import pytest
from accelerate.commands.config.config_args import ClusterConfig, load_config_from_file
from accelerate.commands.launch import launch_command_parser
from trl import DistillationConfig, GRPOConfig, SFTConfig
from trl.scripts.vllm_serve import make_parser as vllm_serve_parser

from training_app.pipeline.gpu_profile import (
    GpuProfile,
    GpuProfileError,
    trainer_overrides,
    write_bundle,
)

CONFIGS = {"hsa_sft": SFTConfig, "opd": DistillationConfig, "hsa_rl": GRPOConfig}


def _bundle(tmp_path: Path, profile: GpuProfile, kind: str) -> dict[str, Path]:
    return write_bundle(
        profile,
        kind,  # type: ignore[arg-type]
        out_dir=tmp_path / kind,
        job_file=tmp_path / "job.json",
        model_dir=Path("/models/base"),
    )


@pytest.mark.parametrize("kind", ["hsa_sft", "opd", "hsa_rl"])
def test_accelerate_reads_the_zero3_config(tmp_path: Path, kind: str) -> None:
    files = _bundle(tmp_path, GpuProfile(gpus_per_machine=8), kind)
    config = load_config_from_file(str(files["accelerate_config"]))
    assert isinstance(config, ClusterConfig)
    assert str(config.distributed_type) in ("DistributedType.DEEPSPEED", "DEEPSPEED")
    assert config.deepspeed_config["zero_stage"] == 3
    assert config.deepspeed_config["zero3_save_16bit_model"] is True
    assert config.mixed_precision == "bf16"
    assert config.num_processes == 8


def test_server_mode_sets_gpus_apart_for_vllm(tmp_path: Path) -> None:
    profile = GpuProfile(
        gpus_per_machine=8, vllm_mode="server", vllm_server_gpus=2, vllm_tensor_parallel_size=2
    )
    files = _bundle(tmp_path, profile, "hsa_rl")
    config = load_config_from_file(str(files["accelerate_config"]))
    assert config.num_processes == 6
    lines = [line for line in files["launch"].read_text().splitlines() if not line.startswith("#")]
    server = shlex.split(next(line for line in lines if "vllm-serve" in line).rstrip(" &"))
    assert server[:2] == ["env", "CUDA_VISIBLE_DEVICES=0,1"]
    (served,) = vllm_serve_parser(prog="trl vllm-serve").parse_args_and_config(server[4:])
    assert (served.model, served.tensor_parallel_size, served.data_parallel_size) == (
        "/models/base",
        2,
        1,
    )
    launch = shlex.split(lines[-1])
    args = launch_command_parser().parse_args(launch[2:])
    assert args.gpu_ids == "2,3,4,5,6,7"
    assert args.module and args.training_script == "training_app.pipeline.stage_cli"
    assert args.training_script_args == ["--job", str(tmp_path / "job.json")]
    # SFT samples nothing: every GPU trains and no server starts
    sft = _bundle(tmp_path, profile, "hsa_sft")
    assert load_config_from_file(str(sft["accelerate_config"])).num_processes == 8
    assert "vllm-serve" not in sft["launch"].read_text()


@pytest.mark.parametrize("kind", ["hsa_sft", "opd", "hsa_rl"])
@pytest.mark.parametrize("mode", ["colocate", "server"])
def test_overrides_are_fields_of_the_stage_trl_config(kind: str, mode: str) -> None:
    overrides = trainer_overrides(GpuProfile(vllm_mode=mode), kind)  # type: ignore[arg-type]
    fields = {f.name for f in dataclasses.fields(CONFIGS[kind])}
    assert set(overrides) <= fields
    # bf16 needs a GPU to validate; everything else constructs here as it will there
    CONFIGS[kind](output_dir="/tmp/unused", **{**overrides, "bf16": False, "use_cpu": True})
    assert ("use_vllm" in overrides) == (kind != "hsa_sft")


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"gpus_per_machine": 0}, "gpus_per_machine"),
        ({"zero_stage": 4}, "zero_stage"),
        ({"vllm_mode": "remote"}, "vllm_mode"),
        ({"vllm_mode": "server", "gpus_per_machine": 2, "vllm_server_gpus": 2}, "vllm_server_gpus"),
        ({"machines": 2}, "main_process_ip"),
    ],
)
def test_impossible_profiles_name_the_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(GpuProfileError, match=field):
        GpuProfile(**kwargs)  # type: ignore[arg-type]


def test_unknown_profile_keys_are_refused() -> None:
    with pytest.raises(GpuProfileError, match="gpus"):
        GpuProfile.from_mapping({"gpus": 8})


def test_multi_machine_config_names_the_main_process(tmp_path: Path) -> None:
    profile = GpuProfile(machines=2, main_process_ip="10.1.2.3")
    config = load_config_from_file(str(_bundle(tmp_path, profile, "opd")["accelerate_config"]))
    assert (config.num_machines, config.num_processes, config.main_process_ip) == (
        2,
        16,
        "10.1.2.3",
    )
