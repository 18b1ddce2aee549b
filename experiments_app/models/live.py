"""Live replies and their traces, and latency reports.

``LiveReply.arm`` is the agent kind that answered; ``experiment`` / ``experiment_arm`` say
which running experiment routed the reply (None when the room's default served it)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from harness_app.models import TimeStampedModel


class LiveReply(TimeStampedModel):
    """One viewer comment and the host's reply, with its full trace.

    Unique on (room, request_id): a retried request returns the stored reply and never calls
    the model twice. A row is claimed (``status=pending``) before the agent runs, so two
    concurrent retries of one request cannot both run it.
    """

    class Arm(models.TextChoices):
        HARNESS = "harness", "Harness agent"
        REACT = "react", "ReAct agent"

    class Source(models.TextChoices):
        LIVE = "live", "Live room"
        CONSOLE = "console", "Console try-it"
        REPLAY = "replay", "Latency replay"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        DONE = "done", "Done"

    room = models.ForeignKey("harness_app.Room", on_delete=models.CASCADE, related_name="replies")
    request_id = models.CharField(max_length=128)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.LIVE)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    uv_id = models.CharField(max_length=128)
    comment = models.TextField()
    context = models.JSONField(default=dict, blank=True)
    arm = models.CharField(max_length=16, choices=Arm.choices, default=Arm.HARNESS)
    harness_version = models.ForeignKey(
        "harness_app.HarnessVersion",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    endpoint = models.ForeignKey(
        "training_app.ModelEndpoint",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    experiment = models.ForeignKey(
        "experiments_app.Experiment",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="replies",
    )
    experiment_arm = models.ForeignKey(
        "experiments_app.ExperimentArm",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="replies",
    )
    reply = models.TextField(blank=True)
    fallback = models.BooleanField(default=False)
    # A hook blocked the output (action block / fallback_reply): the guardrail counts these.
    hook_blocked = models.BooleanField(default=False)
    fallback_reason = models.CharField(max_length=120, blank=True)
    skill = models.CharField(max_length=64, blank=True)
    latency_ms = models.FloatField(null=True, blank=True)
    model_ms = models.FloatField(null=True, blank=True)
    ttft_ms = models.FloatField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    trace = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["room", "request_id"], name="live_reply_request_unique"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["pending", "done"]), name="live_reply_status_valid"
            ),
        ]
        indexes = [models.Index(fields=["room", "-created_at"], name="live_reply_room_recent")]

    def __str__(self) -> str:
        return f"{self.room_id}/{self.request_id}"


class LatencyReport(models.Model):
    """A latency replay of a request set through the full reply path, per concurrency.

    A replay is a job: ``services.latency_replay`` creates the report ``queued`` with its
    request set and settings, the ``eval`` worker runs it (``running``, progress in
    requests over every level) and stores one summary per level as each finishes. A row
    created without a status is a finished report (how reports were written before jobs).
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    class Arm(models.TextChoices):
        HARNESS = "harness", "Harness agent"
        REACT = "react", "ReAct agent"

    endpoint = models.ForeignKey(
        "training_app.ModelEndpoint", on_delete=models.SET_NULL, null=True, related_name="+"
    )
    room = models.ForeignKey("harness_app.Room", on_delete=models.CASCADE, related_name="+")
    # The published version when the replay was queued: every level replays this one.
    harness_version = models.ForeignKey(
        "harness_app.HarnessVersion",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    arm = models.CharField(max_length=16, choices=Arm.choices, blank=True)
    request_file = models.CharField(max_length=300)
    requests = models.PositiveIntegerField()
    # {"concurrency": [1, 4, 8], "limit": N | None, "arm": "" | "harness" | "react",
    #  "request_set": "demo" | "upload" | "inline" | "file"}
    parameters = models.JSONField(default=dict, blank=True)
    # The replayed requests: [{comment, product_sku, uv_id, recent_comments}, ...].
    request_items = models.JSONField(default=list, blank=True)
    # [{concurrency, requests, wall_s, p50_ms, p95_ms, max_ms, share_under_15s, ttft_p50_ms,
    #   ttft_p95_ms, fallbacks, latencies_ms: [...], ttfts_ms: [...]}, ...]
    results = models.JSONField(default=list)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.SUCCEEDED)
    # Requests finished over every level (a level replays the whole set).
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    # The worker holding the running job (its lease): writes of a job are conditional on it,
    # so a worker that lost the report to a redelivered task stops writing.
    worker = models.CharField(max_length=200, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Also the running job's heartbeat: a redelivered task takes over a stale one.
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "succeeded", "failed", "cancelled"]),
                name="latency_report_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(progress_done__lte=models.F("progress_total")),
                name="latency_report_progress_bounded",
            ),
            models.CheckConstraint(
                condition=Q(arm__in=["", "harness", "react"]), name="latency_report_arm_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"Latency report {self.pk}"

    @property
    def percent(self) -> int:
        if self.status == self.Status.SUCCEEDED:
            return 100
        return int(100 * self.progress_done / self.progress_total) if self.progress_total else 0

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED, self.Status.CANCELLED)
