"""Input and output of the live-room reply API."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from experiments_app.models import LiveReply

ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,128}$"


class ReplyContextInput(serializers.Serializer[Any]):
    product_sku = serializers.CharField(max_length=64, required=False, allow_blank=True, default="")
    recent_comments = serializers.ListField(
        child=serializers.CharField(max_length=500, allow_blank=True), max_length=20, default=list
    )


class LiveReplyInput(serializers.Serializer[Any]):
    request_id = serializers.RegexField(
        ID_PATTERN,
        help_text="Idempotency key: a retry with the "
        "same id returns the same reply without a model call.",
    )
    room = serializers.IntegerField(min_value=1, help_text="The room of the API key.")
    uv_id = serializers.RegexField(ID_PATTERN, help_text="The viewer (unique visitor) id.")
    comment = serializers.CharField(max_length=10_000, trim_whitespace=True)
    context = ReplyContextInput(required=False)  # type: ignore[assignment]


class LiveReplyOutput(serializers.Serializer[LiveReply]):
    # A plain Serializer: ModelSerializer re-introspects the model on every instantiation,
    # which the live path pays on every comment.
    reply = serializers.CharField()
    arm = serializers.CharField()
    harness_version = serializers.IntegerField(
        source="harness_version.number", default=None, allow_null=True
    )
    harness_version_id = serializers.IntegerField(
        allow_null=True, help_text="The answering version's id (an experiment arm pins it)."
    )
    trace_id = serializers.IntegerField(source="pk")
    latency_ms = serializers.FloatField(allow_null=True)
    fallback = serializers.BooleanField()
    fallback_reason = serializers.CharField()
