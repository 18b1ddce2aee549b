"""Writes of the experiments app, one module per concern:

* ``live_replies``: the live reply path (claim the request, route it, run the agent, store the
  trace; never fails, falls back instead);
* ``experiments``: experiments: create / edit a draft, start, stop, change the allocation.

The public names are re-exported here, so callers write ``services.experiment_start(...)``.
"""

from experiments_app.services.experiments import (
    GUARDRAIL_METRICS,
    MAX_ARMS,
    METRICS,
    ArmSpec,
    ExperimentConfigError,
    ExperimentSpec,
    experiment_change_allocation,
    experiment_create,
    experiment_start,
    experiment_stop,
    experiment_update,
    percent,
    validate_spec,
)
from experiments_app.services.live_replies import ReplyRequest, hook_blocked, live_reply

__all__ = [
    "GUARDRAIL_METRICS",
    "MAX_ARMS",
    "METRICS",
    "ArmSpec",
    "ExperimentConfigError",
    "ExperimentSpec",
    "ReplyRequest",
    "experiment_change_allocation",
    "experiment_create",
    "experiment_start",
    "experiment_stop",
    "experiment_update",
    "hook_blocked",
    "live_reply",
    "percent",
    "validate_spec",
]
