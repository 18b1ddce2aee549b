"""Which model endpoints a console user may pick for a room (Try-it, reply settings).

Operators: every active endpoint. A room's merchant: only the active endpoints the room
already runs on: the one its replies go through (its reply endpoint, else the console
default ``HAT_DEFAULT_ENDPOINT``) and those pinned by the arms of experiments that include
the room. Every other endpoint (an operator's internal or broken server, another tenant's
experiment) stays out of a merchant's pages. The latency replay form calls this rule
(``latency_reports.latency_replay_endpoints``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models import Q, QuerySet

from console.roles import is_operator
from experiments_app.models import ExperimentArm
from harness_app.models import Room
from training_app.models import ModelEndpoint


def endpoints_usable(*, room: Room, user: Any) -> QuerySet[ModelEndpoint]:
    active = ModelEndpoint.objects.filter(is_active=True).order_by("name")
    if is_operator(user):
        return active
    if room.reply_endpoint_id is not None:
        own = Q(pk=room.reply_endpoint_id)
    else:
        own = Q(name=settings.HAT_DEFAULT_ENDPOINT)
    arms = ExperimentArm.objects.filter(experiment__rooms=room).values("endpoint_id")
    return active.filter(own | Q(pk__in=arms))
