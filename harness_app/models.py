"""Rooms, their catalog, API keys and webhook secrets, and the versioned Harness registry.

A ``HarnessVersion`` is an immutable snapshot of h = (S, T, P, K): its content and hashes are
written once by ``services.harness_version_create`` and never updated; only its status moves
(draft -> published -> archived). The database guarantees one published version per harness.
"""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models
from django.db.models import Q


class TimeStampedModel(models.Model):
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class Room(TimeStampedModel):
    """A live room: one merchant owns it, one harness drives its host."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="rooms"
    )
    name = models.CharField(max_length=120)
    locale = models.CharField(
        max_length=16,
        default="en-US",
        validators=[
            RegexValidator(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$", "use a BCP 47 tag like en-US")
        ],
    )
    currency = models.CharField(
        max_length=3,
        default="USD",
        validators=[RegexValidator(r"^[A-Z]{3}$", "use a 3-letter ISO 4217 code like USD")],
    )
    # Live replies: the deadline, the fallback said when the model fails, the comment limit,
    # and the model endpoint the room's published harness runs on (None: the default one).
    reply_deadline_ms = models.PositiveIntegerField(
        default=15_000, validators=[MinValueValidator(100)]
    )
    fallback_reply = models.CharField(
        max_length=500,
        default="Thanks for your question! Our team will get back to you in a moment.",
    )
    max_comment_chars = models.PositiveIntegerField(default=500, validators=[MinValueValidator(1)])
    serving_arm = models.CharField(
        max_length=16,
        choices=[("harness", "Harness agent"), ("react", "ReAct baseline")],
        default="harness",
        help_text="Which agent answers when no experiment is running.",
    )
    reply_endpoint = models.ForeignKey(
        "training_app.ModelEndpoint",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="rooms",
    )

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="room_name_unique_per_owner"),
            models.CheckConstraint(
                condition=Q(currency__regex=r"^[A-Z]{3}$"), name="room_currency_iso"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Product(TimeStampedModel):
    """A catalog item; built-in tools (get_product, check_stock, ...) query these."""

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="products")
    sku = models.CharField(
        max_length=64,
        validators=[RegexValidator(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$", "letters, digits, _ . -")],
    )
    title = models.CharField(max_length=200)
    price = models.DecimalField(
        max_digits=12, decimal_places=2, validators=[MinValueValidator(Decimal("0"))]
    )
    stock = models.PositiveIntegerField(default=0)
    attributes = models.JSONField(default=dict, blank=True)
    image_urls = models.JSONField(default=list, blank=True)
    sale_starts_at = models.DateTimeField(null=True, blank=True)
    sale_ends_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["room_id", "sku"]
        constraints = [
            models.UniqueConstraint(fields=["room", "sku"], name="product_sku_unique_per_room"),
            models.CheckConstraint(condition=Q(price__gte=0), name="product_price_non_negative"),
            models.CheckConstraint(
                condition=Q(sale_starts_at__isnull=True)
                | Q(sale_ends_at__isnull=True)
                | Q(sale_ends_at__gt=models.F("sale_starts_at")),
                name="product_sale_window_ordered",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.sku} {self.title}"


class Coupon(TimeStampedModel):
    """An offer in a room (optionally for one SKU); ``list_coupons`` reads the active ones."""

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="coupons")
    code = models.CharField(max_length=32)
    description = models.CharField(max_length=200)
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    threshold = models.DecimalField(max_digits=12, decimal_places=2, default=Decimal("0"))
    sku = models.CharField(max_length=64, blank=True, help_text="empty: applies to every product")
    starts_at = models.DateTimeField(null=True, blank=True)
    ends_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["room_id", "code"]
        constraints = [
            models.UniqueConstraint(fields=["room", "code"], name="coupon_code_unique_per_room"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="coupon_amount_positive"),
            models.CheckConstraint(
                condition=Q(threshold__gte=0), name="coupon_threshold_non_negative"
            ),
        ]

    def __str__(self) -> str:
        return self.code


class RoomApiKey(TimeStampedModel):
    """A per-room key for the live-room backend: scoped, revocable, stored hashed.

    The key is ``hat_<prefix>_<secret>``; only ``prefix`` (for lookup) and the SHA-256 of the
    whole key are stored. Keys carry 256 bits of randomness, so a fast hash is sufficient.
    """

    class Scope(models.TextChoices):
        REPLY = "reply", "Get replies"
        EVENTS = "events", "Send viewer events"

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=80)
    prefix = models.CharField(max_length=12, unique=True)
    key_hash = models.CharField(max_length=64)
    scopes = models.JSONField(default=list)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} (hat_{self.prefix}_…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class WebhookSecret(TimeStampedModel):
    """A room's signing secret for webhook tools, named by a tool's ``secret_ref``.

    Write-only: the value is stored encrypted (Fernet, key ``HAT_SECRETS_KEY``; see
    ``harness_app.webhook_secrets``) and never shown again, only its name and dates. A
    harness can only use the secrets of its own room.
    """

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="webhook_secrets")
    name = models.CharField(
        max_length=64,
        validators=[
            RegexValidator(
                r"^[A-Z][A-Z0-9_]{0,63}$", "uppercase letters, digits and '_', starting A-Z"
            )
        ],
    )
    value_encrypted = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    rotated_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["room_id", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["room", "name"], name="webhook_secret_name_unique_per_room"
            ),
            models.CheckConstraint(
                condition=Q(name__regex=r"^[A-Z][A-Z0-9_]{0,63}$"), name="webhook_secret_name_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} (room {self.room_id})"

    def __repr__(self) -> str:  # never the ciphertext either
        return f"<WebhookSecret {self.pk} {self.name} room={self.room_id}>"


class Harness(TimeStampedModel):
    """The harness of one room; ``published_version`` is what the live room runs."""

    room = models.OneToOneField(Room, on_delete=models.CASCADE, related_name="harness")
    name = models.CharField(max_length=120)
    published_version = models.ForeignKey(
        "HarnessVersion", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["name", "id"]
        verbose_name_plural = "harnesses"

    def __str__(self) -> str:
        return self.name


class HarnessVersion(models.Model):
    """An immutable snapshot of h = (S, T, P, K)."""

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        PUBLISHED = "published", "Published"
        ARCHIVED = "archived", "Archived"

    harness = models.ForeignKey(Harness, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    parent = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="children"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    message = models.CharField(max_length=500, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    content = models.JSONField()
    skills_hash = models.CharField(max_length=64)
    tools_hash = models.CharField(max_length=64)
    prompt_hash = models.CharField(max_length=64)
    hooks_hash = models.CharField(max_length=64)
    published_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["harness_id", "-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["harness", "number"], name="harness_version_number_unique"
            ),
            models.UniqueConstraint(
                fields=["harness"],
                condition=Q(status="published"),
                name="one_published_version_per_harness",
            ),
            models.CheckConstraint(
                condition=Q(status__in=["draft", "published", "archived"]),
                name="harness_version_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(number__gte=1), name="harness_version_number_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.harness.name} v{self.number} ({self.status})"


class ReactBaseline(TimeStampedModel):
    """The control arm's configuration: a classic ReAct agent with a fixed prompt, no skills,
    no hooks, over the same tools as the room's harness."""

    room = models.OneToOneField(Room, on_delete=models.CASCADE, related_name="react_baseline")
    system_prompt = models.TextField()
    max_steps = models.PositiveSmallIntegerField(default=4)

    class Meta:
        ordering = ["room_id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(max_steps__gte=1) & Q(max_steps__lte=16), name="react_max_steps_range"
            )
        ]

    def __str__(self) -> str:
        return f"ReAct baseline for {self.room}"
