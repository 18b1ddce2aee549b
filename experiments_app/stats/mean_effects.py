"""Two-arm effects on means: Welch difference, relative lift (delta / log-ratio), Fieller.

Every estimator in the package reduces an arm to an :class:`ArmEstimate` - a point estimate,
the variance of that estimate and the number of randomization units - so the same interval
code serves plain means, cluster ratio estimators and CUPED-adjusted means. The arms are
independent (randomized separately), so variances add.

Quantiles: all intervals use Student t with the Welch-Satterthwaite degrees of freedom of the
absolute difference. For the sample sizes of a live experiment that is the normal quantile;
for small n it is the usual Welch correction, and it makes the Fieller interval exclude
zero lift exactly when the Welch test rejects.

Degenerate data (an arm with fewer than 2 units, a zero control mean) produce NaN fields
rather than exceptions: a readout on the first hour of an experiment must render, not crash.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from scipy import special

from experiments_app.stats.samples import SampleStats

# Above this many degrees of freedom t and normal quantiles agree to ~1e-7 relative.
# scipy.special's ufuncs are used instead of scipy.stats distributions: same numbers, ~100x
# less call overhead, which matters for a readout made of hundreds of small computations.
_NORMAL_DF = 1e7


@dataclass(frozen=True, slots=True)
class ArmEstimate:
    """One arm's point estimate, the variance of that estimate (SE**2), and its unit count."""

    estimate: float
    variance: float
    n: int

    @property
    def std_error(self) -> float:
        return math.sqrt(self.variance) if self.variance >= 0 else math.nan


@dataclass(frozen=True, slots=True)
class Effect:
    """An effect of treatment vs control with its interval and two-sided p-value.

    ``estimate``/``ci_low``/``ci_high`` are absolute differences or relative lifts
    (treatment/control - 1) depending on ``method``. ``bounded`` is False only for a Fieller
    set that is not a finite interval; then the CI is reported as (-inf, inf).
    """

    method: str
    estimate: float
    ci_low: float
    ci_high: float
    p_value: float
    alpha: float
    std_error: float
    df: float
    control_mean: float
    treatment_mean: float
    control_n: int
    treatment_n: int
    bounded: bool = True

    @property
    def is_defined(self) -> bool:
        return math.isfinite(self.estimate) and math.isfinite(self.p_value)

    @property
    def significant(self) -> bool:
        return self.is_defined and self.p_value < self.alpha


def arm_mean(stats: SampleStats) -> ArmEstimate:
    """Sample mean of y and its variance s**2/n."""
    if stats.n == 0:
        return ArmEstimate(math.nan, math.nan, 0)
    return ArmEstimate(stats.mean_y, stats.var_y / stats.n, stats.n)


def welch_df(control: ArmEstimate, treatment: ArmEstimate) -> float:
    """Welch-Satterthwaite degrees of freedom of (treatment - control)."""
    vc, vt = control.variance, treatment.variance
    if control.n < 2 or treatment.n < 2 or not (math.isfinite(vc) and math.isfinite(vt)):
        return math.nan
    denominator = vc * vc / (control.n - 1) + vt * vt / (treatment.n - 1)
    if denominator == 0.0:
        return math.inf
    return (vc + vt) ** 2 / denominator


def t_quantile(alpha: float, df: float) -> float:
    """Two-sided critical value; normal beyond ``_NORMAL_DF`` or for infinite df."""
    if math.isnan(df):
        return math.nan
    if df > _NORMAL_DF:
        return float(special.ndtri(1.0 - alpha / 2.0))
    return float(special.stdtrit(df, 1.0 - alpha / 2.0))


def two_sided_p(statistic: float, df: float) -> float:
    if math.isnan(statistic) or math.isnan(df):
        return math.nan
    if df > _NORMAL_DF:
        return float(2.0 * special.ndtr(-abs(statistic)))
    return float(2.0 * special.stdtr(df, -abs(statistic)))


def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")


def _interval_effect(
    method: str,
    estimate: float,
    std_error: float,
    df: float,
    alpha: float,
    control: ArmEstimate,
    treatment: ArmEstimate,
) -> Effect:
    """estimate +- t * SE, with the p-value of estimate/SE (so CI and p always agree)."""
    if not (math.isfinite(estimate) and math.isfinite(std_error)):
        low = high = p = math.nan
    elif std_error == 0.0:
        # Constant data: the difference is known exactly.
        low = high = estimate
        p = 1.0 if estimate == 0.0 else 0.0
    else:
        q = t_quantile(alpha, df)
        low, high = estimate - q * std_error, estimate + q * std_error
        p = two_sided_p(estimate / std_error, df)
    return Effect(
        method=method,
        estimate=estimate,
        ci_low=low,
        ci_high=high,
        p_value=p,
        alpha=alpha,
        std_error=std_error,
        df=df,
        control_mean=control.estimate,
        treatment_mean=treatment.estimate,
        control_n=control.n,
        treatment_n=treatment.n,
    )


def absolute_lift(
    control: ArmEstimate, treatment: ArmEstimate, *, alpha: float = 0.05, method: str = "welch"
) -> Effect:
    """treatment - control with SE sqrt(v_c + v_t) and a Welch t interval."""
    _check_alpha(alpha)
    diff = treatment.estimate - control.estimate
    se = math.sqrt(control.variance + treatment.variance)
    return _interval_effect(
        method, diff, se, welch_df(control, treatment), alpha, control, treatment
    )


def welch_difference(
    control: SampleStats, treatment: SampleStats, *, alpha: float = 0.05
) -> Effect:
    """Welch's unequal-variance t interval for the difference of per-unit means."""
    return absolute_lift(arm_mean(control), arm_mean(treatment), alpha=alpha)


