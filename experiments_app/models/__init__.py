"""Models of the experiments app, one module per concern:

* ``live``: live replies with their traces, latency reports;
* ``experiments``: experiments, arms, phases, sticky assignments, exposures;
* ``events``: viewer events and the rollups behind the readout;
* ``blind_tests``: blind human preference tests, their pairs, assignments and labels.
"""

from experiments_app.models.blind_tests import (
    BlindLabel,
    BlindPair,
    BlindSide,
    BlindTest,
    BlindTestLabeler,
    PairAssignment,
)
from experiments_app.models.events import (
    ArmDayStats,
    Event,
    ExperimentMember,
    ExperimentRollup,
    RollupState,
    UnitDay,
    UvDay,
)
from experiments_app.models.experiments import (
    BUCKETS,
    Assignment,
    Experiment,
    ExperimentArm,
    ExperimentPhase,
    Exposure,
)
from experiments_app.models.live import LatencyReport, LiveReply

__all__ = [
    "BUCKETS",
    "ArmDayStats",
    "Assignment",
    "BlindLabel",
    "BlindPair",
    "BlindSide",
    "BlindTest",
    "BlindTestLabeler",
    "Event",
    "Experiment",
    "ExperimentArm",
    "ExperimentMember",
    "ExperimentPhase",
    "ExperimentRollup",
    "Exposure",
    "LatencyReport",
    "LiveReply",
    "PairAssignment",
    "RollupState",
    "UnitDay",
    "UvDay",
]
