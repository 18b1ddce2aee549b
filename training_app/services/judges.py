"""Writes for Agent-as-a-Judge: judges and their versions, scores and calibrations.

Versioning: ``judge_create`` makes version 1; ``judge_update`` makes a new ``JudgeVersion``
only when the rubric text, the endpoint or the endpoint's model name changes (name,
description and min_kappa are the judge's, not the version's). ``judge_version_for_use``
returns the latest version, first making a new one when the endpoint's model name was edited
since (a different model is a different judge, needing its own calibration).

Scoring calls the version's endpoint through the project's OpenAI-compatible client (greedy,
``JUDGE_MAX_TOKENS``, a per-call budget of the endpoint's ``timeout_s`` unless given). Every
answer is parsed strictly (``training_app.evals.judge``); a model error or an answer that
does not follow the format is stored as ``JudgeScore(parsed=False, error=...)`` with the raw
text, never guessed. Pairs are asked in both orders.

Calibration (``judge_calibration_execute``, the ``eval`` Celery task's body) judges every
labeled non-gold pair of a blind test whose labels have a majority (``human_majority``:
"both_bad" counts as a tie; pairs without a majority are skipped and counted), then stores
the report of ``judge_calibration.calibration_report``. A redelivered task continues after
the pairs it already judged (their scores are kept) and a finished calibration is left alone.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from inference.clients.openai_compatible import (
    ClientConfig,
    ModelCallError,
    OpenAICompatibleClient,
)
from training_app.evals import judge as judging
from training_app.evals.judge_calibration import calibration_report, human_majority
from training_app.models import (
    EvalItemResult,
    Judge,
    JudgeCalibration,
    JudgeScore,
    JudgeVersion,
    ModelEndpoint,
)

log = logging.getLogger(__name__)

JUDGE_MAX_TOKENS = 400
MAX_RUBRIC_CHARS = 20_000
CALIBRATION_SEED = 0


class JudgeError(ValueError):
    """A judge write that cannot be done; ``field`` names the input at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def rubric_sha256(rubric: str) -> str:
    return hashlib.sha256(rubric.encode("utf-8")).hexdigest()


def _clean_rubric(rubric: str) -> str:
    text = rubric.strip()
    if not text:
        raise JudgeError("rubric", "the rubric must not be empty")
    if len(text) > MAX_RUBRIC_CHARS:
        raise JudgeError("rubric", f"the rubric must be at most {MAX_RUBRIC_CHARS} characters")
    return text


def _check_endpoint(endpoint: ModelEndpoint) -> None:
    if not endpoint.is_active:
        raise JudgeError("endpoint_id", f"endpoint {endpoint.name} is not active")


def _check_min_kappa(min_kappa: float) -> None:
    if not -1 <= min_kappa <= 1:
        raise JudgeError("min_kappa", "min_kappa must be between -1 and 1")


def _new_version(judge: Judge, created_by: Any) -> JudgeVersion:
    latest = judge.versions.order_by("-number").values_list("number", flat=True).first()
    return JudgeVersion.objects.create(
        judge=judge,
        number=(latest or 0) + 1,
        endpoint=judge.endpoint,
        model_name=judge.endpoint.model_name,
        rubric=judge.rubric,
        rubric_sha256=rubric_sha256(judge.rubric),
        created_by=created_by,
    )


@transaction.atomic
def judge_create(
    *,
    name: str,
    endpoint: ModelEndpoint,
    rubric: str = judging.DEFAULT_RUBRIC,
    description: str = "",
    min_kappa: float = 0.4,
    created_by: Any = None,
) -> Judge:
    """A judge and its version 1."""
    clean_name = name.strip()
    if not clean_name:
        raise JudgeError("name", "name the judge")
    if Judge.objects.filter(name=clean_name).exists():
        raise JudgeError("name", f"a judge named {clean_name!r} exists")
    _check_endpoint(endpoint)
    _check_min_kappa(min_kappa)
    judge = Judge.objects.create(
        name=clean_name[:80],
        description=description.strip()[:300],
        endpoint=endpoint,
        rubric=_clean_rubric(rubric),
        min_kappa=min_kappa,
        created_by=created_by,
    )
    _new_version(judge, created_by)
    return judge


