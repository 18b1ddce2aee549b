"""Viewer events and the rollups the readout is computed from.

Raw events (``Event``) are inserted idempotently on (room, event_id). The rollup task
(``experiments_app.rollups``) keeps, set-based and incrementally:

* ``UvDay``: per (room, day, uv) sums of the day's events (GMV net of refunds, views);
* ``ExperimentMember``: per (unit, uv) the UV's first day in the unit and its pre-period
  covariates (GMV and views in the 14 days before the experiment started);
* ``UnitDay``: per (experiment, unit, day) the unit's outcome that day and the UVs in it;
* ``ArmDayStats``: per (experiment, cohort phase, arm, day, scope, metric) the sufficient
  statistics (``experiments_app.stats.samples.SampleStats``) of the day's units ("daily") and
  of all units through the day, from per-unit running totals ("cumulative").

Rollup rows are derived data: they carry plain ids, their natural key is their primary key,
and they have no foreign-key constraints or indexes beyond what their queries use, so that
bulk rewrites (hundreds of thousands of rows per day at the published scale) stay cheap.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class Event(models.Model):
    class Type(models.TextChoices):
        ITEM_PAGE_VIEW = "item_page_view", "Item-page view"
        CONFIRMED_RECEIPT = "confirmed_receipt", "Confirmed receipt"
        REFUND = "refund", "Refund"

    id = models.BigAutoField(primary_key=True)
    # The unique (room, event_id) index serves every room lookup: no separate FK index.
    room = models.ForeignKey(
        "harness_app.Room", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    event_id = models.CharField(max_length=128)
    uv_id = models.CharField(max_length=128)
    type = models.CharField(max_length=20, choices=Type.choices)
    amount = models.DecimalField(max_digits=14, decimal_places=2, default=0)
    currency = models.CharField(max_length=3, blank=True)
    ts = models.DateTimeField()
    day = models.DateField(help_text="UTC date of ts: late events land on their own day")
    received_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["room", "event_id"], name="event_id_unique_per_room"),
            models.CheckConstraint(
                condition=Q(type__in=["item_page_view", "confirmed_receipt", "refund"]),
                name="event_type_valid",
            ),
            models.CheckConstraint(
                condition=Q(amount__gte=0) & Q(amount__lte=1_000_000_000),
                name="event_amount_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.room_id}/{self.event_id}"


class UvDay(models.Model):
    """One UV's events in one room on one day, summed (GMV = receipts - refunds)."""

    # The natural key is the primary key: one index less to maintain on every bulk write.
    pk = models.CompositePrimaryKey("room_id", "day", "uv_id")
    room_id = models.BigIntegerField()
    day = models.DateField()
    uv_id = models.CharField(max_length=128)
    gmv = models.FloatField(default=0.0)
    views = models.BigIntegerField(default=0)
    events = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["room_id", "day", "uv_id"]
        # No index by UV: the rollup reads UV-days by (room, day) ranges and hash joins (a
        # day's new members' pre-period history, the touched UVs' days); a second index
        # cost the UV-day upsert 40% of its time.

    def __str__(self) -> str:
        return f"{self.room_id}/{self.uv_id}@{self.day}"


class ExperimentMember(models.Model):
    """A UV inside a randomization unit: when it first appeared and its covariates.

    For UV units the unit is the UV itself (``room_id`` is None: all of the experiment's rooms
    count); for room units one row per UV of the room; for room-day units one per UV active
    in that room-day.
    """

    pk = models.CompositePrimaryKey("unit_id", "uv_id")
    experiment_id = models.BigIntegerField()
    unit_id = models.BigIntegerField(help_text="Assignment id")
    arm_id = models.BigIntegerField()
    phase_id = models.BigIntegerField()
    uv_id = models.CharField(max_length=128)
    room_id = models.BigIntegerField(null=True)
    first_day = models.DateField()
    c_gmv = models.FloatField(default=0.0)
    c_views = models.FloatField(default=0.0)

    class Meta:
        ordering = ["experiment_id", "unit_id", "uv_id"]
        # No index by (experiment, uv): the rollup finds a day's members with one hash join
        # (a scan), and a second index cost its inserts half their time.

    def __str__(self) -> str:
        return f"{self.experiment_id}/{self.unit_id}/{self.uv_id}"


