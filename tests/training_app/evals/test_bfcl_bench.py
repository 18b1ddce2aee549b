"""The BFCL scoring benchmark scores what it claims (the timing itself runs in `make bench`)."""

from __future__ import annotations

from collections import Counter

from bench.bfcl_scoring import PER_CATEGORY, benchmark_items, decode_all, score_all
from training_app.evals.bfcl import CATEGORIES


def test_the_benchmark_scores_1000_recorded_strings_100_per_category() -> None:
    items = benchmark_items()
    assert len(items) == 1_000
    assert Counter(category for category, *_ in items) == dict.fromkeys(CATEGORIES, PER_CATEGORY)
    assert all(isinstance(result, str) for *_, result in items)
    valid = score_all(items)
    # a realistic mix: right and wrong answers, decodable and not
    assert 200 < valid < 800
    assert 300 < decode_all(items) < 1_000
