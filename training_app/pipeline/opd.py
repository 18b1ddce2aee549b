"""Stage 2, General OPD: on-policy distillation on general instruction prompts, with the
run's base model (before HSA-SFT) as the teacher, to win back the instruction following that
SFT on one domain costs.

The student (``inputs.init_model_dir``, the HSA-SFT checkpoint) samples completions for
general prompts; TRL's ``DistillationTrainer`` (1.16) minimises the generalised JSD between
student and teacher token distributions on those on-policy completions. ``beta`` picks the
divergence: 0 forward KL, 0.5 JSD, 1 reverse KL. TRL 1.16 has no ``lmbda`` mixing of
off-policy data: every batch is sampled from the student.

The summary reports the divergence to the teacher on a fixed held-out prompt set before and
after training. It is deterministic: the held-out prompts are drawn with a fixed seed and
kept out of training, their continuations are the teacher's greedy ones (computed once), and
both models are scored teacher-forced on them (``teacher_forced_divergence``).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from training_app.pipeline.contract import StageInputs, StageOutcome, StageReporter, StageSpec
from training_app.pipeline.stage_params import StageParamsError, params_from_mapping, require

GENERAL_PROMPTS = Path(__file__).resolve().parent / "data" / "general_prompts.jsonl"
STAGE = "opd"

Messages = list[dict[str, str]]


class SameStudentAndTeacher(ValueError):
    """OPD would distil a model into itself: nothing to learn, a wasted run."""


class PromptFileError(ValueError):
    """A prompts JSONL line has no usable prompt; the message names the file and line."""


@dataclass(frozen=True)
class OpdParams:
    """Defaults are the CPU profile (SmolLM2-135M, minutes)."""

    steps: int = 20
    learning_rate: float = 5e-6
    beta: float = 0.5
    temperature: float = 1.0
    max_new_tokens: int = 64
    batch_size: int = 4
    gradient_accumulation_steps: int = 1
    save_steps: int = 10
    logging_steps: int = 1
    # A local Tulu-3-style JSONL ({"messages": [...]} or {"prompt": "..."} per line);
    # "" uses the prompts packaged with the project (data/general_prompts.jsonl).
    prompts_path: str = ""
    max_prompt_tokens: int = 512
    heldout_prompts: int = 16
    heldout_tokens: int = 32
    heldout_seed: int = 1234

    def __post_init__(self) -> None:
        require(self.steps >= 1, STAGE, "steps", f"must be >= 1, got {self.steps}")
        require(self.learning_rate > 0, STAGE, "learning_rate", "must be > 0")
        require(0.0 <= self.beta <= 1.0, STAGE, "beta", f"must be in [0, 1], got {self.beta}")
        require(self.temperature > 0, STAGE, "temperature", "must be > 0")
        require(self.max_new_tokens >= 1, STAGE, "max_new_tokens", "must be >= 1")
        require(self.batch_size >= 1, STAGE, "batch_size", "must be >= 1")
        require(
            self.gradient_accumulation_steps >= 1,
            STAGE,
            "gradient_accumulation_steps",
            "must be >= 1",
        )
        require(self.save_steps >= 1, STAGE, "save_steps", "must be >= 1")
        require(self.logging_steps >= 1, STAGE, "logging_steps", "must be >= 1")
        require(self.max_prompt_tokens >= 8, STAGE, "max_prompt_tokens", "must be >= 8")
        require(self.heldout_prompts >= 0, STAGE, "heldout_prompts", "must be >= 0")
        require(self.heldout_tokens >= 1, STAGE, "heldout_tokens", "must be >= 1")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any] | None) -> OpdParams:
        return params_from_mapping(cls, values, stage=STAGE)


# --- prompts ---------------------------------------------------------------------------------


def _prompt_from_record(record: Mapping[str, Any]) -> Messages | None:
    """A chat prompt from one record: ``{"prompt": str}``, or Tulu-style ``{"messages": [...]}``
    cut before the last assistant turn (its answer is not used: OPD generates its own)."""
    prompt = record.get("prompt")
    if isinstance(prompt, str) and prompt.strip():
        return [{"role": "user", "content": prompt.strip()}]
    messages = record.get("messages")
    if isinstance(messages, list) and messages:
        turns = [
            {"role": str(m.get("role")), "content": str(m.get("content") or "")}
            for m in messages
            if isinstance(m, Mapping) and m.get("role") in ("system", "user", "assistant")
        ]
        while turns and turns[-1]["role"] == "assistant":
            turns.pop()
        if turns and turns[-1]["role"] == "user" and turns[-1]["content"].strip():
            return turns
    return None


def load_prompts(path: Path) -> list[Messages]:
    prompts: list[Messages] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise PromptFileError(f"{path}:{number}: not JSON ({exc.msg})") from None
            prompt = _prompt_from_record(record) if isinstance(record, Mapping) else None
            if prompt is None:
                raise PromptFileError(
                    f'{path}:{number}: no prompt (expected "prompt": text or "messages" '
                    "ending in a user turn)"
                )
            prompts.append(prompt)
    if not prompts:
        raise PromptFileError(f"{path}: no prompts")
    return prompts


def stage_prompts(params: OpdParams, inputs: StageInputs) -> list[Messages]:
    """``prompts_path`` if set; else the stage's task records when they are prompts; else
    the packaged general prompt set."""
    if params.prompts_path:
        path = Path(params.prompts_path)
        if not path.is_file():
            raise StageParamsError(f"opd params: prompts_path {path} is not a file")
        return load_prompts(path)
    from_tasks = [p for p in (_prompt_from_record(t) for t in inputs.tasks) if p is not None]
    if from_tasks:
        return from_tasks
    return load_prompts(GENERAL_PROMPTS)


def split_heldout(
    prompts: Sequence[Messages], count: int, seed: int
) -> tuple[list[Messages], list[Messages]]:
    """(training prompts, held-out prompts): ``count`` prompts drawn with ``seed``, kept out of
    training. At least one prompt always stays for training."""
    count = min(count, max(0, len(prompts) - 1))
    order = list(range(len(prompts)))
    random.Random(seed).shuffle(order)
    held = set(order[:count])
    return (
        [p for i, p in enumerate(prompts) if i not in held],
        [prompts[i] for i in sorted(held)],
    )


# --- student vs teacher ----------------------------------------------------------------------


def weights_digest(model_dir: Path) -> str:
    """SHA-256 over the model's weight files (names and bytes, in name order)."""
    files = sorted(
        p for p in model_dir.iterdir() if p.suffix in (".safetensors", ".bin") and p.is_file()
    )
    if not files:
        raise FileNotFoundError(f"no weight files (*.safetensors, *.bin) in {model_dir}")
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode())
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def refuse_same_model(student_dir: Path, teacher_dir: Path) -> None:
    """Raise ``SameStudentAndTeacher`` when both are the same folder or hold the same weights
    (e.g. HSA-SFT was skipped and the base model was passed as the student)."""
    student, teacher = student_dir.resolve(), teacher_dir.resolve()
    if student == teacher:
        raise SameStudentAndTeacher(
            f"OPD needs a student different from its teacher; both are {student}. "
            "Run HSA-SFT first (the student is its checkpoint) or drop the OPD stage."
        )
    if weights_digest(student) == weights_digest(teacher):
        raise SameStudentAndTeacher(
            f"OPD needs a student different from its teacher; {student} and {teacher} hold "
            "identical weights. Run HSA-SFT first or drop the OPD stage."
        )


