"""Agent-as-a-Judge: a judge, its versions, its scores and its calibrations.

A ``Judge`` is a model endpoint plus a rubric prompt. Every change of the rubric or of the
model makes a new ``JudgeVersion`` (the rubric text and the model name are frozen on it), and
every ``JudgeScore`` records the version that produced it. A version earns trust through a
``JudgeCalibration``: it judges pairs humans labeled in a blind test (or, as a sanity check
that makes nothing trusted, the test's gold pairs), and the report holds
its agreement with the human majority, Cohen's kappa and the confusion matrix with bootstrap
intervals. A score from a version with no finished calibration, or whose kappa is below the
judge's ``min_kappa``, is shown with a warning.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from training_app.models.endpoints import ModelEndpoint


class Judge(models.Model):
    name = models.CharField(max_length=80, unique=True)
    description = models.CharField(max_length=300, blank=True)
    endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.PROTECT, related_name="judges")
    rubric = models.TextField(help_text="The rubric prompt; editing it makes a new version.")
    min_kappa = models.FloatField(
        default=0.4,
        validators=[MinValueValidator(-1), MaxValueValidator(1)],
        help_text="Scores from a version calibrated below this Cohen's kappa are flagged.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(min_kappa__gte=-1) & Q(min_kappa__lte=1), name="judge_min_kappa_range"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class JudgeVersion(models.Model):
    """A frozen (rubric, model) of a judge. Never edited: a change is a new number."""

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.PROTECT, related_name="+")
    model_name = models.CharField(max_length=200)
    rubric = models.TextField()
    rubric_sha256 = models.CharField(max_length=64)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["judge_id", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "number"], name="judge_version_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.judge_id} v{self.number}"


class JudgeScore(models.Model):
    """One judgment: a reply scored on the rubric, or a pair compared in both orders.

    ``parsed`` is False when the judge's answer did not follow the required format; the raw
    text is kept and nothing is guessed from it.
    """

    class Kind(models.TextChoices):
        REPLY = "reply", "Reply scored on the rubric"
        PAIR = "pair", "Pair compared in both orders"

    version = models.ForeignKey(JudgeVersion, on_delete=models.PROTECT, related_name="scores")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    blind_pair = models.ForeignKey(
        "experiments_app.BlindPair",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="judge_scores",
    )
    calibration = models.ForeignKey(
        "training_app.JudgeCalibration",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="scores",
    )
    eval_item = models.ForeignKey(
        "training_app.EvalItemResult",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="judge_scores",
    )
    parsed = models.BooleanField()
    # reply: {"accuracy": {"score": 1-5, "reason": ...}, "effectiveness": ..., "compliance": ...,
    #         "tone": ...}; pair: {"forward": "one"|"two"|"tie"|null, "backward": ...,
    #         "verdict": "one"|"two"|"tie"|null, "order_disagreement": bool}.
    result = models.JSONField(default=dict, blank=True)
    raw = models.JSONField(default=list, blank=True, help_text="The judge's raw answers.")
    error = models.CharField(max_length=500, blank=True)
    latency_ms = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["reply", "pair"]), name="judge_score_kind_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} score by {self.version_id}"


class JudgeCalibration(models.Model):
    """A judge version run on human-labeled pairs of a blind test, with its agreement report."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    class Reference(models.TextChoices):
        # Only a calibration against human labels makes a version trusted.
        HUMAN = "human", "Human labels (the majority of each labeled pair)"
        GOLD = "gold", "Gold pairs (answers known by construction; a sanity check only)"

    version = models.ForeignKey(JudgeVersion, on_delete=models.CASCADE, related_name="calibrations")
    reference = models.CharField(max_length=8, choices=Reference.choices, default=Reference.HUMAN)
    blind_test = models.ForeignKey(
        "experiments_app.BlindTest", on_delete=models.PROTECT, related_name="calibrations"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    # {"n", "agreement", "agreement_ci", "kappa", "kappa_ci", "labels": [...],
    #  "confusion": [[...]], "position_bias_rate", "unparsed", "human_labels"}
    report = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
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
                condition=Q(status__in=["queued", "running", "succeeded", "failed"]),
                name="judge_calibration_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(reference__in=["human", "gold"]),
                name="judge_calibration_reference_valid",
            ),
            models.CheckConstraint(
                condition=Q(progress_done__lte=models.F("progress_total")),
                name="judge_calibration_progress_bounded",
            ),
        ]

    def __str__(self) -> str:
        return f"calibration {self.pk} of {self.version_id}"

    @property
    def percent(self) -> int:
        return int(100 * self.progress_done / self.progress_total) if self.progress_total else 0
