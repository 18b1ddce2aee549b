"""Training runs: a chain of stages, their attempts and their logged metrics."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from training_app.models.datasets import Dataset
from training_app.models.endpoints import ModelEndpoint


class TrainingRun(models.Model):
    """A chain of training stages (an ordered subset of HSA-SFT, general OPD, HSA-RL) from a
    base model, on the tasks of some harness versions. Created from one config dict (the
    console form, the API, or ``manage.py train --config run.yaml``) that
    ``training_app.services.runs.run_config`` exports back, so a run can be reproduced."""

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft (not started)"
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    name = models.CharField(max_length=120)
    base_model_dir = models.CharField(max_length=500)
    teacher = models.ForeignKey(
        ModelEndpoint,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="teaching_runs",
        help_text="Empty: the gold trajectories are the teacher.",
    )
    harness_versions = models.ManyToManyField(
        "harness_app.HarnessVersion", related_name="training_runs"
    )
    datasets = models.ManyToManyField(Dataset, related_name="training_runs", blank=True)
    catalog_tasks = models.BooleanField(
        default=False, help_text="Also generate tasks from the rooms' product catalogs."
    )
    hsa_policy = models.CharField(max_length=64, blank=True)
    stages = models.JSONField(help_text="Ordered stage kinds, e.g. ['hsa_sft', 'hsa_rl'].")
    params = models.JSONField(default=dict, blank=True, help_text="Per-stage parameters.")
    seed = models.BigIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    result_endpoint = models.ForeignKey(
        ModelEndpoint,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="trained_by",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(
                    status__in=["draft", "queued", "running", "succeeded", "failed", "cancelled"]
                ),
                name="training_run_status_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} {self.name}"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED, self.Status.CANCELLED)


class StageRun(models.Model):
    """One stage of a run, executed by the Celery task ``run_stage`` on the ``train`` queue.

    The lease (``lease_owner`` + ``lease_expires_at``) is the database lock that keeps a stage
    from running twice at once: a worker takes it with one conditional UPDATE and renews it
    from a heartbeat thread; the watchdog requeues a stage whose heartbeat went stale."""

    class Kind(models.TextChoices):
        HSA_SFT = "hsa_sft", "HSA-SFT"
        OPD = "opd", "General OPD"
        HSA_RL = "hsa_rl", "HSA-RL"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    run = models.ForeignKey(TrainingRun, on_delete=models.CASCADE, related_name="stage_runs")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    order = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    progress_step = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    lease_owner = models.CharField(max_length=200, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    # The step this attempt started from (>0 when it resumed from a checkpoint) and when,
    # so the ETA counts only the steps this attempt has done.
    attempt_start_step = models.PositiveIntegerField(default=0)
    attempt_started_at = models.DateTimeField(null=True, blank=True)
    workdir = models.CharField(max_length=500, blank=True)
    checkpoint_dir = models.CharField(max_length=500, blank=True)
    final_dir = models.CharField(max_length=500, blank=True)
    summary = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    cancel_requested = models.BooleanField(default=False)
    log_tail = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run_id", "order"]
        constraints = [
            models.UniqueConstraint(fields=["run", "order"], name="stage_run_order_unique"),
            models.UniqueConstraint(fields=["run", "kind"], name="stage_run_kind_unique"),
            models.CheckConstraint(
                condition=Q(kind__in=["hsa_sft", "opd", "hsa_rl"]), name="stage_run_kind_valid"
            ),
            models.CheckConstraint(
                condition=Q(
                    status__in=["pending", "queued", "running", "succeeded", "failed", "cancelled"]
                ),
                name="stage_run_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(status="running", lease_expires_at__isnull=False)
                | ~Q(status="running"),
                name="running_stage_has_lease",
            ),
        ]
        indexes = [models.Index(fields=["status", "heartbeat_at"], name="stage_run_watchdog")]

    def __str__(self) -> str:
        return f"run {self.run_id} stage {self.order} {self.kind} ({self.status})"

    @property
    def percent(self) -> int:
        if not self.progress_total:
            return 0
        return min(100, int(100 * self.progress_step / self.progress_total))

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED, self.Status.CANCELLED)

    @property
    def can_resume(self) -> bool:
        return self.status in (self.Status.FAILED, self.Status.CANCELLED)

    @property
    def eta_seconds(self) -> float | None:
        """Seconds left at this attempt's pace (steps done since it started), or None."""
        if self.status != self.Status.RUNNING or not self.attempt_started_at:
            return None
        done = self.progress_step - self.attempt_start_step
        left = self.progress_total - self.progress_step
        if done <= 0 or left < 0 or not self.progress_total:
            return None
        elapsed = (timezone.now() - self.attempt_started_at).total_seconds()
        return round(elapsed / done * left, 1)


class StageAttempt(models.Model):
    """One execution of a stage by one worker: the record that shows a redelivered stage
    resumed (``start_step`` > 0) and who ran it."""

    stage = models.ForeignKey(StageRun, on_delete=models.CASCADE, related_name="attempt_rows")
    number = models.PositiveIntegerField()
    worker = models.CharField(max_length=200)
    start_step = models.PositiveIntegerField(default=0)
    end_step = models.PositiveIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=32, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["stage_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["stage", "number"], name="stage_attempt_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.stage} attempt {self.number}"


class StageMetric(models.Model):
    """One logged value (loss, learning_rate, grad_norm, reward components, kl, ...) at one
    step. Rows rather than a growing JSON blob: the reporter appends with one INSERT per
    flush instead of rewriting the whole series each second, a resumed attempt overwrites
    the steps it repeats (unique stage/name/step, upsert), and the live chart endpoint
    reads only the rows after the last step it has (index on stage, step)."""

    stage = models.ForeignKey(StageRun, on_delete=models.CASCADE, related_name="metrics")
    step = models.PositiveIntegerField()
    name = models.CharField(max_length=100)
    value = models.FloatField()

    class Meta:
        ordering = ["stage_id", "step", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["stage", "name", "step"], name="stage_metric_unique_step"
            ),
        ]
        indexes = [models.Index(fields=["stage", "step"], name="stage_metric_stage_step")]

    def __str__(self) -> str:
        return f"{self.name}@{self.step}={self.value}"