def generalized_divergence(student_logits: Any, teacher_logits: Any, beta: float) -> Any:
    """Per-position divergence between student and teacher next-token distributions (last
    dim = vocabulary): beta 0 -> KL(teacher || student), 1 -> KL(student || teacher),
    otherwise the generalised JSD with mixture m = beta * teacher + (1 - beta) * student:
    beta * KL(teacher || m) + (1 - beta) * KL(student || m)."""
    import torch

    log_s = torch.log_softmax(student_logits.float(), dim=-1)
    log_t = torch.log_softmax(teacher_logits.float(), dim=-1)

    def kl(log_p: Any, log_q: Any) -> Any:
        return (log_p.exp() * (log_p - log_q)).sum(-1)

    if beta == 0.0:
        return kl(log_t, log_s)
    if beta == 1.0:
        return kl(log_s, log_t)
    log_m = torch.logsumexp(
        torch.stack(
            [log_t + torch.log(torch.tensor(beta)), log_s + torch.log(torch.tensor(1 - beta))]
        ),
        dim=0,
    )
    return beta * kl(log_t, log_m) + (1 - beta) * kl(log_s, log_m)


@dataclass(frozen=True)
class HeldoutSet:
    """Token ids of each held-out prompt and its fixed (teacher-greedy) continuation."""

    sequences: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]


def build_heldout(
    teacher: Any,
    tokenizer: Any,
    prompts: Sequence[Messages],
    max_new_tokens: int,
    max_prompt_tokens: int,
) -> HeldoutSet:
    import torch

    out = []
    with torch.no_grad():
        for messages in prompts:
            ids = tokenizer.apply_chat_template(
                messages, add_generation_prompt=True, tokenize=True, return_dict=True
            )["input_ids"][-max_prompt_tokens:]
            tensor = torch.tensor([ids], device=teacher.device)
            generated = teacher.generate(
                tensor,
                attention_mask=torch.ones_like(tensor),
                max_new_tokens=max_new_tokens,
                do_sample=False,
                pad_token_id=tokenizer.pad_token_id,
            )[0, len(ids) :].tolist()
            if generated:
                out.append((tuple(ids), tuple(generated)))
    return HeldoutSet(tuple(out))


