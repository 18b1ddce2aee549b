"""The benchmark's harness is what it claims to be (the timing itself runs in `make bench`)."""

from __future__ import annotations

from bench.hsa import benchmark_harness, gold_pool, measure_pairs_per_second
from harness_app.harness.validation import validate_harness
from harness_app.hsa.policy import HSA_TRAIN
from harness_app.hsa.verify import verify_pair


def test_benchmark_harness_has_20_skills_and_30_tools() -> None:
    harness = benchmark_harness()
    assert (len(harness.skills), len(harness.tools)) == (20, 30)
    assert validate_harness(harness) == []
    pool = gold_pool(harness)
    assert len(pool) == 8 and all(verify_pair(harness, gold) == [] for gold in pool)
    assert measure_pairs_per_second(harness, pool, HSA_TRAIN, pairs=20, warmup=5) > 0