@transaction.atomic
def judge_update(
    *,
    judge: Judge,
    name: str | None = None,
    description: str | None = None,
    rubric: str | None = None,
    endpoint: ModelEndpoint | None = None,
    min_kappa: float | None = None,
    updated_by: Any = None,
) -> tuple[Judge, JudgeVersion | None]:
    """Edit a judge; returns it and the new version (None when rubric and model are as the
    latest version has them)."""
    judge = Judge.objects.select_for_update().select_related("endpoint").get(pk=judge.pk)
    if name is not None:
        clean_name = name.strip()
        if not clean_name:
            raise JudgeError("name", "name the judge")
        if Judge.objects.filter(name=clean_name).exclude(pk=judge.pk).exists():
            raise JudgeError("name", f"a judge named {clean_name!r} exists")
        judge.name = clean_name[:80]
    if description is not None:
        judge.description = description.strip()[:300]
    if min_kappa is not None:
        _check_min_kappa(min_kappa)
        judge.min_kappa = min_kappa
    if rubric is not None:
        judge.rubric = _clean_rubric(rubric)
    if endpoint is not None:
        if endpoint.pk != judge.endpoint_id:
            _check_endpoint(endpoint)
        judge.endpoint = endpoint
    judge.save()
    latest = judge.versions.order_by("-number").first()
    if latest is not None and not _drifted(judge, latest):
        return judge, None
    return judge, _new_version(judge, updated_by)


def _drifted(judge: Judge, version: JudgeVersion) -> bool:
    return (
        version.rubric_sha256 != rubric_sha256(judge.rubric)
        or version.endpoint_id != judge.endpoint_id
        or version.model_name != judge.endpoint.model_name
    )


@transaction.atomic
def judge_version_for_use(*, judge: Judge, created_by: Any = None) -> JudgeVersion:
    """The latest version, made anew first if the endpoint's model name changed since."""
    judge = Judge.objects.select_for_update().select_related("endpoint").get(pk=judge.pk)
    latest = judge.versions.order_by("-number").first()
    if latest is None or _drifted(judge, latest):
        return _new_version(judge, created_by)
    return latest


# --- calling the judge -------------------------------------------------------------------------


def judge_client(version: JudgeVersion) -> OpenAICompatibleClient:
    endpoint = version.endpoint
    return OpenAICompatibleClient(
        ClientConfig(
            base_url=endpoint.base_url,
            model=version.model_name or None,
            api_key=os.environ.get(endpoint.api_key_ref) if endpoint.api_key_ref else None,
            read_timeout_s=endpoint.timeout_s,
            max_retries=1,
        )
    )


def _ask(
    client: OpenAICompatibleClient, messages: list[dict[str, str]], timeout_s: float
) -> tuple[str | None, str]:
    """The judge's answer text, or (None, the error)."""
    try:
        result = client.chat(
            messages, max_tokens=JUDGE_MAX_TOKENS, temperature=0.0, timeout_s=timeout_s
        )
    except ModelCallError as exc:
        return None, f"model {exc.kind}: {exc}"[:500]
    return result.content, ""


def _budget(version: JudgeVersion, timeout_s: float | None) -> float:
    return float(timeout_s if timeout_s is not None else version.endpoint.timeout_s)


def judge_score_reply(
    *,
    version: JudgeVersion,
    comment: str,
    facts: Mapping[str, Any] | Sequence[Any] | str | None,
    reply: str,
    eval_item: EvalItemResult | None = None,
    timeout_s: float | None = None,
    client: OpenAICompatibleClient | None = None,
) -> JudgeScore:
    """Score one reply on the version's rubric; stored whatever happens."""
    score = reply_score(
        version=version,
        comment=comment,
        facts=facts,
        reply=reply,
        timeout_s=timeout_s,
        client=client,
    )
    score.eval_item = eval_item
    score.save()
    return score