def teacher_forced_divergence(
    student: Any, teacher: Any, heldout: HeldoutSet, beta: float
) -> float:
    """Mean per-token divergence over all held-out continuation tokens, both models fed the
    same prompt + continuation. Deterministic for fixed weights."""
    import torch

    total, count = 0.0, 0
    was_training = student.training
    student.eval()
    with torch.no_grad():
        for prompt, continuation in heldout.sequences:
            ids = torch.tensor([list(prompt) + list(continuation)])
            # logits at position t predict token t+1: the continuation is predicted from
            # positions len(prompt)-1 .. len(ids)-2.
            start, end = len(prompt) - 1, len(prompt) + len(continuation) - 1
            s = student(input_ids=ids.to(student.device)).logits[0, start:end]
            t = teacher(input_ids=ids.to(teacher.device)).logits[0, start:end].to(s.device)
            per_token = generalized_divergence(s, t, beta)
            total += float(per_token.sum())
            count += per_token.numel()
    if was_training:
        student.train()
    return total / count if count else float("nan")


# --- the stage -------------------------------------------------------------------------------


def run_opd_stage(
    spec: StageSpec, inputs: StageInputs, workdir: Path, reporter: StageReporter
) -> StageOutcome:
    params = OpdParams.from_mapping(spec.params)
    student_dir, teacher_dir = Path(inputs.init_model_dir), Path(inputs.base_model_dir)
    refuse_same_model(student_dir, teacher_dir)

    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM
    from trl import DistillationConfig, DistillationTrainer

    from training_app.pipeline.reporting import ReporterCallback
    from training_app.pipeline.trainer_run import (
        left_padded_tokenizer,
        online_trainer_args,
        run_trainer,
        with_overrides,
    )

    prompts = stage_prompts(params, inputs)
    train_prompts, heldout_prompts = split_heldout(
        prompts, params.heldout_prompts, params.heldout_seed
    )
    reporter.log(f"OPD: {len(train_prompts)} training prompts, {len(heldout_prompts)} held out")

    tokenizer = left_padded_tokenizer(student_dir)
    torch.manual_seed(inputs.seed)
    student = AutoModelForCausalLM.from_pretrained(student_dir, dtype=torch.float32)
    teacher = AutoModelForCausalLM.from_pretrained(teacher_dir, dtype=torch.float32)
    if student.config.vocab_size != teacher.config.vocab_size:
        raise ValueError(
            f"OPD needs student and teacher to share a vocabulary: {student.config.vocab_size} "
            f"vs {teacher.config.vocab_size} tokens"
        )
    teacher.eval()
    if torch.cuda.is_available():  # the held-out scoring runs before the trainer places them
        for placed in (student, teacher):
            cast(Any, placed).to("cuda")

    heldout = build_heldout(
        teacher, tokenizer, heldout_prompts, params.heldout_tokens, params.max_prompt_tokens
    )
    before = teacher_forced_divergence(student, teacher, heldout, params.beta)
    reporter.log(f"held-out divergence to the teacher before OPD: {before:.6f}")

    config = DistillationConfig(
        **with_overrides(
            dict(
                max_steps=params.steps,
                per_device_train_batch_size=params.batch_size,
                gradient_accumulation_steps=params.gradient_accumulation_steps,
                learning_rate=params.learning_rate,
                beta=params.beta,
                temperature=params.temperature,
                max_completion_length=params.max_new_tokens,
                **online_trainer_args(
                    workdir,
                    seed=inputs.seed,
                    save_steps=params.save_steps,
                    logging_steps=params.logging_steps,
                ),
            ),
            inputs,
        )
    )
    dataset = Dataset.from_list([{"prompt": p} for p in train_prompts])
    callback = ReporterCallback(reporter)
    trainer = DistillationTrainer(
        model=student,
        teacher_model=teacher,
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=[callback],
    )
    run = run_trainer(trainer, callback, inputs=inputs, workdir=workdir, reporter=reporter)
    summary: dict[str, Any] = {
        "train_prompts": len(train_prompts),
        "heldout_prompts": len(heldout.sequences),
        "beta": params.beta,
        "heldout_divergence_before": before,
        "resumed_from": run.resumed_from.name if run.resumed_from else None,
        "final_metrics": {k: v for k, v in run.last_logs.items() if k in ("loss", "train_loss")},
    }
    if not run.stopped:
        after = teacher_forced_divergence(trainer.model, teacher, heldout, params.beta)
        summary["heldout_divergence_after"] = after
        reporter.log(
            f"held-out divergence to the teacher after OPD: {after:.6f} (before {before:.6f})"
        )
        reporter.metrics(run.steps_done, {"heldout_divergence": after})
    return run.outcome(summary)
