"""Writes for model endpoints. (Their reads and the connection check:
``training_app.selectors.endpoints``.)

The rules beyond the model's own validators live here, so the console form and the API
refuse the same things with the same words: the base URL is http(s) and is stored without a
trailing slash, and a taken name is an error on ``name`` naming it.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from training_app.models import ModelEndpoint

URL_SCHEMES = ("http://", "https://")


def endpoint_name_taken_message(name: str) -> str:
    return f"an endpoint named {name!r} already exists; pick another name"


@transaction.atomic
def endpoint_create(**fields: Any) -> ModelEndpoint:
    endpoint = ModelEndpoint(**fields)
    _clean(endpoint)
    _save(endpoint)
    return endpoint


@transaction.atomic
def endpoint_update(*, endpoint: ModelEndpoint, **fields: Any) -> ModelEndpoint:
    for name, value in fields.items():
        setattr(endpoint, name, value)
    _clean(endpoint)
    _save(endpoint)
    return endpoint


def _clean(endpoint: ModelEndpoint) -> None:
    """Every error at once, by field (``ValidationError.message_dict``); nothing saved."""
    errors: dict[str, list[str]] = {}
    if isinstance(endpoint.base_url, str):
        endpoint.base_url = endpoint.base_url.strip().rstrip("/")
    try:
        # The name's uniqueness is checked below, with a message that names the name.
        endpoint.full_clean(validate_unique=False)
    except ValidationError as exc:
        errors = {field: list(messages) for field, messages in exc.message_dict.items()}
    url = endpoint.base_url
    if "base_url" not in errors and not str(url).lower().startswith(URL_SCHEMES):
        errors["base_url"] = ["must be an http:// or https:// URL"]  # the model allows ftp://
    if (
        "name" not in errors
        and ModelEndpoint.objects.filter(name=endpoint.name).exclude(pk=endpoint.pk).exists()
    ):
        errors["name"] = [endpoint_name_taken_message(endpoint.name)]
    if errors:
        raise ValidationError(errors)


def _save(endpoint: ModelEndpoint) -> None:
    try:
        with transaction.atomic():
            endpoint.save()
    except IntegrityError:
        # A concurrent create took the name between the check and the insert.
        raise ValidationError({"name": [endpoint_name_taken_message(endpoint.name)]}) from None
