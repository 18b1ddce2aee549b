"""Power, minimum detectable effect (MDE) and sample size for a two-sided two-arm test.

Why: "no significant effect" means nothing without knowing what the experiment could have
detected. From a metric's observed per-unit variance sigma**2 and the arm sizes, the
difference estimator has SE = sigma * sqrt(1/n_c + 1/n_t), and power against an effect delta
is

    normal:  Phi(delta/SE - z) + Phi(-delta/SE - z),          z = Phi^-1(1 - alpha/2)
    t:       P(T' > t_crit) + P(T' < -t_crit),  T' ~ noncentral t(df = n_c + n_t - 2, delta/SE)

(both tails counted, as statsmodels' ``NormalIndPower`` / ``TTestIndPower`` do). The MDE is
the delta that gives the requested power, solved exactly with Brent's method; the textbook
closed form (z_{1-alpha/2} + z_{power}) * SE is its starting bracket and differs only by the
negligible far-tail term. For a ratio metric use the linearized per-unit variance
n * Var(R) (:func:`unit_variance`), with n counting clusters; after CUPED use the adjusted
variance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from scipy import optimize, special
from scipy import stats as sps

from experiments_app.stats.ratio_metrics import ratio_unit_variance
from experiments_app.stats.samples import SampleStats

Distribution = Literal["normal", "t"]


@dataclass(frozen=True, slots=True)
class MdeResult:
    mde_absolute: float
    mde_relative: float  # mde_absolute / baseline_mean; NaN without a baseline
    n_control: int
    n_treatment: int
    alpha: float
    power: float
    std_dev: float
    distribution: Distribution


@dataclass(frozen=True, slots=True)
class SampleSizePlan:
    n_control: int
    n_treatment: int
    n_total: int
    n_total_exact: float  # before rounding up
    treatment_share: float


def _validate(alpha: float, power: float, variance: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not alpha < power < 1.0:
        raise ValueError(f"power must be in (alpha, 1), got {power}")
    if not (variance > 0.0 and math.isfinite(variance)):
        raise ValueError(f"variance must be positive and finite, got {variance}")


def _power_from_ncp(ncp: float, alpha: float, df: float | None) -> float:
    if df is None:
        z = float(special.ndtri(1.0 - alpha / 2.0))
        return float(special.ndtr(ncp - z) + special.ndtr(-z - ncp))
    crit = float(special.stdtrit(df, 1.0 - alpha / 2.0))
    return float(sps.nct.sf(crit, df, ncp) + sps.nct.cdf(-crit, df, ncp))


def achieved_power(
    *,
    effect: float,
    variance: float,
    n_control: int,
    n_treatment: int,
    alpha: float = 0.05,
    distribution: Distribution = "normal",
) -> float:
    """Probability that the two-sided test at ``alpha`` rejects when the true effect is
    ``effect``."""
    if n_control < 2 or n_treatment < 2:
        raise ValueError("each arm needs at least 2 units")
    se = math.sqrt(variance * (1.0 / n_control + 1.0 / n_treatment))
    df = None if distribution == "normal" else float(n_control + n_treatment - 2)
    return _power_from_ncp(abs(effect) / se, alpha, df)


def minimum_detectable_effect(
    *,
    variance: float,
    n_control: int,
    n_treatment: int,
    alpha: float = 0.05,
    power: float = 0.8,
    baseline_mean: float | None = None,
    distribution: Distribution = "normal",
) -> MdeResult:
    """Smallest true difference detected with probability ``power``."""
    _validate(alpha, power, variance)
    if n_control < 2 or n_treatment < 2:
        raise ValueError("each arm needs at least 2 units")
    se = math.sqrt(variance * (1.0 / n_control + 1.0 / n_treatment))
    df = None if distribution == "normal" else float(n_control + n_treatment - 2)
    closed_form = float(special.ndtri(1.0 - alpha / 2.0) + special.ndtri(power))
    upper = 2.0 * closed_form
    while _power_from_ncp(upper, alpha, df) < power:  # t with tiny df needs a wider bracket
        upper *= 2.0
    ncp = optimize.brentq(lambda k: _power_from_ncp(k, alpha, df) - power, 0.0, upper, xtol=1e-12)
    mde = float(ncp) * se
    relative = mde / abs(baseline_mean) if baseline_mean else math.nan
    return MdeResult(
        mde_absolute=mde,
        mde_relative=relative,
        n_control=n_control,
        n_treatment=n_treatment,
        alpha=alpha,
        power=power,
        std_dev=math.sqrt(variance),
        distribution=distribution,
    )


def required_sample_size(
    *,
    variance: float,
    mde: float,
    treatment_share: float = 0.5,
    alpha: float = 0.05,
    power: float = 0.8,
) -> SampleSizePlan:
    """Total units (normal approximation) to detect ``mde`` with the given allocation."""
    _validate(alpha, power, variance)
    if not 0.0 < treatment_share < 1.0:
        raise ValueError(f"treatment_share must be in (0, 1), got {treatment_share}")
    if not mde > 0.0:
        raise ValueError(f"mde must be positive, got {mde}")
    share = treatment_share * (1.0 - treatment_share)

    def power_at(n_total: float) -> float:
        se = math.sqrt(variance / (n_total * share))
        return _power_from_ncp(mde / se, alpha, None)

    z_sum = float(special.ndtri(1.0 - alpha / 2.0) + special.ndtri(power))
    closed_form = (z_sum * z_sum * variance / (mde * mde)) / share
    lower = closed_form / 4.0
    if power_at(lower) >= power:  # only for absurdly low power targets
        n_exact = lower
    else:
        n_exact = float(optimize.brentq(lambda n: power_at(n) - power, lower, closed_form * 1.01))
    n_control = math.ceil(n_exact * (1.0 - treatment_share))
    n_treatment = math.ceil(n_exact * treatment_share)
    return SampleSizePlan(
        n_control=n_control,
        n_treatment=n_treatment,
        n_total=n_control + n_treatment,
        n_total_exact=n_exact,
        treatment_share=treatment_share,
    )


def unit_variance(stats: SampleStats, *, kind: Literal["mean", "ratio"] = "mean") -> float:
    """Per-randomization-unit variance of the metric: s_y**2, or n * Var(R) for a ratio."""
    if kind == "mean":
        return stats.var_y
    if kind == "ratio":
        return ratio_unit_variance(stats)
    raise ValueError(f"kind must be 'mean' or 'ratio', got {kind!r}")
