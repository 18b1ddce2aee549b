"""Readout page filters: the colour of an effect follows its direction, not significance alone."""

from __future__ import annotations

import math

import pytest

from experiments_app.stats.mean_effects import ArmEstimate, relative_lift
from experiments_app.templatetags.readout_format import effect_tone, tone_title


def _lift(treatment_mean: float, *, variance: float = 1e-4):  # type: ignore[no-untyped-def]
    """Relative lift of treatment vs a control mean of 10 (SE of each arm mean 0.01)."""
    return relative_lift(
        ArmEstimate(10.0, variance, 1_000), ArmEstimate(treatment_mean, variance, 1_000)
    )


@pytest.mark.parametrize(
    ("treatment_mean", "higher_is_better", "tone"),
    [
        (9.0, True, "bad"),  # a significant drop of a metric where more is better
        (11.0, True, "good"),
        (9.0, False, "good"),  # e.g. latency: a significant drop is an improvement
        (11.0, False, "bad"),
        (10.001, True, "neutral"),  # +0.01%, z ~ 0.07
        (9.999, False, "neutral"),
    ],
)
def test_effect_tone(treatment_mean: float, higher_is_better: bool, tone: str) -> None:
    effect = _lift(treatment_mean)
    assert effect.significant == (tone != "neutral")
    assert effect_tone(effect, higher_is_better) == tone


def test_undefined_or_missing_effects_are_neutral() -> None:
    undefined = relative_lift(ArmEstimate(0.0, 1.0, 10), ArmEstimate(1.0, 1.0, 10))
    assert math.isnan(undefined.estimate)
    assert effect_tone(undefined) == "neutral"
    assert effect_tone(None) == "neutral" and effect_tone("") == "neutral"


def test_tone_titles_say_it_in_words() -> None:
    assert tone_title("good") == "significant improvement"
    assert tone_title("bad") == "significant deterioration"
    assert tone_title("neutral") == "not significant"