def reply_score(
    *,
    version: JudgeVersion,
    comment: str,
    facts: Mapping[str, Any] | Sequence[Any] | str | None,
    reply: str,
    timeout_s: float | None = None,
    client: OpenAICompatibleClient | None = None,
) -> JudgeScore:
    """The unsaved score of one reply (no database access: safe in worker threads)."""
    messages = judging.reply_messages(version.rubric, comment=comment, facts=facts, reply=reply)
    started = time.perf_counter()
    own = client is None
    active = client or judge_client(version)
    try:
        text, error = _ask(active, messages, _budget(version, timeout_s))
    finally:
        if own:
            active.close()
    latency_ms = (time.perf_counter() - started) * 1000
    result: dict[str, Any] = {}
    if text is not None:
        judgment = judging.parse_reply_judgment(text)
        if isinstance(judgment, judging.Unparsed):
            error = f"unparsed: {judgment.reason}"[:500]
        else:
            result = {**judgment.to_dict(), "effectiveness_value": 0.0}
            result["effectiveness_value"] = judging.effectiveness_value(judgment)
    return JudgeScore(
        version=version,
        kind=JudgeScore.Kind.REPLY,
        parsed=bool(result),
        result=result,
        raw=[text] if text is not None else [],
        error=error,
        latency_ms=round(latency_ms, 3),
    )


def judge_compare_pair(
    *,
    version: JudgeVersion,
    comment: str,
    facts: Mapping[str, Any] | Sequence[Any] | str | None,
    reply_one: str,
    reply_two: str,
    blind_pair: Any = None,
    calibration: JudgeCalibration | None = None,
    timeout_s: float | None = None,
    client: OpenAICompatibleClient | None = None,
) -> JudgeScore:
    """Compare side one's reply with side two's, asked in both orders; stored whatever
    happens. ``result`` is ``PairVerdict.to_dict()`` (verdict None when an order did not
    parse or the model failed)."""
    budget = _budget(version, timeout_s)
    own = client is None
    active = client or judge_client(version)
    started = time.perf_counter()
    answers: list[judging.PairAnswer | judging.Unparsed] = []
    raw: list[str | None] = []
    errors: list[str] = []
    try:
        for first, second, order in (
            (reply_one, reply_two, "forward"),
            (reply_two, reply_one, "backward"),
        ):
            messages = judging.pair_messages(
                version.rubric, comment=comment, facts=facts, reply_1=first, reply_2=second
            )
            text, error = _ask(active, messages, budget)
            raw.append(text)
            if text is None:
                answers.append(judging.Unparsed(error, ""))
                errors.append(f"{order}: {error}")
                continue
            answer = judging.parse_pair_answer(text)
            if isinstance(answer, judging.Unparsed):
                errors.append(f"{order}: unparsed: {answer.reason}")
            answers.append(answer)
    finally:
        if own:
            active.close()
    verdict = judging.combine_orders(answers[0], answers[1])
    return JudgeScore.objects.create(
        version=version,
        kind=JudgeScore.Kind.PAIR,
        blind_pair=blind_pair,
        calibration=calibration,
        parsed=verdict.parsed,
        result=verdict.to_dict(),
        raw=raw,
        error="; ".join(errors)[:500],
        latency_ms=round((time.perf_counter() - started) * 1000, 3),
    )


# --- calibration -------------------------------------------------------------------------------


