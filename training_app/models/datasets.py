"""Training data: gold and HSA-augmented datasets, and the augmentation jobs that make them."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q


class Dataset(models.Model):
    """A JSONL file of examples for one harness version: gold trajectories written by people
    (or a teacher), or an augmented set produced by an HSA job. The file is an artifact under
    HAT_VAR_DIR/artifacts/ and is served only through the authenticated download view."""

    class Kind(models.TextChoices):
        GOLD = "gold", "Gold trajectories"
        AUGMENTED = "augmented", "HSA-augmented"

    name = models.CharField(max_length=120)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    harness_version = models.ForeignKey(
        "harness_app.HarnessVersion", on_delete=models.PROTECT, related_name="datasets"
    )
    source = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="derived"
    )
    file = models.FileField(upload_to="datasets/%Y/%m/", max_length=300)
    examples = models.PositiveIntegerField(default=0)
    sha256 = models.CharField(max_length=64)
    provenance = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["gold", "augmented"]), name="dataset_kind_valid"
            ),
            models.CheckConstraint(
                condition=Q(kind="gold", source__isnull=True) | Q(kind="augmented"),
                name="gold_dataset_has_no_source",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class AugmentationJob(models.Model):
    """An HSA run over a gold dataset, on the Celery ``default`` queue, with progress and a
    cooperative cancel flag the job checks between examples."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    source = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="augmentation_jobs")
    policy = models.CharField(max_length=64)
    seed = models.BigIntegerField(default=0)
    variants = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(64)]
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    failures = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    cancel_requested = models.BooleanField(default=False)
    output = models.OneToOneField(
        Dataset, on_delete=models.SET_NULL, null=True, blank=True, related_name="produced_by"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(progress_done__lte=models.F("progress_total")),
                name="augmentation_progress_bounded",
            ),
        ]

    def __str__(self) -> str:
        return f"HSA job {self.pk} ({self.status})"

    @property
    def percent(self) -> int:
        return int(100 * self.progress_done / self.progress_total) if self.progress_total else 0

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED, self.Status.CANCELLED)
