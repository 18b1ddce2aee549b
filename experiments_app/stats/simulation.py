"""A realistic live-commerce traffic generator with a known true lift (pure numpy).

Used by the statistics tests (coverage, null behaviour), the readout benchmark and the
Django ``simulate_traffic`` command, so all three exercise the estimators on data shaped like
the real thing rather than on Gaussians:

* UVs arrive on a first day drawn with day-of-week seasonality s_d and return on each later
  day with probability ``return_rate``; each UV watches one room.
* Per UV: engagement g ~ Gamma(k, 1/k), a buyer propensity b ~ Gamma(k_b, 1/k_b) with small
  k_b (a few repeat buyers make most orders) and a spend level v ~ LogNormal (all mean 1); per
  room: an audience effect h ~ Gamma(k_r, 1/k_r) (mean 1) - the intra-room correlation that
  makes per-UV analysis of room-randomized data wrong.
* GMV on an active day: orders ~ Poisson(mu_p b g h s_d (1 + lift)), each worth
  v * LogNormal(m, sigma), refunded (net 0) with probability ``refund_rate`` - so most UVs
  have zero GMV and purchasers are heavy-tailed. "Confirmed receipts minus refunds".
* Item-page views: zero-inflated negative binomial - a share of UVs never opens item pages,
  the rest draw Poisson(lambda_v g h s_d (1 + lift)) (Poisson-gamma through g).
* Pre-period covariates: the same UV's GMV and views over ``pre_days`` before the
  experiment, sharing g, v and h with the outcome (which is what CUPED exploits).
* Treatment multiplies every treated unit-day's expected orders / views by (1 + lift), so
  the true relative lift of the per-UV (or per-UV-day) mean is exactly ``lift``; the true
  control means are computed in closed form (:class:`TrueLift`).
* Randomization unit: ``uv``, ``room`` or ``room_day`` (independent Bernoulli assignment
  with the configured treatment weight, as a hash assignment would do).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from experiments_app.stats.samples import SampleStats

Unit = Literal["uv", "room", "room_day"]
Metric = Literal["gmv", "views"]
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def _weighted_count(index: IntArray, weights: FloatArray, size: int) -> FloatArray:
    """Sum of ``weights`` per index value (0..size-1): the per-unit rollup."""
    return np.asarray(np.bincount(index, weights=weights, minlength=size), dtype=np.float64)


@dataclass(frozen=True, slots=True)
class TrafficModel:
    """Generative parameters; the defaults give ~4% purchasers and ~2 views per active UV."""

    days: int = 14
    pre_days: int = 14
    weekday_amplitude: float = 0.3
    weekly_peak_day: int = 5
    return_rate: float = 0.12
    engagement_shape: float = 0.8
    buyer_shape: float = 0.12
    spend_level_sd: float = 0.7
    orders_per_active_day: float = 0.02
    order_value_log_mean: float = 4.0
    order_value_log_sd: float = 1.0
    refund_rate: float = 0.08
    browser_share: float = 0.6
    views_per_active_day: float = 2.0
    pre_active_rate: float = 0.25
    rooms: int = 500
    room_popularity_sd: float = 1.0
    room_effect_shape: float = 6.0

    def seasonality(self) -> FloatArray:
        """Day-of-week multiplier s_d (mean 1 over whole weeks)."""
        d = np.arange(self.days)
        return 1.0 + self.weekday_amplitude * np.cos(2 * np.pi * (d - self.weekly_peak_day) / 7)

    def first_day_probabilities(self) -> FloatArray:
        s = self.seasonality()
        return s / s.sum()


@dataclass(frozen=True, slots=True)
class TrueLift:
    """The known truth. ``per`` is "uv" (uv/room units) or "uv_day" (room-day units)."""

    per: Literal["uv", "uv_day"]
    gmv_relative: float
    views_relative: float
    gmv_control_mean: float
    views_control_mean: float

    @property
    def gmv_absolute(self) -> float:
        return self.gmv_relative * self.gmv_control_mean

    @property
    def views_absolute(self) -> float:
        return self.views_relative * self.views_control_mean

    def relative(self, metric: Metric) -> float:
        return self.gmv_relative if metric == "gmv" else self.views_relative

    def absolute(self, metric: Metric) -> float:
        return self.gmv_absolute if metric == "gmv" else self.views_absolute


@dataclass(frozen=True, slots=True)
class UnitData:
    """Per-unit arrays: arm (0 control, 1 treatment), outcomes, UVs (x) and covariates (c)."""

    arm: npt.NDArray[np.int8]
    gmv: FloatArray
    views: FloatArray
    uvs: FloatArray
    pre_gmv: FloatArray
    pre_views: FloatArray

    def arm_stats(
        self, metric: Metric, *, ratio: bool, covariate: bool = True
    ) -> tuple[SampleStats, SampleStats]:
        """(control, treatment) sufficient statistics, as the rollups would produce them."""
        y = self.gmv if metric == "gmv" else self.views
        c = self.pre_gmv if metric == "gmv" else self.pre_views
        out = []
        for arm in (0, 1):
            mask = self.arm == arm
            out.append(
                SampleStats.from_arrays(
                    y[mask],
                    x=self.uvs[mask] if ratio else None,
                    c=c[mask] if covariate else None,
                )
            )
        return out[0], out[1]

    def counts(self) -> dict[str, int]:
        treated = int(self.arm.sum())
        return {"control": int(self.arm.size - treated), "treatment": treated}


@dataclass(frozen=True, slots=True)
class UvDayRows:
    """One row per active UV-day: what the event stream carries, summed per UV and day.

    For the Django ``simulate_traffic`` command (which writes events) and for tests that need
    UV-level data under cluster randomization. ``arm`` is the arm of the row's randomization
    unit; ``room`` is the room the UV watches.
    """

    uv: IntArray
    room: IntArray
    day: IntArray
    arm: npt.NDArray[np.int8]
    gmv: FloatArray
    views: FloatArray


@dataclass(frozen=True, slots=True)
class _Events:
    """Unit-day rows (outcomes) and appearance entries (what brings x and c to a unit)."""

    row_uv: IntArray
    uv_room: IntArray
    uv_pre_gmv: FloatArray
    uv_pre_views: FloatArray
    row_unit: IntArray
    row_day: IntArray
    row_gmv: FloatArray
    row_views: FloatArray
    row_pre_gmv: FloatArray
    row_pre_views: FloatArray
    entry_unit: IntArray
    entry_day: IntArray
    entry_pre_gmv: FloatArray
    entry_pre_views: FloatArray
    unit_arm: npt.NDArray[np.int8]


@dataclass(frozen=True, slots=True)
class SimulatedExperiment:
    unit: Unit
    model: TrafficModel
    truth: TrueLift
    treatment_weight: float
    _events: _Events

    @property
    def kind(self) -> Literal["mean", "ratio"]:
        """The right estimator for per-UV metrics at this randomization unit."""
        return "mean" if self.unit == "uv" else "ratio"

    @property
    def weights(self) -> dict[str, float]:
        return {"control": 1.0 - self.treatment_weight, "treatment": self.treatment_weight}

    def _aggregate(
        self, row_mask: npt.NDArray[np.bool_], entry_mask: npt.NDArray[np.bool_], by_rows: bool
    ) -> UnitData:
        ev = self._events
        size = ev.unit_arm.size
        units = ev.row_unit[row_mask]

        def rows(w: FloatArray) -> FloatArray:
            return _weighted_count(units, w[row_mask], size)

        gmv, views = rows(ev.row_gmv), rows(ev.row_views)
        if by_rows:  # per-day data: x and c come from the UVs active that day
            uvs = np.bincount(units, minlength=size).astype(np.float64)
            pre_gmv, pre_views = rows(ev.row_pre_gmv), rows(ev.row_pre_views)
        else:
            entries = ev.entry_unit[entry_mask]
            uvs = np.bincount(entries, minlength=size).astype(np.float64)
            pre_gmv = _weighted_count(entries, ev.entry_pre_gmv[entry_mask], size)
            pre_views = _weighted_count(entries, ev.entry_pre_views[entry_mask], size)
        present = uvs > 0
        return UnitData(
            arm=ev.unit_arm[present],
            gmv=gmv[present],
            views=views[present],
            uvs=uvs[present],
            pre_gmv=pre_gmv[present],
            pre_views=pre_views[present],
        )

    def units(self) -> UnitData:
        """Per randomization unit, whole experiment."""
        return self.through_day(self.model.days - 1)

    def through_day(self, day: int) -> UnitData:
        """Per unit, everything up to and including ``day`` (the cumulative rollup)."""
        ev = self._events
        return self._aggregate(ev.row_day <= day, ev.entry_day <= day, by_rows=False)

    def on_day(self, day: int) -> UnitData:
        """Per unit-day on ``day`` (UV-days, room-days) - the per-day effect data."""
        ev = self._events
        return self._aggregate(ev.row_day == day, ev.entry_day == day, by_rows=True)

    def uv_days(self) -> UvDayRows:
        """The UV-day rows behind every aggregate (dropped units excluded)."""
        ev = self._events
        return UvDayRows(
            uv=ev.row_uv,
            room=ev.uv_room[ev.row_uv],
            day=ev.row_day,
            arm=ev.unit_arm[ev.row_unit],
            gmv=ev.row_gmv,
            views=ev.row_views,
        )

    def uv_rooms(self) -> IntArray:
        """The room each simulated UV watches (index into the model's rooms)."""
        return self._events.uv_room

    def pre_period(self) -> tuple[FloatArray, FloatArray]:
        """Pre-period (GMV, views) per UV id, for every simulated UV."""
        return self._events.uv_pre_gmv, self._events.uv_pre_views

    def stats(self, metric: Metric) -> tuple[SampleStats, SampleStats]:
        return self.units().arm_stats(metric, ratio=self.kind == "ratio")

    def daily_stats(self, metric: Metric) -> list[tuple[SampleStats, SampleStats]]:
        return [
            self.on_day(d).arm_stats(metric, ratio=self.kind == "ratio")
            for d in range(self.model.days)
        ]

    def cumulative_stats(self, metric: Metric) -> list[tuple[SampleStats, SampleStats]]:
        return [
            self.through_day(d).arm_stats(metric, ratio=self.kind == "ratio")
            for d in range(self.model.days)
        ]


def true_lift(model: TrafficModel, unit: Unit, gmv_lift: float, views_lift: float) -> TrueLift:
    """Closed-form control means: E[g] = E[b] = E[h] = E[v] = 1, independent of activity."""
    s = model.seasonality()
    p_first = model.first_day_probabilities()
    later = np.concatenate([np.cumsum(s[::-1])[::-1][1:], [0.0]])  # sum of s over days > f
    expected_s = float(np.sum(p_first * (s + model.return_rate * later)))
    remaining = model.days - 1 - np.arange(model.days)
    expected_active = float(np.sum(p_first * (1.0 + model.return_rate * remaining)))
    order_value = (1.0 - model.refund_rate) * np.exp(
        model.order_value_log_mean + model.order_value_log_sd**2 / 2.0
    )
    gmv_per_s = model.orders_per_active_day * order_value
    views_per_s = model.browser_share * model.views_per_active_day
    per: Literal["uv", "uv_day"] = "uv_day" if unit == "room_day" else "uv"
    denominator = expected_active if per == "uv_day" else 1.0
    return TrueLift(
        per=per,
        gmv_relative=gmv_lift,
        views_relative=views_lift,
        gmv_control_mean=float(gmv_per_s * expected_s / denominator),
        views_control_mean=float(views_per_s * expected_s / denominator),
    )


def _order_totals(
    rng: np.random.Generator,
    orders: IntArray,
    spend: FloatArray,
    model: TrafficModel,
) -> FloatArray:
    """Net GMV per row: each order v * LogNormal, refunded orders contribute 0."""
    total = int(orders.sum())
    owner = np.repeat(np.arange(orders.size), orders)
    values = spend[owner] * rng.lognormal(
        model.order_value_log_mean, model.order_value_log_sd, total
    )
    values[rng.random(total) < model.refund_rate] = 0.0
    return _weighted_count(owner, values, orders.size)


def simulate_experiment(
    *,
    n_uvs: int,
    unit: Unit = "uv",
    treatment_weight: float = 0.2,
    gmv_lift: float = 0.04334,
    views_lift: float = 0.00911,
    model: TrafficModel | None = None,
    treatment_loss: float = 0.0,
    seed: int | np.random.Generator | None = None,
    assigned_arm: npt.ArrayLike | None = None,
) -> SimulatedExperiment:
    """Simulate one experiment over ``model.days`` days.

    Defaults echo the published A/B (80/20 split, +4.334% GMV per UV, +0.911% item-page
    views). ``treatment_loss`` drops that share of treated units after assignment - a
    logging bug that the SRM check should catch. ``assigned_arm`` (0 control / 1 treatment per
    unit: UVs, rooms, or room-days as ``room * days + day``) replaces the Bernoulli draw with
    an external assignment - the platform's hash assignment in ``simulate_traffic``; the draw
    is still made, so everything else is the same for a given seed.
    """
    m = model or TrafficModel()
    if n_uvs < 1:
        raise ValueError(f"n_uvs must be >= 1, got {n_uvs}")
    if not 0.0 < treatment_weight < 1.0:
        raise ValueError(f"treatment_weight must be in (0, 1), got {treatment_weight}")
    rng = np.random.default_rng(seed)
    days = m.days
    seasonality = m.seasonality()

    # Rooms and UVs.
    popularity = rng.lognormal(0.0, m.room_popularity_sd, m.rooms)
    room_effect = rng.gamma(m.room_effect_shape, 1.0 / m.room_effect_shape, m.rooms)
    room = rng.choice(m.rooms, size=n_uvs, p=popularity / popularity.sum())
    engagement = rng.gamma(m.engagement_shape, 1.0 / m.engagement_shape, n_uvs)
    buyer = rng.gamma(m.buyer_shape, 1.0 / m.buyer_shape, n_uvs)
    spend = rng.lognormal(-(m.spend_level_sd**2) / 2.0, m.spend_level_sd, n_uvs)
    browser = rng.random(n_uvs) < m.browser_share
    first_day = rng.choice(days, size=n_uvs, p=m.first_day_probabilities())
    propensity = engagement * room_effect[room]

    # Randomization.
    n_units = {"uv": n_uvs, "room": m.rooms, "room_day": m.rooms * days}[unit]
    unit_arm = (rng.random(n_units) < treatment_weight).astype(np.int8)
    if assigned_arm is not None:
        external = np.asarray(assigned_arm, dtype=np.int8)
        if external.shape != (n_units,) or not np.isin(external, (0, 1)).all():
            raise ValueError(f"assigned_arm must be {n_units} values of 0 or 1 for unit={unit!r}")
        unit_arm = external
    kept = np.ones(n_units, dtype=bool)
    if treatment_loss > 0.0:
        kept &= ~((unit_arm == 1) & (rng.random(n_units) < treatment_loss))

    # Active UV-days: the first day, then each later day with probability return_rate.
    row_uv_parts, row_day_parts = [], []
    for d in range(days):
        active = (first_day == d) | ((first_day < d) & (rng.random(n_uvs) < m.return_rate))
        idx = np.flatnonzero(active)
        row_uv_parts.append(idx)
        row_day_parts.append(np.full(idx.size, d))
    row_uv = np.concatenate(row_uv_parts)
    row_day = np.concatenate(row_day_parts)
    if unit == "uv":
        row_unit = row_uv
    elif unit == "room":
        row_unit = room[row_uv]
    else:
        row_unit = room[row_uv] * days + row_day
    treated = unit_arm[row_unit].astype(np.float64)

    intensity = propensity[row_uv] * seasonality[row_day]
    order_rate = m.orders_per_active_day * buyer[row_uv] * intensity
    orders = rng.poisson(order_rate * (1.0 + gmv_lift * treated))
    row_gmv = _order_totals(rng, orders, spend[row_uv], m)
    view_rate = m.views_per_active_day * intensity * (1.0 + views_lift * treated)
    row_views = np.where(browser[row_uv], rng.poisson(view_rate), 0).astype(np.float64)

    # Pre-period: same UV, same room, a binomial number of active days.
    pre_active = rng.binomial(m.pre_days, m.pre_active_rate, n_uvs).astype(np.float64)
    pre_orders = rng.poisson(m.orders_per_active_day * buyer * propensity * pre_active)
    pre_gmv = _order_totals(rng, pre_orders, spend, m)
    pre_views = np.where(
        browser, rng.poisson(m.views_per_active_day * propensity * pre_active), 0
    ).astype(np.float64)

    # Appearance entries bring x (one UV) and c: per UV on its first day for uv/room units,
    # per UV-day for room-day units (a returning UV is a new member of another room-day).
    if unit == "room_day":
        entry_unit, entry_day, entry_uv = row_unit, row_day, row_uv
    else:
        entry_uv = np.arange(n_uvs)
        entry_unit = entry_uv if unit == "uv" else room
        entry_day = first_day

    row_keep = kept[row_unit]
    entry_keep = kept[entry_unit]
    events = _Events(
        row_uv=row_uv[row_keep],
        uv_room=room,
        uv_pre_gmv=pre_gmv,
        uv_pre_views=pre_views,
        row_unit=row_unit[row_keep],
        row_day=row_day[row_keep],
        row_gmv=row_gmv[row_keep],
        row_views=row_views[row_keep],
        row_pre_gmv=pre_gmv[row_uv][row_keep],
        row_pre_views=pre_views[row_uv][row_keep],
        entry_unit=entry_unit[entry_keep],
        entry_day=entry_day[entry_keep],
        entry_pre_gmv=pre_gmv[entry_uv][entry_keep],
        entry_pre_views=pre_views[entry_uv][entry_keep],
        unit_arm=unit_arm,
    )
    return SimulatedExperiment(
        unit=unit,
        model=m,
        truth=true_lift(m, unit, gmv_lift, views_lift),
        treatment_weight=treatment_weight,
        _events=events,
    )