def judge_calibration_create(
    *,
    version: JudgeVersion,
    blind_test: Any,
    reference: str = JudgeCalibration.Reference.HUMAN,
    created_by: Any = None,
) -> JudgeCalibration:
    """A queued calibration of ``version`` on ``blind_test``'s labeled pairs (``reference``
    human) or its gold pairs (``gold``), enqueued on the ``eval`` queue once the transaction
    commits."""
    from experiments_app.models import BlindTest

    if not BlindTest.objects.filter(pk=blind_test.pk).exists():
        raise JudgeError("blind_test_id", "no such blind test")
    if reference not in JudgeCalibration.Reference.values:
        raise JudgeError("reference", f"must be one of {', '.join(JudgeCalibration.Reference)}")
    if reference == JudgeCalibration.Reference.GOLD:
        if not blind_test.pairs.filter(is_gold=True, ready=True).exists():
            raise JudgeError("blind_test_id", f"blind test {blind_test.name!r} has no gold pairs")
    elif not blind_test.labels.filter(pair__is_gold=False).exists():
        raise JudgeError("blind_test_id", f"blind test {blind_test.name!r} has no labels yet")
    calibration = JudgeCalibration.objects.create(
        version=version, blind_test=blind_test, reference=reference, created_by=created_by
    )
    from training_app.tasks import run_judge_calibration

    transaction.on_commit(lambda: run_judge_calibration.delay(calibration.pk))
    return calibration


def _labeled_pairs(blind_test_id: int) -> tuple[list[tuple[Any, str]], int]:
    """(pair, human majority) of every labeled non-gold pair with a majority, in position
    order, and how many labeled pairs had none."""
    from experiments_app.models import BlindLabel, BlindPair

    choices: dict[int, list[str]] = {}
    for pair_id, choice in BlindLabel.objects.filter(
        test_id=blind_test_id, pair__is_gold=False
    ).values_list("pair_id", "choice"):
        choices.setdefault(pair_id, []).append(choice)
    pairs = BlindPair.objects.filter(pk__in=choices).order_by("position")
    chosen: list[tuple[Any, str]] = []
    skipped = 0
    for pair in pairs:
        majority = human_majority(choices[pair.pk])
        if majority is None:
            skipped += 1
        else:
            chosen.append((pair, majority))
    return chosen, skipped


def _gold_pairs(blind_test_id: int) -> list[tuple[Any, str]]:
    """(pair, the compliant side) of every ready gold pair, in position order."""
    from experiments_app.models import BlindPair

    pairs = BlindPair.objects.filter(test_id=blind_test_id, is_gold=True, ready=True)
    return [(pair, pair.gold_side) for pair in pairs.order_by("position")]


def pair_facts(pair: Any) -> Any:
    """What the judge is told about a blind pair besides the comment: its product context."""
    context = pair.context or {}
    return context.get("product", context)


def judge_calibration_execute(calibration_id: int) -> str:
    """The body of the calibration task; returns the final status."""
    claimed = JudgeCalibration.objects.filter(
        Q(pk=calibration_id),
        Q(status=JudgeCalibration.Status.QUEUED) | Q(status=JudgeCalibration.Status.RUNNING),
    ).update(status=JudgeCalibration.Status.RUNNING, started_at=timezone.now())
    calibration = JudgeCalibration.objects.select_related("version__endpoint").get(
        pk=calibration_id
    )
    if not claimed:
        return calibration.status
    try:
        if calibration.reference == JudgeCalibration.Reference.GOLD:
            pairs, skipped = _gold_pairs(calibration.blind_test_id), 0
        else:
            pairs, skipped = _labeled_pairs(calibration.blind_test_id)
        JudgeCalibration.objects.filter(pk=calibration.pk).update(progress_total=len(pairs))
        done = dict(
            calibration.scores.filter(kind=JudgeScore.Kind.PAIR).values_list("blind_pair_id", "pk")
        )
        version = calibration.version
        with judge_client(version) as client:
            for index, (pair, _) in enumerate(pairs, start=1):
                if pair.pk not in done:
                    judge_compare_pair(
                        version=version,
                        comment=pair.comment,
                        facts=pair_facts(pair),
                        reply_one=pair.reply_one,
                        reply_two=pair.reply_two,
                        blind_pair=pair,
                        calibration=calibration,
                        client=client,
                    )
                JudgeCalibration.objects.filter(pk=calibration.pk).update(
                    progress_done=index, updated_at=timezone.now()
                )
        calibration.report = _report(calibration, pairs, skipped)
        calibration.status = JudgeCalibration.Status.SUCCEEDED
    except Exception as exc:  # recorded for the operator; the worker lives on
        log.exception("judge calibration %s failed", calibration.pk)
        calibration.error = f"{type(exc).__name__}: {exc}"[:4000]
        calibration.status = JudgeCalibration.Status.FAILED
    calibration.refresh_from_db(fields=["progress_done", "progress_total"])
    calibration.finished_at = timezone.now()
    calibration.save(update_fields=["report", "status", "error", "finished_at", "updated_at"])
    return calibration.status


