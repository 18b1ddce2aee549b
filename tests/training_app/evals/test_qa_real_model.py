"""Five Live-Stream QA items through the REAL SmolLM2-135M served by `transformers serve`
(the session's ``local_worker``, shared by every ``model`` test), over the OpenAI-compatible
client, in text-action mode, on the compact CPU-profile harness.

A 135M model's answers are not judged here; what is asserted is that the evaluation path
works end to end with a real model: every item was answered by the model over HTTP (tokens
counted, no infrastructure fallback), scored with every rule check and the four components,
and the run's score and interval are computed. Sized for CI on 2 CPU cores: 5 items,
max_tokens 64 and 2 agent steps, one request at a time (the embedded server answers one at a
time). Measured on the shared 2-core dev VM at load average ~5: 156 s for the test (6 model
calls of 4-67 s each), 10 s to start the server with the checkpoint converted.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_app.harness.serialization import harness_from_yaml, harness_to_dict
from inference.agents.openai_model import OpenAIChatModel
from inference.clients.openai_compatible import ClientConfig, OpenAICompatibleClient
from tests.model_worker import REAL_MODEL_MARKS, RunningWorker
from training_app.evals.eval_stats import bootstrap_mean
from training_app.evals.qa_runner import QARunConfig, run_qa_set
from training_app.evals.qa_scoring import CHECKS, COMPONENTS
from training_app.evals.qa_sets import build_live_stream_qa_set
from training_app.pipeline.catalog_snapshot import demo_catalog

pytestmark = [*REAL_MODEL_MARKS, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[3]
COMPACT = ROOT / "harness_app" / "demo_data" / "compact_harness.yaml"


@pytest.fixture
def model(local_worker: RunningWorker) -> Iterator[OpenAIChatModel]:
    config = ClientConfig(
        base_url=local_worker.base_url,
        model=local_worker.model_id,
        read_timeout_s=180.0,
        max_retries=0,
    )
    with OpenAICompatibleClient(config) as client:
        yield OpenAIChatModel(client, local_worker.model_id)


def test_five_items_through_the_real_model(model: OpenAIChatModel) -> None:
    harness = harness_to_dict(harness_from_yaml(COMPACT.read_text("utf-8")))
    qa = build_live_stream_qa_set(
        demo_catalog(),
        harness,
        per_type=1,
        question_types=("price", "stock", "shipping", "coupons", "off-topic"),
    )
    assert len(qa.items) == 5
    progress: list[int] = []
    outcome = run_qa_set(
        model,
        qa,
        config=QARunConfig(
            tool_mode="text", max_tokens=64, max_steps=2, temperature=0.0, deadline_s=600.0
        ),
        max_concurrency=1,
        progress=lambda done, total, result: progress.append(done),
    )
    assert progress == [1, 2, 3, 4, 5] and not outcome.cancelled
    assert [r.item_id for r in outcome.results] == [i.id for i in qa.items]
    for result in outcome.results:
        assert result.infrastructure_error == "", (result.item_id, result.fallback_reason)
        calls = [s for s in result.trace["steps"] if s["kind"] == "model_call"]
        assert calls and all(s["detail"]["ok"] for s in calls)
        assert all(s["detail"]["model"] == model.name for s in calls)
        assert result.model_calls == len(calls)
        assert result.prompt_tokens > 100 and result.completion_tokens > 0
        assert result.reply.strip()
        assert [c.name for c in result.checks] == [c for c in CHECKS if c != "judge"]
        assert result.passed == all(c.passed for c in result.checks if c.required)
        assert all(0.0 <= v <= 1.0 for v in result.scores.to_dict().values())
        assert set(result.scores.to_dict()) == set(COMPONENTS)
        assert result.latency_s > 0
    score = bootstrap_mean(list(outcome.item_scores.values()), b=500).scaled(100)
    assert 0.0 <= score.ci_low <= score.estimate <= score.ci_high <= 100.0
