"""Explicit input and output serializers of the harness registry API."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from harness_app.models import HarnessVersion, Product, Room, RoomApiKey, WebhookSecret
from harness_app.product_attributes import validate_attributes
from harness_app.services import WEBHOOK_SECRET_MAX_CHARS, WEBHOOK_SECRET_MIN_CHARS

# --- rooms -------------------------------------------------------------------------------


class RoomOutput(serializers.ModelSerializer[Room]):
    owner = serializers.CharField(source="owner.username")
    harness_id = serializers.IntegerField(source="harness.id", allow_null=True, default=None)
    published_version = serializers.IntegerField(
        source="harness.published_version.number", allow_null=True, default=None
    )
    published_version_id = serializers.IntegerField(
        source="harness.published_version_id",
        allow_null=True,
        default=None,
        help_text="The published version's id (what an experiment arm's harness_version takes).",
    )

    class Meta:
        model = Room
        fields = [
            "id",
            "name",
            "owner",
            "locale",
            "currency",
            "harness_id",
            "published_version",
            "published_version_id",
            "created_at",
            "updated_at",
        ]


class RoomCreateInput(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=120)
    owner = serializers.SlugRelatedField(
        slug_field="username", queryset=get_user_model().objects.all()
    )
    locale = serializers.RegexField(
        r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$", default="en-US", max_length=16
    )
    currency = serializers.RegexField(r"^[A-Z]{3}$", default="USD", max_length=3)


class RoomUpdateInput(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=120, required=False)
    locale = serializers.RegexField(
        r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$", required=False, max_length=16
    )
    currency = serializers.RegexField(r"^[A-Z]{3}$", required=False, max_length=3)


class RoomSettingsOutput(serializers.ModelSerializer[Room]):
    """How the room answers live comments (the console's room settings page)."""

    reply_endpoint = serializers.IntegerField(
        source="reply_endpoint_id",
        allow_null=True,
        help_text="The model endpoint's id; null: the console's default endpoint.",
    )
    reply_endpoint_name = serializers.CharField(
        source="reply_endpoint.name", allow_null=True, default=None
    )

    class Meta:
        model = Room
        fields = [
            "id",
            "reply_deadline_ms",
            "fallback_reply",
            "max_comment_chars",
            "serving_arm",
            "reply_endpoint",
            "reply_endpoint_name",
            "updated_at",
        ]


@extend_schema_field(OpenApiTypes.INT)
class _UsableEndpointField(serializers.PrimaryKeyRelatedField):  # type: ignore[type-arg]
    """An endpoint the caller may pick for the room (context ``room`` and ``user``): the
    console's rule, ``experiments_app.selectors.room_endpoints.endpoints_usable`` (operators:
    any active one; the room's merchant: those the room already runs on)."""

    default_error_messages = {
        "does_not_exist": "no model endpoint this room may use has id {pk_value}",
        "incorrect_type": "an endpoint id (integer), or null for the default endpoint",
    }

    def get_queryset(self) -> Any:
        from experiments_app.selectors.room_endpoints import endpoints_usable

        return endpoints_usable(room=self.context["room"], user=self.context["user"])


class RoomSettingsInput(serializers.Serializer[Any]):
    """The same bounds as the console's settings form (console/forms/rooms.py)."""

    reply_deadline_ms = serializers.IntegerField(min_value=100, max_value=60_000, required=False)
    fallback_reply = serializers.CharField(max_length=500, required=False)
    max_comment_chars = serializers.IntegerField(min_value=1, max_value=10_000, required=False)
    serving_arm = serializers.ChoiceField(
        choices=list(Room._meta.get_field("serving_arm").choices or ()), required=False
    )
    reply_endpoint = _UsableEndpointField(allow_null=True, required=False)

    def validate_fallback_reply(self, value: str) -> str:
        text = value.strip()
        if not text:
            raise serializers.ValidationError(
                "must not be blank: viewers see it when the model fails"
            )
        return text


# --- products ----------------------------------------------------------------------------


class ProductOutput(serializers.ModelSerializer[Product]):
    class Meta:
        model = Product
        fields = [
            "sku",
            "title",
            "price",
            "stock",
            "attributes",
            "image_urls",
            "sale_starts_at",
            "sale_ends_at",
            "updated_at",
        ]


class ProductInput(serializers.Serializer[Any]):
    title = serializers.CharField(max_length=200)
    price = serializers.DecimalField(max_digits=12, decimal_places=2, min_value=0)
    stock = serializers.IntegerField(min_value=0, max_value=2_147_483_647, default=0)
    attributes = serializers.DictField(
        default=dict,
        validators=[validate_attributes],
        help_text="A JSON object, at most 5 levels deep and 16 KB as JSON.",
    )
    image_urls = serializers.ListField(
        child=serializers.URLField(max_length=500), default=list, max_length=20
    )
    sale_starts_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    sale_ends_at = serializers.DateTimeField(required=False, allow_null=True, default=None)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        starts, ends = attrs.get("sale_starts_at"), attrs.get("sale_ends_at")
        if starts and ends and ends <= starts:
            raise serializers.ValidationError({"sale_ends_at": "must be after sale_starts_at"})
        return attrs


class ProductCreateInput(ProductInput):
    sku = serializers.RegexField(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$", max_length=64)


class CatalogImportInput(serializers.Serializer[Any]):
    file = serializers.FileField()
    format = serializers.ChoiceField(choices=["csv", "json"], required=False)


class CatalogImportOutput(serializers.Serializer[Any]):
    created = serializers.IntegerField()
    updated = serializers.IntegerField()


# --- API keys ----------------------------------------------------------------------------


class ApiKeyOutput(serializers.ModelSerializer[RoomApiKey]):
    key_preview = serializers.SerializerMethodField()
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)

    class Meta:
        model = RoomApiKey
        fields = [
            "id",
            "name",
            "key_preview",
            "scopes",
            "created_by",
            "created_at",
            "last_used_at",
            "revoked_at",
        ]

    def get_key_preview(self, obj: RoomApiKey) -> str:
        return f"hat_{obj.prefix}_…"


class ApiKeyCreatedOutput(ApiKeyOutput):
    key = serializers.CharField(help_text="The full key. Shown once; store it now.")

    class Meta(ApiKeyOutput.Meta):
        fields = [*ApiKeyOutput.Meta.fields, "key"]


class ApiKeyCreateInput(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=80)
    scopes = serializers.MultipleChoiceField(choices=RoomApiKey.Scope.choices, allow_empty=False)


# --- webhook secrets ---------------------------------------------------------------------


class WebhookSecretOutput(serializers.ModelSerializer[WebhookSecret]):
    """Never the value: it is write-only."""

    created_by = serializers.CharField(source="created_by.username", default=None)

    class Meta:
        model = WebhookSecret
        fields = ["id", "name", "created_by", "created_at", "rotated_at", "last_used_at"]


class WebhookSecretValueInput(serializers.Serializer[Any]):
    value = serializers.CharField(
        min_length=WEBHOOK_SECRET_MIN_CHARS,
        max_length=WEBHOOK_SECRET_MAX_CHARS,
        trim_whitespace=False,
        write_only=True,
        help_text="The signing secret. Stored encrypted and never returned.",
    )


class WebhookSecretCreateInput(WebhookSecretValueInput):
    name = serializers.RegexField(
        r"^[A-Z][A-Z0-9_]{0,63}$",
        max_length=64,
        help_text="What a webhook tool's secret_ref names, e.g. SHOP_WEBHOOK_SECRET.",
        error_messages={"invalid": "use uppercase letters, digits and '_', starting with A-Z"},
    )


# --- harnesses ---------------------------------------------------------------------------


class HarnessVersionSummaryOutput(serializers.ModelSerializer[HarnessVersion]):
    id = serializers.IntegerField(
        read_only=True,
        help_text="The version's primary key: what an experiment arm's harness_version takes. "
        "`number` counts versions within one harness.",
    )
    author = serializers.CharField(source="author.username", default=None, allow_null=True)
    parent = serializers.IntegerField(  # type: ignore[assignment]
        source="parent.number", default=None, allow_null=True
    )
    hashes = serializers.SerializerMethodField()

    class Meta:
        model = HarnessVersion
        fields = [
            "id",
            "number",
            "parent",
            "author",
            "message",
            "status",
            "hashes",
            "created_at",
            "published_at",
        ]

    def get_hashes(self, obj: HarnessVersion) -> dict[str, str]:
        return {
            "skills": obj.skills_hash,
            "tools": obj.tools_hash,
            "prompt": obj.prompt_hash,
            "hooks": obj.hooks_hash,
        }


class HarnessVersionOutput(HarnessVersionSummaryOutput):
    content = serializers.JSONField()
    warnings = serializers.SerializerMethodField()

    class Meta(HarnessVersionSummaryOutput.Meta):
        fields = [*HarnessVersionSummaryOutput.Meta.fields, "content", "warnings"]

    def get_warnings(self, obj: HarnessVersion) -> list[dict[str, str]]:
        from harness_app.harness.serialization import harness_from_dict
        from harness_app.harness.validation import harness_warnings
        from harness_app.selectors import missing_webhook_secrets

        content = harness_from_dict(obj.content)
        # A draft may name a secret its room does not have yet; publishing it is refused.
        missing = missing_webhook_secrets(room_id=obj.harness.room_id, content=content)
        return [
            {"field": w.path, "message": w.message} for w in [*harness_warnings(content), *missing]
        ]


class HarnessOutput(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    room_id = serializers.IntegerField()
    room = serializers.CharField(source="room.name")
    published_version = serializers.IntegerField(
        source="published_version.number", default=None, allow_null=True
    )
    published_version_id = serializers.IntegerField(
        allow_null=True,
        help_text="The published version's id (what an experiment arm's harness_version takes).",
    )
    updated_at = serializers.DateTimeField()


class HarnessVersionCreateInput(serializers.Serializer[Any]):
    base_version = serializers.IntegerField(
        allow_null=True,
        min_value=1,
        help_text="The version your edit started from; null only for a harness's first version.",
    )
    message = serializers.CharField(max_length=500, allow_blank=True, default="")
    content = serializers.JSONField(
        required=False, help_text="The harness as JSON (h = S, T, P, K)."
    )
    content_yaml = serializers.CharField(
        required=False, help_text="The harness as one YAML document."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("content" in attrs) == ("content_yaml" in attrs):
            raise serializers.ValidationError(
                {"content": "send exactly one of content or content_yaml"}
            )
        return attrs


class HarnessImportInput(serializers.Serializer[Any]):
    file = serializers.FileField(
        help_text="A harness zip (skills/, tools.json, prompt.yaml, hooks.yaml)."
    )
    base_version = serializers.IntegerField(
        allow_null=True, min_value=1, required=False, default=None
    )
    message = serializers.CharField(max_length=500, allow_blank=True, default="")


class RollbackInput(serializers.Serializer[Any]):
    to_version = serializers.IntegerField(min_value=1)


class DiffChangeOutput(serializers.Serializer[Any]):
    component = serializers.CharField()
    name = serializers.CharField()
    kind = serializers.CharField()
    details = serializers.ListField(child=serializers.CharField())
    summary = serializers.CharField()


class DiffOutput(serializers.Serializer[Any]):
    from_version = serializers.IntegerField()
    to_version = serializers.IntegerField()
    changes = DiffChangeOutput(many=True)


class ConflictOutput(serializers.Serializer[Any]):
    detail = serializers.CharField()
    latest_version = serializers.IntegerField()
    base_version = serializers.IntegerField(allow_null=True)


class PublishInput(serializers.Serializer[Any]):
    override_reason = serializers.CharField(
        max_length=2000,
        required=False,
        allow_blank=True,
        default="",
        help_text="An operator publishing a version the room's safety check blocked: why.",
    )