def relative_lift(
    control: ArmEstimate,
    treatment: ArmEstimate,
    *,
    alpha: float = 0.05,
    scale: Literal["delta", "log"] = "delta",
    method: str | None = None,
) -> Effect:
    """treatment/control - 1 by the delta method.

    ``scale="delta"``: Var(m_t/m_c) ~ v_t/m_c**2 + m_t**2 v_c/m_c**4, symmetric interval.
    ``scale="log"``: interval on log(m_t/m_c) with variance v_t/m_t**2 + v_c/m_c**2, then
    exponentiated - never crosses -100% and is better for skewed small samples; needs both
    means positive.
    """
    _check_alpha(alpha)
    mc, mt = control.estimate, treatment.estimate
    df = welch_df(control, treatment)
    if scale == "delta":
        name = method or "delta"
        if mc == 0.0 or not math.isfinite(mc):
            return _interval_effect(name, math.nan, math.nan, df, alpha, control, treatment)
        ratio = mt / mc
        se = math.sqrt(treatment.variance / mc**2 + ratio**2 * control.variance / mc**2)
        return _interval_effect(name, ratio - 1.0, se, df, alpha, control, treatment)
    if scale != "log":
        raise ValueError(f"scale must be 'delta' or 'log', got {scale!r}")
    name = method or "delta-log"
    if not (mc > 0.0 and mt > 0.0):
        return _interval_effect(name, math.nan, math.nan, df, alpha, control, treatment)
    log_ratio = math.log(mt / mc)
    se_log = math.sqrt(treatment.variance / mt**2 + control.variance / mc**2)
    on_log = _interval_effect(name, log_ratio, se_log, df, alpha, control, treatment)
    return Effect(
        method=name,
        estimate=math.expm1(log_ratio),
        ci_low=math.expm1(on_log.ci_low),
        ci_high=math.expm1(on_log.ci_high),
        p_value=on_log.p_value,
        alpha=alpha,
        std_error=se_log,  # on the log scale
        df=df,
        control_mean=mc,
        treatment_mean=mt,
        control_n=control.n,
        treatment_n=treatment.n,
    )


@dataclass(frozen=True, slots=True)
class FiellerSet:
    """The Fieller confidence set for rho = mu_t/mu_c.

    ``kind``: ``"bounded"`` -> [low, high]; ``"exclusive"`` -> (-inf, low] U [high, inf)
    (the control mean is not distinguishable from 0 but the data still exclude a band);
    ``"unbounded"`` -> the whole real line (low = -inf, high = inf).
    """

    kind: Literal["bounded", "exclusive", "unbounded"]
    low: float
    high: float

    def contains(self, ratio: float) -> bool:
        if self.kind == "bounded":
            return self.low <= ratio <= self.high
        if self.kind == "exclusive":
            return ratio <= self.low or ratio >= self.high
        return True


def fieller_set(control: ArmEstimate, treatment: ArmEstimate, *, alpha: float = 0.05) -> FiellerSet:
    """All rho with (m_t - rho m_c)**2 <= q**2 (v_t + rho**2 v_c) (independent arms).

    Expanding gives A rho**2 - 2 m_t m_c rho + C <= 0 with A = m_c**2 - q**2 v_c and
    C = m_t**2 - q**2 v_t. A > 0 (control mean significantly non-zero) gives a finite interval;
    A <= 0 gives either the complement of an interval or everything - reported explicitly
    instead of a misleading finite number.
    """
    _check_alpha(alpha)
    a, b = treatment.estimate, control.estimate
    va, vb = treatment.variance, control.variance
    q = t_quantile(alpha, welch_df(control, treatment))
    if not all(math.isfinite(v) for v in (a, b, va, vb, q)):
        return FiellerSet("unbounded", -math.inf, math.inf)
    quad = b * b - q * q * vb
    # Discriminant / 4, written so that it stays non-negative when quad > 0.
    disc = q * q * (a * a * vb + b * b * va - q * q * va * vb)
    if quad > 0.0:
        root = math.sqrt(max(disc, 0.0))
        return FiellerSet("bounded", (a * b - root) / quad, (a * b + root) / quad)
    if quad < 0.0 and disc > 0.0:
        root = math.sqrt(disc)
        lo, hi = sorted(((a * b - root) / quad, (a * b + root) / quad))
        return FiellerSet("exclusive", lo, hi)
    return FiellerSet("unbounded", -math.inf, math.inf)


def fieller_relative_lift(
    control: ArmEstimate, treatment: ArmEstimate, *, alpha: float = 0.05
) -> Effect:
    """Relative lift with Fieller's interval (reported as (-inf, inf) unless bounded).

    rho = 1 lies in the Fieller set exactly when |m_t - m_c| <= q sqrt(v_t + v_c), so the
    p-value is the Welch p-value of the difference.
    """
    fs = fieller_set(control, treatment, alpha=alpha)
    welch = absolute_lift(control, treatment, alpha=alpha)
    mc, mt = control.estimate, treatment.estimate
    estimate = mt / mc - 1.0 if mc != 0.0 and math.isfinite(mc) else math.nan
    bounded = fs.kind == "bounded"
    return Effect(
        method="fieller",
        estimate=estimate,
        ci_low=fs.low - 1.0 if bounded else -math.inf,
        ci_high=fs.high - 1.0 if bounded else math.inf,
        p_value=welch.p_value,
        alpha=alpha,
        std_error=math.nan,
        df=welch.df,
        control_mean=mc,
        treatment_mean=mt,
        control_n=control.n,
        treatment_n=treatment.n,
        bounded=bounded,
    )
