"""Offline evaluation: stored eval sets, eval runs on the ``eval`` queue, and per-item results.

An ``EvalSet`` is an immutable file (a hat-qa-set JSONL document, or the IFEval prompts) with
its content hash as its version key. An ``EvalRun`` answers every item of one set with one
model (an endpoint, or a local checkpoint generated in process) and keeps the exact versions
of everything it used in ``versions``; each item's reply, tool calls, rule checks and scores
are one ``EvalItemResult`` row, so a run page can page through them and two runs on the same
set can be paired item by item.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from training_app.models.endpoints import ModelEndpoint


class EvalSet(models.Model):
    class Kind(models.TextChoices):
        LIVE_STREAM_QA = "live_stream_qa", "Live-Stream QA"
        HARNESS_VARIANT_QA = "harness_variant_qa", "Harness-Variant QA"
        IFEVAL = "ifeval", "IFEval"
        BFCL = "bfcl", "BFCL"

    class VariantSet(models.TextChoices):
        NONE = "", "—"
        T1 = "t1", "T1"
        T2 = "t2", "T2"

    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=32, choices=Kind.choices)
    variant_set = models.CharField(
        max_length=4, choices=VariantSet.choices, default=VariantSet.NONE, blank=True
    )
    harness_version = models.ForeignKey(
        "harness_app.HarnessVersion",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="eval_sets",
        help_text="The harness version the set's golds were built on (empty for IFEval, BFCL).",
    )
    file = models.FileField(upload_to="eval_sets/%Y/%m/", max_length=300)
    content_hash = models.CharField(max_length=80)
    items = models.PositiveIntegerField(default=0)
    source = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["live_stream_qa", "harness_variant_qa", "ifeval", "bfcl"]),
                name="eval_set_kind_valid",
            ),
            models.CheckConstraint(
                condition=Q(kind="harness_variant_qa", variant_set__in=["t1", "t2"])
                | (~Q(kind="harness_variant_qa") & Q(variant_set="")),
                name="eval_set_variant_only_for_variant_sets",
            ),
            models.UniqueConstraint(
                fields=["kind", "content_hash"], name="eval_set_content_unique"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def benchmark(self) -> str:
        """The score-table column this set's runs fill."""
        if self.kind == self.Kind.HARNESS_VARIANT_QA:
            return f"harness_variant_{self.variant_set}"
        if self.kind == self.Kind.IFEVAL:
            return "ifeval_prompt"
        if self.kind == self.Kind.BFCL:
            return "bfcl_heldout" if (self.source or {}).get("augmentation") else "bfcl"
        return "live_stream_qa"

    @property
    def is_qa(self) -> bool:
        return self.kind in (self.Kind.LIVE_STREAM_QA, self.Kind.HARNESS_VARIANT_QA)


class EvalRun(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    eval_set = models.ForeignKey(EvalSet, on_delete=models.PROTECT, related_name="runs")
    endpoint = models.ForeignKey(
        ModelEndpoint,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="eval_runs",
        help_text="The model answering; empty when a local checkpoint generates in process.",
    )
    local_model_dir = models.CharField(
        max_length=500,
        blank=True,
        help_text="A checkpoint directory generated from in process (batched).",
    )
    model_label = models.CharField(
        max_length=80, help_text="The score table's row, e.g. Base, Fixed-Harness SFT, HAT."
    )
    generation = models.JSONField(
        default=dict, blank=True, help_text="Generation and agent settings (greedy, max tokens)."
    )
    max_concurrency = models.PositiveIntegerField(
        default=4, validators=[MinValueValidator(1), MaxValueValidator(64)]
    )
    item_limit = models.PositiveIntegerField(
        null=True, blank=True, help_text="Run only the set's first N items (a quick look)."
    )
    harness_version = models.ForeignKey(
        "harness_app.HarnessVersion",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="eval_runs",
        help_text="Run a Live-Stream set on this version instead of the set's own, golds moved "
        "through the edit's renames (publish_gate.retarget_qa_set).",
    )
    variant_set = models.CharField(
        max_length=4,
        choices=EvalSet.VariantSet.choices,
        default=EvalSet.VariantSet.NONE,
        blank=True,
        help_text="Run each item under a held-out HSA variant (T1 or T2) of its harness.",
    )
    publish_check = models.ForeignKey(
        "training_app.PublishCheck",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="runs",
    )
    gate_arm = models.CharField(
        max_length=32, blank=True, help_text="baseline, candidate or candidate_t1 in a check."
    )
    judge_version = models.ForeignKey(
        "training_app.JudgeVersion",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="eval_runs",
        help_text="Live-Stream QA: the judge scores Effectiveness (instead of the rule check).",
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    summary = models.JSONField(default=dict, blank=True)
    versions = models.JSONField(
        default=dict, blank=True, help_text="Model, harness, set and scorer versions used."
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
                condition=Q(status__in=["queued", "running", "succeeded", "failed", "cancelled"]),
                name="eval_run_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(progress_done__lte=models.F("progress_total")),
                name="eval_run_progress_bounded",
            ),
            models.CheckConstraint(
                condition=(Q(endpoint__isnull=False) & Q(local_model_dir=""))
                | (Q(endpoint__isnull=True) & ~Q(local_model_dir="")),
                name="eval_run_one_model_source",
            ),
        ]

    def __str__(self) -> str:
        return f"eval run {self.pk} {self.model_label} on {self.eval_set_id}"

    @property
    def benchmark(self) -> str:
        """The score-table column this run fills: its set's, or with ``variant_set`` the
        Harness-Variant column of the Live-Stream set it ran under held-out edits."""
        if self.variant_set:
            return f"harness_variant_{self.variant_set}"
        return self.eval_set.benchmark

    @property
    def model_source(self) -> str:
        return self.endpoint.name if self.endpoint_id and self.endpoint else self.local_model_dir

    @property
    def percent(self) -> int:
        return int(100 * self.progress_done / self.progress_total) if self.progress_total else 0

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED, self.Status.CANCELLED)


class EvalItemResult(models.Model):
    """One item's outcome. ``result`` is the scorer's full record (``QAItemResult.to_dict()``
    with the trace, or IFEval's strict and loose per-instruction verdicts)."""

    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="item_results")
    position = models.PositiveIntegerField()
    item_id = models.CharField(max_length=200)
    base_id = models.CharField(max_length=200)
    question_type = models.CharField(max_length=40, blank=True)
    passed = models.BooleanField()
    score = models.FloatField(help_text="1.0 / 0.0 for pass-fail scorers.")
    infrastructure_error = models.CharField(max_length=200, blank=True)
    result = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["run", "item_id"], name="eval_item_unique"),
        ]
        indexes = [models.Index(fields=["run", "passed"], name="eval_item_run_passed")]

    def __str__(self) -> str:
        return f"{self.item_id} {'pass' if self.passed else 'fail'}"
