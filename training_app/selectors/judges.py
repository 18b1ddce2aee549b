"""Reads for Agent-as-a-Judge: judges, versions, calibrations and how far a version is
trusted.

``judge_trust(version)`` -> ``JudgeTrust``: ``calibrated`` (its latest succeeded
calibration has a kappa at or above the judge's ``min_kappa``), ``below_min_kappa`` (it has
one, below; an undefined kappa counts as below) or ``uncalibrated`` (none succeeded). The
console warns for anything but ``calibrated``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Prefetch, QuerySet
from django.shortcuts import get_object_or_404

from training_app.models import Judge, JudgeCalibration, JudgeScore, JudgeVersion

CALIBRATED = "calibrated"
UNCALIBRATED = "uncalibrated"
BELOW_MIN_KAPPA = "below_min_kappa"


@dataclass(frozen=True)
class JudgeTrust:
    state: str
    kappa: float | None
    min_kappa: float
    calibration_id: int | None

    @property
    def trusted(self) -> bool:
        return self.state == CALIBRATED

    @property
    def message(self) -> str:
        if self.state == CALIBRATED:
            return f"calibrated: kappa {self.kappa:.2f} >= {self.min_kappa:.2f}"
        if self.state == BELOW_MIN_KAPPA:
            shown = "undefined" if self.kappa is None else f"{self.kappa:.2f}"
            return f"below min kappa: kappa {shown} < {self.min_kappa:.2f}"
        return "uncalibrated: no finished calibration of this version"

    def to_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "kappa": self.kappa,
            "min_kappa": self.min_kappa,
            "calibration_id": self.calibration_id,
            "message": self.message,
        }


def judges_list() -> QuerySet[Judge]:
    latest = JudgeVersion.objects.select_related("endpoint").order_by("-number")
    return (
        Judge.objects.select_related("endpoint")
        .prefetch_related(Prefetch("versions", queryset=latest))
        .order_by("name")
    )


def judge_get(*, judge_id: int) -> Judge:
    return get_object_or_404(judges_list(), pk=judge_id)


def judge_versions(judge: Judge) -> QuerySet[JudgeVersion]:
    calibrations = JudgeCalibration.objects.select_related("blind_test").order_by(
        "-created_at", "-id"
    )
    return (
        judge.versions.select_related("endpoint", "judge")
        .prefetch_related(Prefetch("calibrations", queryset=calibrations))
        .order_by("-number")
    )


def judge_version_get(*, version_id: int) -> JudgeVersion:
    return get_object_or_404(
        JudgeVersion.objects.select_related("judge", "endpoint"), pk=version_id
    )


def current_version(judge: Judge) -> JudgeVersion | None:
    """The latest version (from a prefetch when there is one)."""
    versions = list(judge.versions.all())
    return max(versions, key=lambda v: v.number) if versions else None


def latest_calibration(version: JudgeVersion) -> JudgeCalibration | None:
    """The latest succeeded calibration of ``version`` against human labels (a gold-pair
    check is shown on the judge's page but earns no trust)."""
    return (
        JudgeCalibration.objects.filter(
            version=version,
            status=JudgeCalibration.Status.SUCCEEDED,
            reference=JudgeCalibration.Reference.HUMAN,
        )
        .order_by("-finished_at", "-id")
        .first()
    )


def _trust(version: JudgeVersion, calibration: JudgeCalibration | None) -> JudgeTrust:
    min_kappa = version.judge.min_kappa
    if calibration is None:
        return JudgeTrust(UNCALIBRATED, None, min_kappa, None)
    kappa = calibration.report.get("kappa")
    if kappa is None or float(kappa) < min_kappa:
        return JudgeTrust(BELOW_MIN_KAPPA, kappa, min_kappa, calibration.pk)
    return JudgeTrust(CALIBRATED, float(kappa), min_kappa, calibration.pk)


def judge_trust(version: JudgeVersion) -> JudgeTrust:
    return _trust(version, latest_calibration(version))


def judge_trusts(versions: Iterable[JudgeVersion]) -> dict[int, JudgeTrust]:
    """Trust of many versions in one query (list pages)."""
    chosen = list(versions)
    latest: dict[int, JudgeCalibration] = {}
    for calibration in JudgeCalibration.objects.filter(
        version__in=chosen,
        status=JudgeCalibration.Status.SUCCEEDED,
        reference=JudgeCalibration.Reference.HUMAN,
    ).order_by("finished_at", "id"):
        latest[calibration.version_id] = calibration
    return {v.pk: _trust(v, latest.get(v.pk)) for v in chosen}


def calibrations_list(*, judge: Judge | None = None) -> QuerySet[JudgeCalibration]:
    rows = JudgeCalibration.objects.select_related("version__judge", "blind_test")
    if judge is not None:
        rows = rows.filter(version__judge=judge)
    return rows.order_by("-created_at", "-id")


def calibration_get(*, calibration_id: int) -> JudgeCalibration:
    return get_object_or_404(calibrations_list(), pk=calibration_id)


def calibration_scores(calibration: JudgeCalibration) -> QuerySet[JudgeScore]:
    return calibration.scores.select_related("blind_pair").order_by("blind_pair__position")
