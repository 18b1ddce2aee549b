"""CUPED: variance reduction with a pre-period covariate (Deng, Xu, Kohavi & Walker, 2013).

Why: GMV per UV is heavy-tailed, so intervals are wide; a unit's own GMV (or views) before
the experiment predicts much of that noise, and it cannot be affected by treatment. Each arm's
mean is replaced by

    ybar_adj = ybar - theta * (cbar - mu_c),      mu_c = pooled covariate mean (both arms),

with ``theta`` the within-arm pooled regression slope

    theta = sum_a (n_a - 1) cov_a(y, c) / sum_a (n_a - 1) var_a(c).

With that theta the adjusted difference equals, to rounding, the treatment coefficient of the
OLS fit ``y ~ 1 + T + c`` (common slope), which is what the tests check. The arm variance is
``(var_y - 2 theta cov_yc + theta**2 var_c) / n`` - the estimation error of theta is
O(1/n) and ignored, as in the paper.

Ratio metrics (cluster units): the same adjustment applied to the linearized ratios. With
R_y = sum y / sum x and R_c = sum c / sum x, the influence terms are u = (y - R_y x)/xbar and
v = (c - R_c x)/xbar; theta is their pooled slope and R_adj = R_y - theta (R_c - mu_Rc), with
variance (var_u - 2 theta cov_uv + theta**2 var_v)/n (Deng, Knoblich & Lu, KDD 2018).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from experiments_app.stats.mean_effects import ArmEstimate, Effect, absolute_lift, relative_lift
from experiments_app.stats.samples import SampleStats


@dataclass(frozen=True, slots=True)
class CupedResult:
    """CUPED-adjusted effects, the slope used, and how much variance it removed.

    ``variance_reduction`` = 1 - Var(adjusted difference) / Var(unadjusted difference); 0.3
    means the interval is sqrt(0.7) ~ 84% as wide, worth ~43% more traffic.
    """

    absolute: Effect
    relative: Effect
    theta: float
    variance_reduction: float
    control: ArmEstimate
    treatment: ArmEstimate


@dataclass(frozen=True, slots=True)
class _Linearized:
    """Per-arm moments of the (possibly linearized) outcome u and covariate v."""

    n: int
    estimate: float  # ybar or R_y
    covariate: float  # cbar or R_c
    var_u: float
    var_v: float
    cov_uv: float


def _plain(stats: SampleStats) -> _Linearized:
    return _Linearized(stats.n, stats.mean_y, stats.mean_c, stats.var_y, stats.var_c, stats.cov_yc)


def _ratio(stats: SampleStats) -> _Linearized:
    sum_x = stats.sum_x
    if sum_x is None or stats.sum_xc is None:
        raise ValueError("CUPED on a ratio metric needs the ratio sums and sum_xc")
    if stats.n < 2 or sum_x <= 0.0:
        nan = math.nan
        return _Linearized(stats.n, nan, nan, nan, nan, nan)
    mean_x = sum_x / stats.n
    r_y = stats.sum_y / sum_x
    r_c = stats.mean_c / mean_x
    var_x, cov_xy, cov_xc = stats.var_x, stats.cov_xy, stats.cov_xc
    scale = mean_x * mean_x
    var_u = (stats.var_y - 2.0 * r_y * cov_xy + r_y * r_y * var_x) / scale
    var_v = (stats.var_c - 2.0 * r_c * cov_xc + r_c * r_c * var_x) / scale
    cov_uv = (stats.cov_yc - r_c * cov_xy - r_y * cov_xc + r_y * r_c * var_x) / scale
    return _Linearized(stats.n, r_y, r_c, max(var_u, 0.0), max(var_v, 0.0), cov_uv)


def _require_covariate(control: SampleStats, treatment: SampleStats) -> None:
    if not (control.has_covariate and treatment.has_covariate):
        raise ValueError("CUPED needs sum_c, sum_c2 and sum_yc (pre-period covariate) on both arms")


def _pooled_theta(arms: tuple[_Linearized, _Linearized]) -> float:
    numerator = sum((a.n - 1) * a.cov_uv for a in arms if a.n >= 2)
    denominator = sum((a.n - 1) * a.var_v for a in arms if a.n >= 2)
    if not (denominator > 0.0 and math.isfinite(numerator)):
        return 0.0  # a constant (or missing) covariate carries no information
    return numerator / denominator


def _adjust(
    control: _Linearized, treatment: _Linearized, center: float, alpha: float, kind: str
) -> CupedResult:
    theta = _pooled_theta((control, treatment))

    def adjusted(arm: _Linearized) -> ArmEstimate:
        var = arm.var_u - 2.0 * theta * arm.cov_uv + theta * theta * arm.var_v
        est = arm.estimate - theta * (arm.covariate - center)
        return ArmEstimate(est, max(var, 0.0) / arm.n if arm.n else math.nan, arm.n)

    adj_c, adj_t = adjusted(control), adjusted(treatment)
    if control.n >= 2 and treatment.n >= 2:
        plain_var = control.var_u / control.n + treatment.var_u / treatment.n
    else:
        plain_var = math.nan
    adjusted_var = adj_c.variance + adj_t.variance
    reduction = 1.0 - adjusted_var / plain_var if plain_var > 0 else math.nan
    method = "cuped" if kind == "mean" else "cuped-ratio"
    return CupedResult(
        absolute=absolute_lift(adj_c, adj_t, alpha=alpha, method=method),
        relative=relative_lift(adj_c, adj_t, alpha=alpha, method=f"{method}-delta"),
        theta=theta,
        variance_reduction=reduction,
        control=adj_c,
        treatment=adj_t,
    )


def cuped_theta(control: SampleStats, treatment: SampleStats) -> float:
    """Within-arm pooled slope of y on the covariate (the OLS common slope)."""
    _require_covariate(control, treatment)
    return _pooled_theta((_plain(control), _plain(treatment)))


def cuped_effect(
    control: SampleStats, treatment: SampleStats, *, alpha: float = 0.05
) -> CupedResult:
    """CUPED-adjusted difference and relative lift of per-unit means."""
    _require_covariate(control, treatment)
    total_n = control.n + treatment.n
    sum_c = (control.sum_c or 0.0) + (treatment.sum_c or 0.0)
    center = sum_c / total_n if total_n else math.nan
    return _adjust(_plain(control), _plain(treatment), center, alpha, "mean")


def cuped_ratio_effect(
    control: SampleStats, treatment: SampleStats, *, alpha: float = 0.05
) -> CupedResult:
    """CUPED on the cluster ratio estimator (covariate = the unit's pre-period total)."""
    _require_covariate(control, treatment)
    sum_x = (control.sum_x or 0.0) + (treatment.sum_x or 0.0)
    sum_c = (control.sum_c or 0.0) + (treatment.sum_c or 0.0)
    center = sum_c / sum_x if sum_x > 0 else math.nan
    return _adjust(_ratio(control), _ratio(treatment), center, alpha, "ratio")
