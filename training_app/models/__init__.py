"""The training app's tables, one module per concern: endpoints, datasets (and the HSA jobs
that make them), training runs, offline evaluation, the publish gate and the judges. Import
them from here."""

from training_app.models.datasets import AugmentationJob, Dataset
from training_app.models.endpoints import ModelEndpoint
from training_app.models.evals import EvalItemResult, EvalRun, EvalSet
from training_app.models.gates import PublishCheck, PublishGate
from training_app.models.judges import Judge, JudgeCalibration, JudgeScore, JudgeVersion
from training_app.models.runs import StageAttempt, StageMetric, StageRun, TrainingRun

__all__ = [
    "AugmentationJob",
    "Dataset",
    "EvalItemResult",
    "EvalRun",
    "EvalSet",
    "Judge",
    "JudgeCalibration",
    "JudgeScore",
    "JudgeVersion",
    "ModelEndpoint",
    "PublishCheck",
    "PublishGate",
    "StageAttempt",
    "StageMetric",
    "StageRun",
    "TrainingRun",
]