class UnitDay(models.Model):
    """A randomization unit's day: outcome (``y_*``), UVs active that day with their
    covariates (per-day analysis), and UVs joining the unit that day (running totals)."""

    pk = models.CompositePrimaryKey("experiment_id", "day", "unit_id")
    experiment_id = models.BigIntegerField()
    day = models.DateField()
    unit_id = models.BigIntegerField()
    arm_id = models.BigIntegerField()
    phase_id = models.BigIntegerField()
    y_gmv = models.FloatField(default=0.0)
    y_views = models.FloatField(default=0.0)
    uvs = models.FloatField(default=0.0)
    c_gmv = models.FloatField(default=0.0)
    c_views = models.FloatField(default=0.0)
    new_uvs = models.FloatField(default=0.0)
    new_c_gmv = models.FloatField(default=0.0)
    new_c_views = models.FloatField(default=0.0)

    class Meta:
        ordering = ["experiment_id", "day", "unit_id"]

    def __str__(self) -> str:
        return f"{self.experiment_id}/{self.unit_id}@{self.day}"


class ArmDayStats(models.Model):
    """Sufficient statistics of one arm's cohort on one day (``SampleStats`` fields)."""

    class Scope(models.TextChoices):
        DAILY = "daily", "Units of that day"
        CUMULATIVE = "cumulative", "Units through that day"

    id = models.BigAutoField(primary_key=True)
    experiment_id = models.BigIntegerField()
    phase_id = models.BigIntegerField()
    arm_id = models.BigIntegerField()
    day = models.DateField()
    scope = models.CharField(max_length=16, choices=Scope.choices)
    metric = models.CharField(max_length=16)
    n = models.BigIntegerField()
    sum_y = models.FloatField()
    sum_y2 = models.FloatField()
    sum_x = models.FloatField()
    sum_x2 = models.FloatField()
    sum_xy = models.FloatField()
    sum_c = models.FloatField()
    sum_c2 = models.FloatField()
    sum_yc = models.FloatField()
    sum_xc = models.FloatField()

    class Meta:
        ordering = ["experiment_id", "day", "scope", "metric", "arm_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["experiment_id", "phase_id", "arm_id", "day", "scope", "metric"],
                name="arm_day_stats_unique",
            ),
            models.CheckConstraint(
                condition=Q(scope__in=["daily", "cumulative"]), name="arm_day_stats_scope_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.experiment_id}/{self.arm_id}@{self.day} {self.scope} {self.metric}"


class RollupState(models.Model):
    """Where the incremental rollup stands (one row, ``name="events"``)."""

    name = models.CharField(max_length=32, primary_key=True)
    last_event_id = models.BigIntegerField(default=0)
    exposures_scanned_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name}: event {self.last_event_id}"


class ExperimentRollup(models.Model):
    """Per experiment: whether its whole window must be recomputed (set at start and on each
    phase change), and when its rollups were last brought up to date."""

    experiment = models.OneToOneField(
        "experiments_app.Experiment", on_delete=models.CASCADE, related_name="rollup"
    )
    full_refresh_needed = models.BooleanField(default=True)
    refreshed_at = models.DateTimeField(null=True, blank=True)
    # The capped GMV metric's cap (rollups.gmv_cap), set by each full refresh from the
    # pre-period; None: the experiment does not read capped GMV, or no cap could be set.
    gmv_cap = models.FloatField(null=True, blank=True)
    # When a rollup run last went over this experiment (whether or not anything changed).
    checked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["experiment_id"]

    def __str__(self) -> str:
        return f"rollup of {self.experiment_id}"
