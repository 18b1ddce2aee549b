"""Reads of blind tests for operators: the list, one test with its sides, its labelers, and
its results (``experiments_app.stats.preference`` does the statistics; nothing is
re-implemented here) and the CSV of every label. Operators only: nothing here is for a
labeler's eyes (it names sides). docs/BLIND_TESTS.md.

The results cost a fixed number of queries whatever the size of the test: the labels (one
query, with their pair's gold fields), the labelers' names, and the pair counts.
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.http import Http404

from console.roles import Role
from experiments_app.models import BlindLabel, BlindPair, BlindSide, BlindTest, BlindTestLabeler
from experiments_app.stats.preference import (
    Label,
    PreferenceResult,
    pair_outcome,
    preference_result,
)

# A labeler is flagged on gold accuracy only after this many gold labels (one miss in two is
# noise, not a finding).
MIN_GOLD_LABELS = 3
CHOICE_TO_PREFERENCE = {"one": "a", "two": "b", "tie": "tie", "both_bad": "both_bad"}
CSV_COLUMNS = (
    "pair",
    "position",
    "gold",
    "gold_side",
    "comment",
    "product_sku",
    "side_one",
    "reply_one",
    "side_two",
    "reply_two",
    "left_side",
    "choice",
    "preferred",
    "labeler",
    "reason",
    "seconds",
    "labeled_at",
)


def _count(model: Any, **filters: Any) -> Coalesce:
    rows = (
        model.objects.filter(test=OuterRef("pk"), **filters)
        .order_by()
        .values("test")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(rows, output_field=IntegerField()), Value(0))


def blind_tests_list() -> QuerySet[BlindTest]:
    """Every test, newest first, with its room, experiment and counts (one query)."""
    return (
        BlindTest.objects.select_related("room", "experiment", "created_by")
        .annotate(
            pairs_n=_count(BlindPair, is_gold=False),
            ready_n=_count(BlindPair, is_gold=False, ready=True),
            labels_n=_count(BlindLabel),
            labelers_n=_count(BlindTestLabeler),
        )
        .order_by("-created_at", "-id")
    )


def blind_test_get(*, test_id: int) -> BlindTest:
    test = blind_tests_list().filter(pk=test_id).first()
    if test is None:
        raise Http404("No such blind test.")
    return test


def blind_test_sides(test: BlindTest) -> dict[str, BlindSide]:
    """``{"one": side, "two": side}`` with what each side runs (one query)."""
    sides = BlindSide.objects.filter(test=test).select_related(
        "experiment_arm", "harness_version", "endpoint"
    )
    return {s.side: s for s in sides.defer("harness_version__content")}


def blind_test_labelers(test: BlindTest) -> QuerySet[BlindTestLabeler]:
    return (
        BlindTestLabeler.objects.filter(test=test)
        .select_related("labeler")
        .order_by("labeler__username")
    )


def labelers_all() -> QuerySet[Any]:
    """Every labeler account, with how many tests each is assigned to."""
    return (
        get_user_model()
        .objects.filter(groups__name=Role.LABELER.value)
        .annotate(tests_n=Count("blind_assignments", distinct=True))
        .order_by("username")
    )


# --- results ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelerStats:
    labeler_id: int
    username: str
    labels: int  # every label, gold included
    agreement: float  # share of their labels on shared non-gold pairs that match the majority
    agreement_n: int
    gold_labels: int
    gold_correct: int
    flagged: bool

    @property
    def gold_accuracy(self) -> float:
        return self.gold_correct / self.gold_labels if self.gold_labels else math.nan


@dataclass(frozen=True)
class BlindTestResults:
    label_one: str
    label_two: str
    pairs: int  # regular pairs of the test
    pairs_ready: int
    gold_pairs: int
    labels: int  # non-gold labels
    gold_labels: int
    preference: PreferenceResult | None  # None before the first non-gold label
    both_bad_rate: float  # share of non-gold labels that said both replies are bad
    labelers: list[LabelerStats] = field(default_factory=list)

    @property
    def flagged(self) -> list[LabelerStats]:
        return [s for s in self.labelers if s.flagged]

    def headline(self) -> str:
        """The aggregate in words, as the report puts it."""
        p = self.preference
        if p is None:
            return "No labels yet."
        return (
            f"{self.label_one} wins {p.wins} · ties {p.ties} · {self.label_two} wins {p.losses}"
            f" over {p.pairs} pair{'s' if p.pairs != 1 else ''}"
        )


def blind_test_results(test: BlindTest, *, resamples: int = 2000) -> BlindTestResults:
    """The test's result: per-pair wins / ties / losses for side one (``preference_result``
    with side one as "A"), the both-bad rate, and per-labeler statistics with gold flags.
    Gold pairs are left out of the preference statistics."""
    sides = {s.side: s.label for s in BlindSide.objects.filter(test=test).only("side", "label")}
    rows = list(
        BlindLabel.objects.filter(test=test)
        .order_by("id")
        .values_list(
            "pair_id", "labeler_id", "choice", "left_side", "pair__is_gold", "pair__gold_side"
        )
    )
    counts = BlindPair.objects.filter(test=test).aggregate(
        pairs=Count("pk", filter=Q(is_gold=False)),
        ready=Count("pk", filter=Q(is_gold=False, ready=True)),
        gold=Count("pk", filter=Q(is_gold=True)),
    )
    regular = [r for r in rows if not r[4]]
    labels = [
        Label(
            pair_id=str(pair_id),
            labeler=str(labeler_id),
            choice=CHOICE_TO_PREFERENCE[choice],  # type: ignore[arg-type]
            a_on_left=left_side == "one",
        )
        for pair_id, labeler_id, choice, left_side, _gold, _gold_side in regular
    ]
    preference = preference_result(labels, resamples=resamples, seed=test.pk) if labels else None
    both_bad = sum(1 for r in regular if r[2] == "both_bad")
    return BlindTestResults(
        label_one=sides.get("one", "Side one"),
        label_two=sides.get("two", "Side two"),
        pairs=counts["pairs"],
        pairs_ready=counts["ready"],
        gold_pairs=counts["gold"],
        labels=len(regular),
        gold_labels=len(rows) - len(regular),
        preference=preference,
        both_bad_rate=both_bad / len(regular) if regular else math.nan,
        labelers=_labeler_stats(test, rows),
    )


def _outcome(choice: str) -> str:
    return {"one": "win", "two": "loss"}.get(choice, "tie")


def _labeler_stats(test: BlindTest, rows: list[tuple[Any, ...]]) -> list[LabelerStats]:
    by_pair: dict[int, list[str]] = defaultdict(list)
    for pair_id, _labeler, choice, _left, gold, _gold_side in rows:
        if not gold:
            by_pair[pair_id].append(CHOICE_TO_PREFERENCE[choice])
    majority = {p: pair_outcome(c) for p, c in by_pair.items() if len(c) >= 2}
    total: Counter[int] = Counter()
    agree: Counter[int] = Counter()
    shared: Counter[int] = Counter()
    gold_n: Counter[int] = Counter()
    gold_ok: Counter[int] = Counter()
    for pair_id, labeler, choice, _left, gold, gold_side in rows:
        total[labeler] += 1
        if gold:
            gold_n[labeler] += 1
            gold_ok[labeler] += choice == gold_side
        elif pair_id in majority:
            shared[labeler] += 1
            agree[labeler] += _outcome(choice) == majority[pair_id]
    names = dict(get_user_model().objects.filter(pk__in=list(total)).values_list("pk", "username"))
    out = []
    for labeler in sorted(total, key=lambda pk: str(names.get(pk, pk))):
        accuracy = gold_ok[labeler] / gold_n[labeler] if gold_n[labeler] else math.nan
        out.append(
            LabelerStats(
                labeler_id=labeler,
                username=str(names.get(labeler, labeler)),
                labels=total[labeler],
                agreement=agree[labeler] / shared[labeler] if shared[labeler] else math.nan,
                agreement_n=shared[labeler],
                gold_labels=gold_n[labeler],
                gold_correct=gold_ok[labeler],
                flagged=gold_n[labeler] >= MIN_GOLD_LABELS and accuracy < test.gold_min_accuracy,
            )
        )
    return out


# --- CSV export -------------------------------------------------------------------------------


def blind_test_labels_csv(test: BlindTest) -> Iterator[str]:
    """Every label as CSV lines (header first), in operator terms: which side each reply came
    from, which side was on the left, the choice and the preferred side's label. One query."""
    sides = {s.side: s.label for s in BlindSide.objects.filter(test=test).only("side", "label")}
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def flush() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    writer.writerow(CSV_COLUMNS)
    yield flush()
    labels = (
        BlindLabel.objects.filter(test=test)
        .select_related("pair", "labeler")
        .order_by("pair__position", "created_at", "id")
    )
    preferred = {"one": sides.get("one", "one"), "two": sides.get("two", "two"), "tie": "tie"}
    preferred["both_bad"] = "both bad"
    for label in labels.iterator(chunk_size=2000):
        pair = label.pair
        writer.writerow(
            [
                pair.token,
                pair.position + 1,
                "yes" if pair.is_gold else "no",
                pair.gold_side,
                pair.comment,
                (pair.context or {}).get("product_sku", ""),
                sides.get("one", ""),
                pair.reply_one,
                sides.get("two", ""),
                pair.reply_two,
                sides.get(label.left_side, label.left_side),
                label.choice,
                preferred[label.choice],
                label.labeler.get_username(),
                label.reason,
                "" if label.seconds is None else f"{label.seconds:.2f}",
                label.created_at.isoformat(),
            ]
        )
        yield flush()


def labels_csv_file_name(test: BlindTest) -> str:
    return f"blind-test-{test.pk}-labels.csv"
