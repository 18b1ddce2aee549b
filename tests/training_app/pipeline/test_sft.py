"""Stage 1 on the tiny model: parameters, which tokens carry loss, an end-to-end run with the
demo harness (checkpoints, metrics, held-out loss down, MTP weights kept) and resume."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from harness_app.harness.serialization import harness_from_yaml, harness_to_dict
from training_app.pipeline.catalog_snapshot import demo_catalog
from training_app.pipeline.checkpoints import MTP_FILE, copy_mtp_weights, mtp_tensor_names
from training_app.pipeline.contract import StageInputs, StageSpec, newest_checkpoint
from training_app.pipeline.sft import (
    SftParams,
    build_trainer,
    heldout_task_ids,
    run_sft_stage,
)
from training_app.pipeline.sft_data import BuildOptions, build_sft_rows
from training_app.pipeline.stage_params import StageParamsError
from training_app.pipeline.task_set import generate_tasks

ROOT = Path(__file__).resolve().parents[3]
HARNESS = harness_to_dict(
    harness_from_yaml(
        (ROOT / "harness_app/demo_data/live_stream_harness.yaml").read_text(encoding="utf-8")
    )
)
# Small on purpose: a demo-harness turn is ~1.7K tokens and the tiny model's 49K-token LM
# head dominates its cost (~2-5 s a step on a loaded 2-core machine).
TASKS = generate_tasks(
    demo_catalog(),
    HARNESS,
    "demo",
    split="train",
    question_types=("price", "shipping"),
    per_type=2,
    seed=1,
)


class RecordingReporter:
    def __init__(self, stop_at: int | None = None) -> None:
        self.stop_at = stop_at
        self.progress_calls: list[tuple[int, int]] = []
        self.metric_calls: list[tuple[int, dict[str, float]]] = []
        self.lines: list[str] = []

    def progress(self, step: int, total: int) -> None:
        self.progress_calls.append((step, total))

    def metrics(self, step: int, values: Mapping[str, float]) -> None:
        self.metric_calls.append((step, dict(values)))

    def log(self, line: str) -> None:
        self.lines.append(line)

    def should_stop(self) -> bool:
        return (
            self.stop_at is not None
            and bool(self.progress_calls)
            and (self.progress_calls[-1][0] >= self.stop_at)
        )


# --- parameters ------------------------------------------------------------------------------


def test_params_defaults_and_overrides() -> None:
    assert SftParams.from_mapping({}) == SftParams()
    params = SftParams.from_mapping({"max_steps": 3, "learning_rate": 1, "bf16": True})
    assert (params.max_steps, params.learning_rate, params.bf16) == (3, 1.0, True)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"max_step": 3}, "hsa_sft params: unknown key.*max_step"),
        ({"max_steps": "5"}, "max_steps: expected an integer"),
        ({"max_steps": True}, "max_steps: expected an integer"),
        ({"max_steps": 0}, "max_steps must be >= 1"),
        ({"learning_rate": float("nan")}, "learning_rate must be a finite number"),
        ({"learning_rate": float("inf")}, "learning_rate must be a finite number"),
        ({"heldout_fraction": 1.0}, r"heldout_fraction must be in \[0, 1\)"),
        ({"recovery_fraction": -0.1}, r"recovery_fraction must be in \[0, 1\]"),
        ({"tool_mode": "xml"}, "tool_mode must be one of text, native"),
        ({"gradient_checkpointing": 1}, "gradient_checkpointing: expected true or false"),
    ],
)
def test_bad_params_are_refused_naming_the_key(data: dict[str, Any], message: str) -> None:
    with pytest.raises(StageParamsError, match=message):
        SftParams.from_mapping(data)


def test_heldout_is_a_fraction_of_distinct_tasks() -> None:
    ids = [f"t{i}" for i in range(20)] * 3
    held = heldout_task_ids(ids, 0.25, seed=0)
    assert len(held) == 5 and held <= set(ids)
    assert held == heldout_task_ids(ids, 0.25, seed=0)
    assert heldout_task_ids(["a", "a"], 0.5, seed=0) == set()


# --- loss masking ----------------------------------------------------------------------------


def _ids(tokenizer: Any, messages: list[dict[str, Any]], **kwargs: Any) -> list[int]:
    encoded: Any = tokenizer.apply_chat_template(
        messages, tokenize=True, return_dict=True, **kwargs
    )
    return list(encoded["input_ids"])


@pytest.mark.parametrize("tool_mode", ["text", "native"])
def test_loss_covers_exactly_the_assistant_turn(
    tiny_model_dir: Path, tmp_path: Path, tool_mode: str
) -> None:
    import json

    from transformers import AutoTokenizer

    options = BuildOptions(tool_mode=tool_mode)  # type: ignore[arg-type]
    rows, _report = build_sft_rows(TASKS[:1], {"demo": HARNESS}, options)
    row = rows[1]  # the tool call after load_skill: a prompt with an observation in it
    trainer = build_trainer(SftParams(max_length=4096), tiny_model_dir, [row], [], tmp_path / "out")
    example = trainer.train_dataset[0]
    input_ids, labels = example["input_ids"], example["labels"]
    # reference: the chat template's own rendering of the prompt with the generation prompt
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    tools = row.tools
    prompt_ids = _ids(tokenizer, row.prompt, add_generation_prompt=True, tools=tools)
    full_ids = _ids(tokenizer, row.prompt + row.completion, tools=tools)
    assert input_ids == full_ids
    n = len(prompt_ids)
    assert input_ids[:n] == prompt_ids
    assert all(label == -100 for label in labels[:n])  # nothing of the prompt
    assert labels[n:] == input_ids[n:]  # every token of the completion
    completion_text = str(tokenizer.decode(labels[n:]))
    prompt_text = str(tokenizer.decode(input_ids[:n]))
    if tool_mode == "text":
        expected = row.completion[0]["content"]
    else:  # SmolLM2's template writes native tool calls as <tool_call> blocks
        call = row.completion[0]["tool_calls"][0]["function"]
        arguments = json.loads(call["arguments"])
        expected = (
            f'<tool_call>\n{{"name": "{call["name"]}", "arguments": '
            f"{json.dumps(arguments)}}}\n</tool_call>"
        )
    assert completion_text == expected + "<|im_end|>\n"
    assert prompt_text.endswith("<|im_start|>assistant\n")


# --- the stage -------------------------------------------------------------------------------


def _with_fake_mtp(model_dir: Path, target: Path) -> Path:
    """A copy of the tiny model whose safetensors also hold an ``mtp.*`` tensor."""
    import torch
    from safetensors.torch import load_file, save_file

    shutil.copytree(model_dir, target)
    tensors = load_file(str(target / "model.safetensors"))
    tensors["mtp.layers.0.proj.weight"] = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    save_file(tensors, str(target / "model.safetensors"), metadata={"format": "pt"})
    return target


def _inputs(model_dir: Path, *, policy: str = "hsa-train") -> StageInputs:
    return StageInputs(
        init_model_dir=model_dir,
        base_model_dir=model_dir,
        harnesses={"demo": HARNESS},
        tasks=TASKS,
        hsa_policy=policy,
        seed=3,
    )


def test_run_sft_stage_end_to_end(tiny_model_dir: Path, tmp_path: Path) -> None:
    import torch
    from safetensors import safe_open
    from transformers import AutoModelForCausalLM

    base = _with_fake_mtp(tiny_model_dir, tmp_path / "base")
    spec = StageSpec(
        "hsa_sft",
        {
            "max_steps": 3,
            "learning_rate": 5e-3,
            "gradient_accumulation_steps": 1,
            "save_steps": 2,
            "max_length": 2048,
            "heldout_fraction": 0.25,
        },
    )
    reporter = RecordingReporter()
    outcome = run_sft_stage(spec, _inputs(base), tmp_path / "work", reporter)

    assert not outcome.stopped and outcome.steps_done == 3
    assert outcome.final_dir == tmp_path / "work" / "final"
    assert (tmp_path / "work/checkpoints/checkpoint-2").is_dir()
    assert newest_checkpoint(tmp_path / "work") == tmp_path / "work/checkpoints/checkpoint-3"
    # metrics reported every step, progress to the end
    losses = [v["loss"] for _s, v in reporter.metric_calls if "loss" in v]
    assert len(losses) == 3
    assert reporter.progress_calls[-1] == (3, 3)
    # held-out tool-call turns: loss went down
    summary = outcome.summary
    assert summary["heldout_loss_after"] < summary["heldout_loss_before"]
    data = summary["data"]
    assert data["policy"] == "hsa-train" and data["kept"] == data["examples"] == 8
    assert data["heldout_rows"] > 0 and data["train_rows"] > data["heldout_rows"]
    # the final model loads, and carries the base's MTP tensor unchanged
    model = AutoModelForCausalLM.from_pretrained(outcome.final_dir)
    assert model.config.num_hidden_layers == 2
    assert summary["mtp_tensors_copied"] == 1
    assert mtp_tensor_names(outcome.final_dir) == ["mtp.layers.0.proj.weight"]
    with safe_open(str(outcome.final_dir / MTP_FILE), framework="pt") as handle:
        copied = handle.get_tensor("mtp.layers.0.proj.weight")
    assert torch.equal(copied, torch.arange(12, dtype=torch.float32).reshape(3, 4))
    checkpoint = AutoModelForCausalLM.from_pretrained(tmp_path / "work/checkpoints/checkpoint-2")
    assert checkpoint.config.num_hidden_layers == 2


def test_stop_then_resume_continues_from_the_checkpoint(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    spec = StageSpec(
        "hsa_sft",
        {
            "max_steps": 3,
            "gradient_accumulation_steps": 1,
            "save_steps": 10,
            "max_length": 2048,
            "heldout_fraction": 0.0,
        },
    )
    work = tmp_path / "work"
    inputs = _inputs(tiny_model_dir, policy="")
    # given a run stopped by the reporter after step 2 (save_steps would not save before 10)
    first = RecordingReporter(stop_at=2)
    stopped = run_sft_stage(spec, inputs, work, first)
    assert stopped.stopped and stopped.final_dir is None and stopped.steps_done == 2
    assert newest_checkpoint(work) == work / "checkpoints/checkpoint-2"
    assert not (work / "final").exists()
    # when it runs again with resume
    second = RecordingReporter()
    done = run_sft_stage(spec, inputs, work, second)
    # then it starts at step 2, not 0, and finishes
    assert second.progress_calls[0] == (2, 3)
    assert [s for s, _t in second.progress_calls[1:]] == [3]
    assert not done.stopped and done.steps_done == 3
    assert any("resuming from checkpoint-2" in line for line in second.lines)


def test_copy_mtp_weights_is_a_no_op_without_mtp(tiny_model_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "final"
    shutil.copytree(tiny_model_dir, target)
    assert copy_mtp_weights(tiny_model_dir, target) == 0
    assert not (target / MTP_FILE).exists()
