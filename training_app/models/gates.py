"""The harness-edit safety gate: a room's gate settings and the checks run before publishing.

A ``PublishGate`` is a room's choice of quick QA set, the model that answers it and the
thresholds (in pass-rate points) at which a drop warns or blocks. A ``PublishCheck`` runs
that set on the published version (``baseline``) and on a candidate version (``candidate``,
plus a held-out HSA variant of it) as eval runs on the ``eval`` queue, then records the
verdict (``training_app.evals.publish_gate.gate_verdict``). Publishing a version while the
room has an enabled gate needs a finished check of it against the version live now; a block
needs an operator's override, whose reason is kept on the check.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from training_app.models.endpoints import ModelEndpoint
from training_app.models.evals import EvalSet


class PublishGate(models.Model):
    room = models.OneToOneField(
        "harness_app.Room", on_delete=models.CASCADE, related_name="publish_gate"
    )
    enabled = models.BooleanField(default=True)
    eval_set = models.ForeignKey(
        EvalSet,
        on_delete=models.PROTECT,
        related_name="publish_gates",
        help_text="A small Live-Stream QA set built on this room's harness.",
    )
    endpoint = models.ForeignKey(
        ModelEndpoint,
        on_delete=models.PROTECT,
        related_name="publish_gates",
        help_text="The model that answers (usually the one the room's replies use).",
    )
    item_limit = models.PositiveIntegerField(
        default=16, validators=[MinValueValidator(1), MaxValueValidator(500)]
    )
    variant_sets = models.JSONField(
        default=list, blank=True, help_text='Held-out HSA variants also run, e.g. ["t1"].'
    )
    warn_drop_points = models.FloatField(
        default=5.0, validators=[MinValueValidator(0), MaxValueValidator(100)]
    )
    block_drop_points = models.FloatField(
        default=10.0, validators=[MinValueValidator(0), MaxValueValidator(100)]
    )
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(block_drop_points__gte=models.F("warn_drop_points")),
                name="publish_gate_block_at_least_warn",
            ),
        ]

    def __str__(self) -> str:
        return f"publish gate of {self.room_id}"


class PublishCheck(models.Model):
    class Decision(models.TextChoices):
        PENDING = "", "Running"
        PASS = "pass", "Pass"
        WARN = "warn", "Warn"
        BLOCK = "block", "Block"
        ERROR = "error", "Error"

    gate = models.ForeignKey(PublishGate, on_delete=models.CASCADE, related_name="checks")
    candidate = models.ForeignKey(
        "harness_app.HarnessVersion", on_delete=models.CASCADE, related_name="publish_checks"
    )
    baseline = models.ForeignKey(
        "harness_app.HarnessVersion", on_delete=models.CASCADE, related_name="+"
    )
    gate_settings = models.JSONField(default=dict, help_text="The gate's settings when it ran.")
    decision = models.CharField(
        max_length=8, choices=Decision.choices, default=Decision.PENDING, blank=True
    )
    verdict = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    override_reason = models.TextField(blank=True)
    overridden_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    overridden_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(decision__in=["", "pass", "warn", "block", "error"]),
                name="publish_check_decision_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"publish check {self.pk} of version {self.candidate_id}"

    @property
    def is_decided(self) -> bool:
        return self.decision != self.Decision.PENDING
