"""Always-valid intervals, so the readout can be looked at every day.

Why: a fixed-n 95% interval checked daily for 14 days excludes a true zero effect on *some*
day far more than 5% of the time (the tests measure over 20% with 14 looks), which is how single
"significant days" get reported. A confidence sequence (CS) is a sequence of intervals that
covers the truth at *all* times simultaneously with probability >= 1 - alpha, so stopping
or peeking whenever you like is safe.

Method: the asymptotic confidence sequence of Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas,
"Time-uniform central limit theory and asymptotic confidence sequences" (arXiv:2103.06476),
their Gaussian-mixture AsympCS for i.i.d. data:

    mu_hat_t +- sigma_hat_t * sqrt(2 (t rho**2 + 1)/(t**2 rho**2) * log(sqrt(t rho**2 + 1)/alpha))

with t the number of units so far and sigma_hat_t the standard deviation of the per-unit
influence term. For a two-arm difference of means with allocation pi the influence term is the
IPW pseudo-outcome, whose variance is sigma_T**2/pi + sigma_C**2/(1-pi); so
sigma_hat_t / sqrt(t) is exactly the usual Welch standard error and

    half-width = SE_t * M(t),
    M(t) = sqrt((t rho**2 + 1) / (t rho**2) * log((t rho**2 + 1) / alpha**2)).

The same multiplier applies to any asymptotically linear estimator (ratio/delta method, CUPED)
because only the CLT for its influence term is used. ``rho`` must be fixed before the data are
seen; it is chosen to make the CS tightest at the planned sample size t*:

    rho**2 = (-W_{-1}(-alpha**2 / e) - 1) / t*

(W_{-1}: lower branch of Lambert's W; the exact minimiser of M(t*) - the paper's
approximation is (2 log(1/alpha) + log(1 + 2 log(1/alpha))) / t*). The matching always-valid
p-value - the smallest alpha whose CS excludes 0 - is

    p_t = min(1, sqrt(t rho**2 + 1) * exp(-z_t**2 t rho**2 / (2 (t rho**2 + 1)))),  z_t = est/SE.

Each look's p_t and interval hold at that look; over a series of looks the readout reports
the running minimum of p_t and the running intersection of the intervals
(:func:`running_sequence`): still valid uniformly over time, and consistent with each other
(the running p-value falls below alpha exactly when some look's interval excluded 0).

The relative lift's CS is built on log(m_t/m_c) with the delta-method SE
sqrt(v_t/m_t**2 + v_c/m_c**2) and exponentiated, so it never reaches below -100% (GMV per
UV cannot fall by more than all of it); undefined when an arm's mean is not positive.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import overload

import numpy as np
import numpy.typing as npt
from scipy.special import lambertw

from experiments_app.stats.mean_effects import ArmEstimate, Effect


@dataclass(frozen=True, slots=True)
class SequentialResult:
    """Always-valid absolute and relative effects at the current look."""

    absolute: Effect
    relative: Effect
    rho: float
    planned_units: int
    units: int
    multiplier: float


def optimal_rho(planned_units: int, alpha: float = 0.05) -> float:
    """The mixture scale rho that minimises the CS width at ``planned_units`` units."""
    if planned_units < 1:
        raise ValueError(f"planned_units must be >= 1, got {planned_units}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    s = -float(lambertw(-(alpha**2) / math.e, k=-1).real) - 1.0
    return math.sqrt(s / planned_units)


@overload
def boundary_multiplier(units: float, rho: float, alpha: float) -> float: ...
@overload
def boundary_multiplier(
    units: npt.NDArray[np.float64], rho: float, alpha: float
) -> npt.NDArray[np.float64]: ...
def boundary_multiplier(
    units: float | npt.NDArray[np.float64], rho: float, alpha: float
) -> float | npt.NDArray[np.float64]:
    """M(t): the CS half-width in units of the standard error (vectorised over t)."""
    s = np.asarray(units, dtype=np.float64) * rho * rho
    m = np.sqrt((s + 1.0) / s * np.log((s + 1.0) / (alpha * alpha)))
    return float(m) if np.ndim(m) == 0 else m


@overload
def always_valid_p_value(z: float, units: float, rho: float) -> float: ...
@overload
def always_valid_p_value(
    z: npt.NDArray[np.float64], units: npt.NDArray[np.float64] | float, rho: float
) -> npt.NDArray[np.float64]: ...
def always_valid_p_value(
    z: float | npt.NDArray[np.float64],
    units: float | npt.NDArray[np.float64],
    rho: float,
) -> float | npt.NDArray[np.float64]:
    """Smallest alpha at which the CS (with this rho) excludes zero."""
    s = np.asarray(units, dtype=np.float64) * rho * rho
    zz = np.asarray(z, dtype=np.float64)
    p = np.minimum(1.0, np.sqrt(s + 1.0) * np.exp(-zz * zz * s / (2.0 * (s + 1.0))))
    return float(p) if np.ndim(p) == 0 else p


def _cs_effect(
    method: str,
    estimate: float,
    std_error: float,
    multiplier: float,
    units: int,
    rho: float,
    alpha: float,
    control: ArmEstimate,
    treatment: ArmEstimate,
) -> Effect:
    if math.isfinite(estimate) and math.isfinite(std_error) and std_error > 0.0:
        half = multiplier * std_error
        low, high = estimate - half, estimate + half
        p = always_valid_p_value(estimate / std_error, units, rho)
    else:
        low = high = p = math.nan
    return Effect(
        method=method,
        estimate=estimate,
        ci_low=low,
        ci_high=high,
        p_value=p,
        alpha=alpha,
        std_error=std_error,
        df=math.inf,
        control_mean=control.estimate,
        treatment_mean=treatment.estimate,
        control_n=control.n,
        treatment_n=treatment.n,
    )


def sequential_effect(
    control: ArmEstimate,
    treatment: ArmEstimate,
    *,
    planned_units: int,
    alpha: float = 0.05,
) -> SequentialResult:
    """Asymptotic CS for treatment - control and (delta method) treatment/control - 1.

    ``planned_units`` is the total number of randomization units (both arms) the experiment
    is planned to reach; it only tunes where the CS is tightest, validity holds at every t.
    """
    rho = optimal_rho(planned_units, alpha)
    units = control.n + treatment.n
    multiplier = boundary_multiplier(float(units), rho, alpha) if units > 0 else math.nan
    diff = treatment.estimate - control.estimate
    se = math.sqrt(control.variance + treatment.variance)
    mc, mt = control.estimate, treatment.estimate
    if mc > 0.0 and mt > 0.0 and math.isfinite(mc) and math.isfinite(mt):
        log_ratio = math.log(mt / mc)
        log_se = math.sqrt(treatment.variance / mt**2 + control.variance / mc**2)
    else:
        log_ratio = log_se = math.nan
    args = (multiplier, units, rho, alpha, control, treatment)
    on_log = _cs_effect("asymptotic-cs-log", log_ratio, log_se, *args)
    relative = replace(
        on_log,
        estimate=math.expm1(log_ratio),
        ci_low=math.expm1(on_log.ci_low),
        ci_high=math.expm1(on_log.ci_high),
    )
    return SequentialResult(
        absolute=_cs_effect("asymptotic-cs", diff, se, *args),
        relative=relative,
        rho=rho,
        planned_units=planned_units,
        units=units,
        multiplier=multiplier,
    )


def _running(effects: Sequence[Effect]) -> list[Effect]:
    """Running minimum p-value and running intersection of the intervals over looks
    (undefined looks carry the previous bounds forward). Should the intersection ever be
    empty - the asymptotic boundary is only approximately valid in small samples - that
    look's own interval is kept."""
    out: list[Effect] = []
    low, high, p = -math.inf, math.inf, math.inf
    for effect in effects:
        if math.isfinite(effect.ci_low) and math.isfinite(effect.ci_high):
            if max(low, effect.ci_low) <= min(high, effect.ci_high):
                low, high = max(low, effect.ci_low), min(high, effect.ci_high)
            else:
                low, high = effect.ci_low, effect.ci_high
        if math.isfinite(effect.p_value):
            p = min(p, effect.p_value)
        if math.isinf(low) or math.isinf(p):
            out.append(effect)  # nothing defined yet
        else:
            out.append(replace(effect, ci_low=low, ci_high=high, p_value=p))
    return out


def running_sequence(looks: Sequence[SequentialResult]) -> tuple[SequentialResult, ...]:
    """The looks (in time order) with running-minimum p-values and running-intersection
    intervals: what a readout that has been looked at every day may claim."""
    absolute = _running([look.absolute for look in looks])
    relative = _running([look.relative for look in looks])
    return tuple(
        replace(look, absolute=a, relative=r)
        for look, a, r in zip(looks, absolute, relative, strict=True)
    )
