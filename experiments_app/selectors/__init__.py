"""Reads of the experiments app, one module per concern:

* ``experiments``: experiments with tenancy, and what an arm may pin;
* ``live_replies``: a room's live replies and their traces;
* ``latency_reports``: a room's latency replay reports.

The public names are re-exported here, so callers write ``selectors.experiment_get(...)``.
"""

from experiments_app.selectors.experiments import (
    endpoints_for_arms,
    experiment_get,
    experiment_phase_numbers,
    experiments_visible_to,
    versions_for_arms,
)
from experiments_app.selectors.latency_reports import (
    latency_replay_default_endpoint_id,
    latency_replay_endpoints,
    latency_report_get,
    latency_reports_of_room,
)
from experiments_app.selectors.live_replies import replies_of_room, reply_get

__all__ = [
    "endpoints_for_arms",
    "experiment_get",
    "experiment_phase_numbers",
    "experiments_visible_to",
    "latency_replay_default_endpoint_id",
    "latency_replay_endpoints",
    "latency_report_get",
    "latency_reports_of_room",
    "replies_of_room",
    "reply_get",
    "versions_for_arms",
]