def _report(
    calibration: JudgeCalibration, pairs: list[tuple[Any, str]], skipped: int
) -> dict[str, Any]:
    verdicts = {
        score.blind_pair_id: score for score in calibration.scores.filter(kind=JudgeScore.Kind.PAIR)
    }
    human: list[str] = []
    judged: list[str] = []
    disagreements: list[bool] = []
    unparsed = 0
    for pair, majority in pairs:
        score = verdicts[pair.pk]
        if not score.parsed:
            unparsed += 1
            continue
        human.append(majority)
        judged.append(str(score.result["verdict"]))
        disagreements.append(bool(score.result["order_disagreement"]))
    report = calibration_report(
        human,
        judged,
        order_disagreements=disagreements,
        unparsed=unparsed,
        skipped_no_majority=skipped,
        seed=CALIBRATION_SEED,
    )
    report["pairs"] = len(pairs)
    report["reference"] = calibration.reference
    return report


# --- offline evaluation ----------------------------------------------------------------------


class EvalEffectivenessJudge:
    """The judge of an eval run (``qa_runner.QAJudge``): scores each item's reply on the
    rubric; the verdict's ``effectiveness`` replaces the rule-based Effectiveness. The judge
    check is informational (``required=False``): the judge changes a score, not pass/fail.
    An unparsed answer or a model error gives no effectiveness (the rule-based value stays,
    and the check and the stored ``JudgeScore`` say why).

    ``judge`` runs in the runner's worker threads and touches no database; ``store`` (in the
    caller's thread, after the items are written) saves the scores linked to their items."""

    def __init__(self, version: JudgeVersion) -> None:
        self.version = version
        self.name = f"{version.judge.name} v{version.number}"
        self.client = judge_client(version)
        self.pending: dict[str, JudgeScore] = {}  # item id -> unsaved score

    def judge(self, item: Any, reply: str, trace: Mapping[str, Any]) -> Any:
        from training_app.evals.qa_runner import JudgeVerdict

        facts = {"context": dict(item.context or {}), "facts": list(item.facts or [])}
        score = reply_score(
            version=self.version,
            comment=item.comment,
            facts=facts,
            reply=reply,
            client=self.client,
        )
        self.pending[item.id] = score
        if not score.parsed:
            reason = score.error or "judge gave no answer"
            return JudgeVerdict(False, 0.0, reason, self.name, None, False)
        value = float(score.result["effectiveness_value"])
        reason = str(score.result["effectiveness"]["reason"])
        return JudgeVerdict(True, value, reason, self.name, value, False)

    def store(self, run_id: int) -> int:
        """Save the pending scores, each linked to its stored item result; returns how many."""
        self.client.close()
        items = dict(
            EvalItemResult.objects.filter(run_id=run_id, item_id__in=self.pending).values_list(
                "item_id", "pk"
            )
        )
        rows = []
        for item_id, score in self.pending.items():
            score.eval_item_id = items.get(item_id)
            rows.append(score)
        JudgeScore.objects.bulk_create(rows)
        self.pending = {}
        return len(rows)
