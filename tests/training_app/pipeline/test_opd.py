"""Stage 2 (General OPD): params, the packaged prompt set, refusing student == teacher, and
a real DistillationTrainer run on tiny models whose held-out divergence to the teacher falls."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import SHARED
from tests.training_app.tiny_model import build_tiny_model
from training_app.pipeline.contract import NullReporter, StageInputs, StageSpec, newest_checkpoint
from training_app.pipeline.opd import (
    GENERAL_PROMPTS,
    OpdParams,
    PromptFileError,
    SameStudentAndTeacher,
    generalized_divergence,
    load_prompts,
    refuse_same_model,
    run_opd_stage,
    split_heldout,
)
from training_app.pipeline.stage_params import StageParamsError

IFEVAL = SHARED / "data" / "ifeval" / "input_data.jsonl"


class RecordingReporter(NullReporter):
    def __init__(self, stop_at: int | None = None) -> None:
        self.lines: list[str] = []
        self.logged: list[tuple[int, dict[str, float]]] = []
        self.steps: list[int] = []
        self.stop_at = stop_at

    def progress(self, step: int, total: int) -> None:
        self.steps.append(step)

    def metrics(self, step: int, values):  # type: ignore[no-untyped-def]
        self.logged.append((step, dict(values)))

    def log(self, line: str) -> None:
        self.lines.append(line)

    def should_stop(self) -> bool:
        return self.stop_at is not None and bool(self.steps) and self.steps[-1] >= self.stop_at


@pytest.fixture(scope="module")
def teacher_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("teacher") / "tiny-teacher", seed=1)


# --- params ----------------------------------------------------------------------------------


def test_params_defaults_and_overrides() -> None:
    params = OpdParams.from_mapping({"beta": 0, "steps": 3})
    assert params.beta == 0.0 and isinstance(params.beta, float)
    assert params.steps == 3
    assert OpdParams.from_mapping(None) == OpdParams()


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({"lmbda": 0.5}, "lmbda"),
        ({"beta": 1.5}, "beta"),
        ({"steps": "ten"}, "steps"),
        ({"steps": True}, "steps"),
        ({"temperature": 0}, "temperature"),
    ],
)
def test_params_refuse_bad_keys_and_values(values: dict[str, object], key: str) -> None:
    with pytest.raises(StageParamsError, match=key):
        OpdParams.from_mapping(values)


# --- prompts ---------------------------------------------------------------------------------


def _normalized(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    words = _normalized(text).split()
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def test_packaged_prompts_are_varied_and_not_ifeval() -> None:
    records = [json.loads(line) for line in GENERAL_PROMPTS.read_text("utf-8").splitlines()]
    assert 150 <= len(records) <= 300
    assert len({r["id"] for r in records}) == len(records)
    assert len({_normalized(r["prompt"]) for r in records}) == len(records)
    assert len({r["category"] for r in records}) >= 5
    if not IFEVAL.is_file():
        pytest.skip(f"IFEval prompts not present at {IFEVAL}")
    ifeval = [json.loads(line)["prompt"] for line in IFEVAL.read_text("utf-8").splitlines()]
    assert len(ifeval) > 500
    ifeval_exact = {_normalized(p) for p in ifeval}
    ifeval_grams = set().union(*(_ngrams(p, 8) for p in ifeval))
    for record in records:
        assert _normalized(record["prompt"]) not in ifeval_exact, record["id"]
        shared = _ngrams(record["prompt"], 8) & ifeval_grams
        assert not shared, (record["id"], shared)


def test_the_overlap_check_catches_a_copied_prompt() -> None:
    if not IFEVAL.is_file():
        pytest.skip(f"IFEval prompts not present at {IFEVAL}")
    copied = json.loads(IFEVAL.read_text("utf-8").splitlines()[1])["prompt"]
    ifeval_grams = set().union(_ngrams(copied, 8))
    assert _ngrams("Please: " + copied.upper() + " thanks", 8) & ifeval_grams


def test_tulu_style_jsonl_and_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "tulu.jsonl"
    path.write_text(
        json.dumps(
            {
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "Name a colour."},
                    {"role": "assistant", "content": "Blue."},
                ]
            }
        )
        + "\n"
        + json.dumps({"prompt": "Count to three."})
        + "\n",
        "utf-8",
    )
    prompts = load_prompts(path)
    assert prompts[0] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Name a colour."},
    ]
    assert prompts[1] == [{"role": "user", "content": "Count to three."}]
    path.write_text(json.dumps({"messages": [{"role": "assistant", "content": "x"}]}) + "\n")
    with pytest.raises(PromptFileError, match=":1:"):
        load_prompts(path)


def test_heldout_split_is_fixed_and_disjoint() -> None:
    prompts = [[{"role": "user", "content": f"p{i}"}] for i in range(20)]
    train, held = split_heldout(prompts, 5, seed=3)
    assert (train, held) == split_heldout(prompts, 5, seed=3)
    assert len(held) == 5 and len(train) == 15
    assert not {p[0]["content"] for p in held} & {p[0]["content"] for p in train}


# --- divergence ------------------------------------------------------------------------------


def test_generalized_divergence_matches_hand_computed_values() -> None:
    import math

    import torch

    p_s = [0.5, 0.25, 0.25]
    p_t = [0.25, 0.5, 0.25]
    s, t = torch.tensor([p_s]).log(), torch.tensor([p_t]).log()

    def kl(p: list[float], q: list[float]) -> float:
        return sum(a * math.log(a / b) for a, b in zip(p, q, strict=True))

    assert float(generalized_divergence(s, t, 0.0)[0]) == pytest.approx(kl(p_t, p_s))
    assert float(generalized_divergence(s, t, 1.0)[0]) == pytest.approx(kl(p_s, p_t))
    m = [0.5 * a + 0.5 * b for a, b in zip(p_s, p_t, strict=True)]
    jsd = 0.5 * kl(p_t, m) + 0.5 * kl(p_s, m)
    assert float(generalized_divergence(s, t, 0.5)[0]) == pytest.approx(jsd, rel=1e-5)
    assert float(generalized_divergence(s, s, 0.5)[0]) == pytest.approx(0.0, abs=1e-7)


# --- refusing student == teacher -------------------------------------------------------------


def test_refuses_same_dir_and_identical_weights(tiny_model_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(SameStudentAndTeacher, match="different from its teacher"):
        refuse_same_model(tiny_model_dir, tiny_model_dir / ".." / tiny_model_dir.name)
    copy = tmp_path / "copy"
    shutil.copytree(tiny_model_dir, copy)
    with pytest.raises(SameStudentAndTeacher, match="identical weights"):
        refuse_same_model(copy, tiny_model_dir)
    spec = StageSpec("opd", {"steps": 1})
    inputs = StageInputs(init_model_dir=copy, base_model_dir=tiny_model_dir)
    with pytest.raises(SameStudentAndTeacher):
        run_opd_stage(spec, inputs, tmp_path / "work", NullReporter())


# --- a real run ------------------------------------------------------------------------------

RUN_PARAMS = {
    "steps": 4,
    "learning_rate": 3e-3,
    "beta": 0.5,
    "max_new_tokens": 8,
    "batch_size": 2,
    "save_steps": 2,
    "heldout_prompts": 4,
    "heldout_tokens": 8,
}


def test_opd_run_lowers_heldout_divergence_and_resumes(
    tiny_model_dir: Path, teacher_dir: Path, tmp_path: Path
) -> None:
    from transformers import AutoModelForCausalLM

    workdir = tmp_path / "opd"
    inputs = StageInputs(init_model_dir=tiny_model_dir, base_model_dir=teacher_dir, seed=0)

    # A stop request after step 2: a checkpoint, no final model.
    stopping = RecordingReporter(stop_at=2)
    stopped = run_opd_stage(StageSpec("opd", RUN_PARAMS), inputs, workdir, stopping)
    assert stopped.stopped and stopped.final_dir is None and stopped.steps_done == 2
    checkpoint = newest_checkpoint(workdir)
    assert checkpoint is not None and checkpoint.name == "checkpoint-2"
    assert any("loss" in values for _step, values in stopping.logged)

    # Resume: continues from checkpoint-2 to the end.
    reporter = RecordingReporter()
    outcome = run_opd_stage(StageSpec("opd", RUN_PARAMS), inputs, workdir, reporter)
    assert not outcome.stopped and outcome.steps_done == 4
    assert outcome.summary["resumed_from"] == "checkpoint-2"
    assert reporter.steps[0] == 2
    assert outcome.final_dir is not None
    AutoModelForCausalLM.from_pretrained(outcome.final_dir)
    assert (outcome.final_dir / "tokenizer.json").is_file()

    before = outcome.summary["heldout_divergence_before"]
    after = outcome.summary["heldout_divergence_after"]
    assert outcome.summary["heldout_prompts"] == 4
    assert after < before * 0.9, (before, after)
