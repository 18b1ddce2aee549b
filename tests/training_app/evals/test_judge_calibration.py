"""Judge calibration statistics against hand computations and statsmodels / numpy."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa

from training_app.evals.judge_calibration import (
    LABELS,
    agreement_rate,
    bootstrap_intervals,
    calibration_report,
    cohens_kappa,
    confusion_matrix,
    position_bias_rate,
)


def _labels_from_table(
    table: list[list[int]], labels: tuple[str, ...]
) -> tuple[list[str], list[str]]:
    human: list[str] = []
    judge: list[str] = []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            human += [labels[i]] * count
            judge += [labels[j]] * count
    return human, judge


def test_kappa_of_a_hand_computed_2x2_table() -> None:
    # po = 35/50 = 0.7; pe = (25*30 + 25*20) / 50^2 = 0.5; kappa = (0.7 - 0.5) / 0.5 = 0.4
    human, judge = _labels_from_table([[20, 5], [10, 15]], ("one", "two"))
    assert agreement_rate(human, judge) == pytest.approx(0.7)
    assert cohens_kappa(human, judge, labels=("one", "two")) == pytest.approx(0.4, abs=1e-12)
    assert confusion_matrix(human, judge, ("one", "two")) == [[20, 5], [10, 15]]


def test_kappa_of_a_hand_computed_3x3_table_and_statsmodels_agree() -> None:
    table = [[10, 2, 1], [3, 8, 2], [1, 1, 12]]
    # po = 30/40; pe = (13*14 + 13*11 + 14*15) / 40^2 = 535/1600
    expected = (30 / 40 - 535 / 1600) / (1 - 535 / 1600)
    human, judge = _labels_from_table(table, LABELS)
    assert confusion_matrix(human, judge) == table
    assert cohens_kappa(human, judge) == pytest.approx(expected, abs=1e-12)
    assert cohens_kappa(human, judge) == pytest.approx(
        float(sm_kappa(np.array(table), return_results=False)), abs=1e-12
    )
    assert expected == pytest.approx(0.6244131455, abs=1e-9)


def test_kappa_is_undefined_when_everyone_says_the_same() -> None:
    assert cohens_kappa(["tie"] * 5, ["tie"] * 5) is None
    assert agreement_rate([], []) is None


def test_unknown_labels_and_mismatched_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="not in"):
        confusion_matrix(["one", "both_bad"], ["one", "tie"])
    with pytest.raises(ValueError, match="2 human labels but 1"):
        cohens_kappa(["one", "two"], ["one"])


def test_bootstrap_intervals_contain_the_estimate_and_repeat_with_a_seed() -> None:
    human, judge = _labels_from_table([[10, 2, 1], [3, 8, 2], [1, 1, 12]], LABELS)
    first = bootstrap_intervals(human, judge, seed=7, n_resamples=1000)
    again = bootstrap_intervals(human, judge, seed=7, n_resamples=1000)
    other = bootstrap_intervals(human, judge, seed=8, n_resamples=1000)
    assert first == again
    assert first != other
    agreement = agreement_rate(human, judge)
    kappa = cohens_kappa(human, judge)
    assert first["agreement"] is not None and first["kappa"] is not None
    assert agreement is not None and kappa is not None
    assert first["agreement"][0] <= agreement <= first["agreement"][1]
    assert first["kappa"][0] <= kappa <= first["kappa"][1]
    # the agreement interval is the numpy percentile bootstrap, computed independently here
    rng = np.random.default_rng(7)
    h, j = np.array(human), np.array(judge)
    draws = rng.integers(0, len(h), size=(1000, len(h)))
    expected = np.percentile((h[draws] == j[draws]).mean(axis=1), [2.5, 97.5])
    assert first["agreement"] == pytest.approx(list(expected))


def test_position_bias_rate_and_report() -> None:
    assert position_bias_rate([True, False, False, True]) == 0.5
    assert position_bias_rate([]) is None
    report = calibration_report(
        ["one", "two", "tie", "one"],
        ["one", "two", "one", "one"],
        order_disagreements=[False, False, True, False],
        unparsed=2,
        skipped_no_majority=1,
        n_resamples=200,
        seed=1,
    )
    assert report["n"] == 4
    assert report["agreement"] == 0.75
    assert report["confusion"] == [[2, 0, 0], [1, 0, 0], [0, 0, 1]]
    assert report["position_bias_rate"] == 0.25
    assert report["unparsed"] == 2 and report["skipped_no_majority"] == 1
    assert report["human_labels"] == {"one": 2, "tie": 1, "two": 1}
    assert report["labels"] == ["one", "tie", "two"]


def test_human_majority_counts_both_bad_as_tie_and_skips_splits() -> None:
    from training_app.evals.judge_calibration import human_majority

    assert human_majority(["one", "one", "two"]) == "one"
    assert human_majority(["both_bad", "tie", "one"]) == "tie"
    assert human_majority(["both_bad", "two", "two"]) == "two"
    assert human_majority(["one", "two"]) is None
    assert human_majority(["one", "two", "both_bad"]) is None
    assert human_majority([]) is None
    with pytest.raises(ValueError, match="not one"):
        human_majority(["A"])
