"""Writes for model endpoints. (Their reads and the connection check:
``training_app.selectors.endpoints``.)"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from training_app.models import ModelEndpoint


@transaction.atomic
def endpoint_create(**fields: Any) -> ModelEndpoint:
    endpoint = ModelEndpoint(**fields)
    endpoint.full_clean()
    endpoint.save()
    return endpoint


@transaction.atomic
def endpoint_update(*, endpoint: ModelEndpoint, **fields: Any) -> ModelEndpoint:
    for name, value in fields.items():
        setattr(endpoint, name, value)
    endpoint.full_clean()
    endpoint.save()
    return endpoint
