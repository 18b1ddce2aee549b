"""The promotion gate's evidence: may this endpoint back an experiment arm in these rooms?

It applies to a *trained checkpoint*: an endpoint a training run registered as its result
(``TrainingRun.result_endpoint``). Other endpoints (a production model, a teacher) are not
gated. The evidence is what the console already stores:

- IFEval: the newest finished IFEval run of the checkpoint (through this endpoint, or in
  process from the run's final directory) and the newest of its base model on the same set
  (``local_model_dir`` = the run's ``base_model_dir``, or an endpoint serving that directory);
- T1/T2: the newest finished plain runs of this endpoint on a Harness-Variant T1 and T2 set;
- latency: the newest latency replay of this endpoint in each room, against the room's reply
  deadline.

Thresholds are settings (``HAT_PROMOTION_IFEVAL_MARGIN_POINTS``,
``HAT_PROMOTION_T1_T2_GAP_POINTS``). ``training_app.evals.promotion_gate`` decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db.models import Q

from experiments_app.models import LatencyReport
from harness_app.models import Room
from inference.workers.profiles import served_model_id
from training_app.evals.promotion_gate import (
    Condition,
    PromotionThresholds,
    ifeval_condition,
    latency_condition,
    t1_t2_condition,
)
from training_app.models import EvalItemResult, EvalRun, EvalSet, ModelEndpoint, TrainingRun


@dataclass(frozen=True)
class PromotionReport:
    endpoint: ModelEndpoint
    training_run: TrainingRun | None
    conditions: tuple[Condition, ...]

    @property
    def applies(self) -> bool:
        """Only a training run's result is gated."""
        return self.training_run is not None

    @property
    def passed(self) -> bool:
        return not self.applies or all(c.passed for c in self.conditions)

    @property
    def failed(self) -> list[Condition]:
        return [c for c in self.conditions if not c.passed]


def promotion_thresholds() -> PromotionThresholds:
    return PromotionThresholds(
        ifeval_margin_points=settings.HAT_PROMOTION_IFEVAL_MARGIN_POINTS,
        t1_t2_gap_points=settings.HAT_PROMOTION_T1_T2_GAP_POINTS,
    )


def _finished(kind: str) -> Q:
    return Q(status=EvalRun.Status.SUCCEEDED, eval_set__kind=kind, publish_check__isnull=True)


def _passes(run: EvalRun | None) -> dict[str, bool] | None:
    if run is None:
        return None
    return dict(EvalItemResult.objects.filter(run=run).values_list("item_id", "passed"))


def _rate(run: EvalRun | None) -> float | None:
    results = _passes(run)
    if not results:
        return None
    return 100.0 * sum(results.values()) / len(results)


def _newest(query: Q) -> EvalRun | None:
    return EvalRun.objects.filter(query).order_by("-finished_at", "-pk").first()


def promotion_report(endpoint: ModelEndpoint, rooms: Sequence[Room]) -> PromotionReport:
    from training_app.services.runs import run_final_dir

    run = TrainingRun.objects.filter(result_endpoint=endpoint).first()
    if run is None:
        return PromotionReport(endpoint, None, ())
    thresholds = promotion_thresholds()
    final = run_final_dir(run)
    trained_source = Q(endpoint=endpoint)
    if final is not None:
        trained_source |= Q(local_model_dir=str(final))
    trained = _newest(_finished(EvalSet.Kind.IFEVAL) & trained_source)
    base = None
    if trained is not None:
        base_dirs = {run.base_model_dir, served_model_id(run.base_model_dir)}
        base_source = Q(local_model_dir__in=base_dirs) | Q(endpoint__model_name__in=base_dirs)
        base = _newest(_finished(EvalSet.Kind.IFEVAL) & base_source & Q(eval_set=trained.eval_set))
    variants = _finished(EvalSet.Kind.HARNESS_VARIANT_QA) & Q(
        endpoint=endpoint, harness_version__isnull=True, variant_set=""
    )
    t1 = _newest(variants & Q(eval_set__variant_set="t1"))
    t2 = _newest(variants & Q(eval_set__variant_set="t2"))
    conditions = [
        ifeval_condition(_passes(base), _passes(trained), thresholds),
        t1_t2_condition(_rate(t1), _rate(t2), thresholds),
    ]
    for room in rooms:
        report = LatencyReport.objects.filter(
            endpoint=endpoint, room=room, status=LatencyReport.Status.SUCCEEDED
        ).first()
        conditions.append(
            latency_condition(room.name, report.results if report else None, room.reply_deadline_ms)
        )
    return PromotionReport(endpoint, run, tuple(conditions))
