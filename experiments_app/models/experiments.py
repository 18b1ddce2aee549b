"""Experiments, their arms and phases, and the sticky assignment of units to arms.

An experiment splits the traffic of its rooms between arms (a ReAct or Harness agent on a
pinned harness version and model endpoint). Units (a UV, a room, or a room-day) are hashed
into buckets (``experiments_app.assignment``); the first assignment of a unit is persisted
and wins from then on. Changing weights or coverage of a running experiment starts a new
``ExperimentPhase``; a unit belongs to the phase in which it was first assigned (its cohort),
which is what the readout analyses. docs/EXPERIMENTS.md has the full design.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models import F, Q

BUCKETS = 10_000  # basis points: weights and coverage are stored as integers out of 10,000


class Experiment(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        RUNNING = "running", "Running"
        STOPPED = "stopped", "Stopped"

    class Unit(models.TextChoices):
        UV = "uv", "UV (viewer)"
        ROOM = "room", "Room"
        ROOM_DAY = "room_day", "Room-day"

    class Metric(models.TextChoices):
        GMV = "gmv", "Confirmed-receipt GMV per UV"
        VIEWS = "views", "Item-page views per UV"
        # Each UV's GMV winsorized at the 99th percentile of per-UV pre-period GMV (set by
        # the rollup; UV-randomized experiments only): narrower intervals that cover.
        GMV_CAPPED = "gmv_capped", "Confirmed-receipt GMV per UV, capped at the pre-period 99th pct"

    name = models.CharField(max_length=120)
    hypothesis = models.TextField(blank=True)
    rooms = models.ManyToManyField("harness_app.Room", related_name="experiments")
    primary_metric = models.CharField(max_length=16, choices=Metric.choices, default=Metric.GMV)
    # Metric names (Metric values) reported beside the primary one.
    secondary_metrics = models.JSONField(default=list, blank=True)
    # [{"metric": "latency_p95_ms" | "fallback_rate" | "hook_block_rate" | "tokens_per_uv",
    #   "tolerance": 0.2}]: the banner fires when an arm is worse than control by more.
    guardrails = models.JSONField(default=list, blank=True)
    unit = models.CharField(max_length=16, choices=Unit.choices, default=Unit.UV)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    # Separate salts: raising coverage never reshuffles arms (two independent hashes).
    arm_salt = models.CharField(max_length=64, editable=False)
    coverage_salt = models.CharField(max_length=64, editable=False)
    # Mutually exclusive experiments share a layer and take disjoint bucket ranges of it.
    layer = models.CharField(
        max_length=64,
        default="default",
        validators=[
            RegexValidator(r"^[a-z0-9][a-z0-9_-]{0,63}$", "lowercase letters, digits, _ -")
        ],
    )
    layer_start = models.PositiveIntegerField(default=0, validators=[MaxValueValidator(BUCKETS)])
    layer_end = models.PositiveIntegerField(
        default=BUCKETS, validators=[MinValueValidator(1), MaxValueValidator(BUCKETS)]
    )
    # Draft allocation; once running, the current phase holds the live one.
    coverage = models.PositiveIntegerField(
        default=BUCKETS,
        validators=[MinValueValidator(1), MaxValueValidator(BUCKETS)],
        help_text="share of eligible units in the experiment, out of 10,000",
    )
    cuped = models.BooleanField(default=True)
    sequential = models.BooleanField(default=False)
    planned_units = models.PositiveIntegerField(null=True, blank=True)
    alpha = models.FloatField(
        default=0.05, validators=[MinValueValidator(0.0001), MaxValueValidator(0.5)]
    )
    started_at = models.DateTimeField(null=True, blank=True)
    stopped_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["draft", "running", "stopped"]),
                name="experiment_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(unit__in=["uv", "room", "room_day"]), name="experiment_unit_valid"
            ),
            models.CheckConstraint(
                condition=Q(layer_start__gte=0)
                & Q(layer_end__lte=BUCKETS)
                & Q(layer_start__lt=F("layer_end")),
                name="experiment_layer_range_valid",
            ),
            models.CheckConstraint(
                condition=Q(coverage__gte=1) & Q(coverage__lte=BUCKETS),
                name="experiment_coverage_range",
            ),
            models.CheckConstraint(
                condition=Q(alpha__gt=0) & Q(alpha__lt=1), name="experiment_alpha_range"
            ),
            models.CheckConstraint(
                condition=Q(status="draft") | Q(started_at__isnull=False),
                name="experiment_started_has_start",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_draft(self) -> bool:
        return self.status == self.Status.DRAFT

    @property
    def is_running(self) -> bool:
        return self.status == self.Status.RUNNING

    @property
    def metric_kind(self) -> str:
        """The estimator for per-UV metrics at this unit (docs/STATISTICS.md §2)."""
        return "mean" if self.unit == self.Unit.UV else "ratio"


class ExperimentArm(models.Model):
    """One arm. Position 0 is the control; ``weight`` is the draft share out of 10,000."""

    class Kind(models.TextChoices):
        REACT = "react", "ReAct agent"
        HARNESS = "harness", "Harness agent"

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="arms")
    name = models.CharField(
        max_length=40,
        validators=[
            RegexValidator(r"^[a-z0-9][a-z0-9_-]{0,39}$", "lowercase letters, digits, _ -")
        ],
    )
    position = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=16, choices=Kind.choices)
    harness_version = models.ForeignKey(
        "harness_app.HarnessVersion", on_delete=models.PROTECT, related_name="+"
    )
    endpoint = models.ForeignKey(
        "training_app.ModelEndpoint", on_delete=models.PROTECT, related_name="+"
    )
    weight = models.PositiveIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(BUCKETS)]
    )

    class Meta:
        ordering = ["experiment_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["experiment", "name"], name="arm_name_unique"),
            models.UniqueConstraint(fields=["experiment", "position"], name="arm_position_unique"),
            models.CheckConstraint(
                condition=Q(kind__in=["react", "harness"]), name="arm_kind_valid"
            ),
            models.CheckConstraint(
                condition=Q(weight__gte=1) & Q(weight__lte=BUCKETS), name="arm_weight_range"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.experiment_id}/{self.name}"

    @property
    def is_control(self) -> bool:
        return self.position == 0


class ExperimentPhase(models.Model):
    """A stretch of a running experiment with fixed weights and coverage.

    ``weights`` maps arm id (as a string) to its share out of 10,000. A unit's cohort is the
    phase of its first assignment; only cohorts with identical weights are pooled.
    """

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="phases")
    number = models.PositiveSmallIntegerField()
    coverage = models.PositiveIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(BUCKETS)]
    )
    weights = models.JSONField()
    note = models.CharField(max_length=300, blank=True)
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["experiment_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["experiment", "number"], name="phase_number_unique"),
            models.CheckConstraint(
                condition=Q(coverage__gte=1) & Q(coverage__lte=BUCKETS),
                name="phase_coverage_range",
            ),
            models.CheckConstraint(
                condition=Q(ended_at__isnull=True) | Q(ended_at__gte=F("started_at")),
                name="phase_window_ordered",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.experiment_id} phase {self.number}"

    def weight_of(self, arm_id: int) -> int:
        return int(self.weights.get(str(arm_id), 0))


class Assignment(models.Model):
    """The first (and therefore permanent) arm of a unit. ``unit_key``: the UV id, the room
    id, or ``<room id>:<YYYY-MM-DD>``. Its id is the unit's id in the rollups."""

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="assignments")
    unit_key = models.CharField(max_length=160)
    arm = models.ForeignKey(ExperimentArm, on_delete=models.CASCADE, related_name="+")
    phase = models.ForeignKey(ExperimentPhase, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["experiment_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["experiment", "unit_key"], name="assignment_unit_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.experiment_id}/{self.unit_key} -> {self.arm_id}"


class Exposure(models.Model):
    """A UV saw an arm in a room on a day: logged once per (experiment, room, uv, day).

    Written by reply routing (the UV's comment was answered by the arm) and, for room and
    room-day units, by the rollups for every UV active in a covered room-day (the host's
    replies are broadcast to the whole room).
    """

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="+")
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="+")
    arm = models.ForeignKey(ExperimentArm, on_delete=models.CASCADE, related_name="+")
    room = models.ForeignKey("harness_app.Room", on_delete=models.CASCADE, related_name="+")
    uv_id = models.CharField(max_length=128)
    day = models.DateField()
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["experiment_id", "day", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["experiment", "room", "uv_id", "day"], name="exposure_once_per_day"
            ),
        ]
        indexes = [models.Index(fields=["experiment", "day"], name="exposure_experiment_day")]

    def __str__(self) -> str:
        return f"{self.experiment_id}/{self.uv_id}@{self.day}"
