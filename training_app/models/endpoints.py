"""Model endpoints: the OpenAI-compatible servers arms, teachers and judges call."""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models import Q


class ModelEndpoint(models.Model):
    """An OpenAI-compatible server: vLLM in production, `transformers serve` embedded.

    ``api_key_ref`` names an environment variable holding the key (never the key itself).
    ``tool_mode`` says how the agent asks for tools: ``native`` (the server has a tool-call
    parser) or ``text`` (the documented JSON action block, for small models without one).
    """

    class Role(models.TextChoices):
        STUDENT = "student", "Student (serves live replies)"
        TEACHER = "teacher", "Teacher"
        JUDGE = "judge", "Judge"

    class ToolMode(models.TextChoices):
        NATIVE = "native", "Native tool calls"
        TEXT = "text", "Text action blocks"

    name = models.CharField(
        max_length=64,
        unique=True,
        validators=[RegexValidator(r"^[a-z0-9][a-z0-9-]{0,63}$", "lowercase letters, digits, '-'")],
    )
    base_url = models.URLField(
        max_length=300, help_text="Ends with /v1, e.g. http://127.0.0.1:8011/v1"
    )
    model_name = models.CharField(
        max_length=300,
        blank=True,
        help_text="The `model` field sent to the server; empty for a server pinned to one model.",
    )
    api_key_ref = models.CharField(
        max_length=64,
        blank=True,
        validators=[RegexValidator(r"^[A-Z][A-Z0-9_]{0,63}$", "an environment variable name")],
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.STUDENT)
    tool_mode = models.CharField(max_length=16, choices=ToolMode.choices, default=ToolMode.NATIVE)
    timeout_s = models.FloatField(
        default=15.0, validators=[MinValueValidator(0.1), MaxValueValidator(600)]
    )
    max_concurrency = models.PositiveIntegerField(
        default=8, validators=[MinValueValidator(1), MaxValueValidator(1024)]
    )
    max_tokens = models.PositiveIntegerField(
        default=256, validators=[MinValueValidator(1), MaxValueValidator(32768)]
    )
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(timeout_s__gt=0), name="endpoint_timeout_positive"),
            models.CheckConstraint(
                condition=Q(max_concurrency__gte=1), name="endpoint_concurrency_min"
            ),
        ]

    def __str__(self) -> str:
        return self.name
