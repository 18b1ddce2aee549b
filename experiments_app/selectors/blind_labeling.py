"""Reads of the labeler's side of blind tests: which tests a user may label, which pairs are
still open to a labeler, in which order, on which side each reply is shown, and progress.

Everything here is in the test's fixed side terms ("one" / "two"); the API and the pages map
it to what the labeler sees ("A" is the left reply, "B" the right one) and never send a side,
an arm, a version, an endpoint or a model name to a labeler (docs/LABELING.md).

Order and sides are keyed by the test's secret ``order_salt``:

* a labeler's pair order sorts the open pairs by ``sha256(salt:labeler:pair)``, computed by
  the database (Django's ``SHA256``: PostgreSQL's ``sha256()``, a registered function on
  SQLite), so picking the next pair is one top-1 sort over the test's open pairs;
* ``left_side`` is an HMAC-SHA256 (key: the salt) of (pair token, labeler): a fair coin per
  pair and labeler, unpredictable without the salt.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import (
    CharField,
    Count,
    Exists,
    F,
    Func,
    IntegerField,
    OuterRef,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Cast, Coalesce, Concat
from django.http import Http404

from console.roles import UserLike, is_labeler, is_operator
from experiments_app.models.blind_tests import (
    BlindLabel,
    BlindPair,
    BlindTest,
    BlindTestLabeler,
    PairAssignment,
    Side,
)

OPEN = PairAssignment.State.OPEN
NOT_FOUND = "No such labeling task."


@dataclass(frozen=True)
class LabelingAccess:
    """What ``user`` may do on ``test``: label (an assigned labeler) or only preview it (an
    operator who is not assigned: nothing is reserved or stored, counts stay as they are)."""

    test: BlindTest
    assigned: bool

    @property
    def preview(self) -> bool:
        return not self.assigned


@dataclass(frozen=True)
class Progress:
    """``done``: labels by this labeler in the test; ``available``: those plus the pairs still
    open to them (held, or with a free slot and never labeled or skipped by them)."""

    done: int
    available: int


def labeling_test_get(*, user: UserLike, token: str) -> LabelingAccess:
    """The test behind ``token`` for ``user``: an assigned labeler's open test, or any test
    for an operator (as a preview unless assigned). Anything else is a 404."""
    test = BlindTest.objects.filter(token=token).first()
    if test is None or not user.is_authenticated:
        raise Http404(NOT_FOUND)
    assigned = BlindTestLabeler.objects.filter(test=test, labeler_id=user.pk).exists()
    if assigned and test.status == BlindTest.Status.OPEN and is_labeler_or_operator(user):
        return LabelingAccess(test=test, assigned=True)
    if is_operator(user):
        return LabelingAccess(test=test, assigned=False)
    raise Http404(NOT_FOUND)


def is_labeler_or_operator(user: UserLike) -> bool:
    return is_labeler(user) or is_operator(user)


def labeling_tests_for(user: UserLike) -> QuerySet[BlindTest]:
    """The open tests ``user`` is assigned to (operators: every open test, unassigned ones as
    previews), each annotated with ``labeled_by_me``, ``held_by_me`` and ``assigned``; one
    query however many tests."""
    membership = BlindTestLabeler.objects.filter(test=OuterRef("pk"), labeler_id=user.pk)
    tests = BlindTest.objects.filter(status=BlindTest.Status.OPEN)
    if not is_operator(user):
        tests = tests.filter(Exists(membership))
    mine = BlindLabel.objects.filter(test=OuterRef("pk"), labeler_id=user.pk)
    return (
        tests.annotate(
            assigned=Exists(membership),
            labeled_by_me=_count_of(mine),
            open_pairs=_count_of(
                BlindPair.objects.filter(
                    test=OuterRef("pk"), ready=True, label_count__lt=F("labels_needed")
                )
            ),
        )
        .only("id", "token", "instructions", "status", "created_at")
        .order_by("-created_at", "-id")
    )


def _count_of(queryset: QuerySet[Any]) -> Coalesce:
    counted = (
        queryset.order_by()
        .annotate(_one=Value(1, output_field=IntegerField()))
        .values("_one")
        .annotate(n=Count("*"))
        .values("n")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def left_side_for(*, test: BlindTest, pair: BlindPair, labeler_id: int) -> str:
    """Which side this labeler sees on the left ("A") for this pair: a keyed fair coin."""
    message = f"left:{pair.token}:{labeler_id}".encode()
    digest = hmac.new(test.order_salt.encode(), message, hashlib.sha256).digest()
    return Side.ONE if digest[0] & 1 == 0 else Side.TWO


class Sha256Order(Func):
    """``sha256`` of a text, for ordering: PostgreSQL's built-in ``sha256()`` over the UTF-8
    bytes (a bytea, compared bytewise; no pgcrypto needed), and on SQLite the ``SHA256``
    function Django registers (lowercase hex, which sorts in the same order)."""

    function = "SHA256"
    output_field = CharField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler, connection, template="sha256(convert_to(%(expressions)s, 'UTF8'))", **extra
        )


def order_key(*, test: BlindTest, labeler_id: int) -> Sha256Order:
    """The labeler's pair order as a database expression: ``sha256(salt:labeler:pair id)``."""
    prefix = Value(f"{test.order_salt}:{labeler_id}:", output_field=CharField())
    return Sha256Order(Concat(prefix, Cast("pk", CharField()), output_field=CharField()))


def order_key_python(*, test: BlindTest, labeler_id: int, pair_id: int) -> str:
    """The same key computed here (tests, and reasoning about the order)."""
    return hashlib.sha256(f"{test.order_salt}:{labeler_id}:{pair_id}".encode()).hexdigest()


def held_assignments(*, test: BlindTest, labeler_id: int) -> list[PairAssignment]:
    """The labeler's open assignments in the test (expired ones too), oldest first, with their
    pairs: the first is what the page shows, the next one is prefetched."""
    return list(
        PairAssignment.objects.filter(test=test, labeler_id=labeler_id, state=OPEN)
        .select_related("pair")
        .order_by("created_at", "id")
    )


def reserved_elsewhere(*, pair_id: int, labeler_id: int | None, now: datetime) -> int:
    """Unexpired open assignments of ``pair_id`` held by other labelers (slots reserved)."""
    return (
        PairAssignment.objects.filter(pair_id=pair_id, state=OPEN, expires_at__gt=now)
        .exclude(labeler_id=labeler_id)
        .count()
    )


def pair_has_room(*, pair: BlindPair, labeler_id: int | None, now: datetime) -> bool:
    """Whether ``labeler_id`` may take a slot of ``pair``: its labels plus the slots other
    labelers hold stay below k. Call it with the pair's row locked and freshly read."""
    taken = pair.label_count + reserved_elsewhere(pair_id=pair.pk, labeler_id=labeler_id, now=now)
    return taken < pair.labels_needed


def pairs_full_by_reservations(
    *, test: BlindTest, labeler_id: int | None, now: datetime
) -> set[int]:
    """Pairs with a free label slot that other labelers' open assignments fill up. Small: at
    most a few pairs per active labeler, so it is read once and excluded by id."""
    held: dict[int, list[int]] = {}
    rows = (
        PairAssignment.objects.filter(test=test, state=OPEN, expires_at__gt=now)
        .exclude(labeler_id=labeler_id)
        .values_list("pair_id", "pair__label_count", "pair__labels_needed")
    )
    for pair_id, label_count, needed in rows:
        entry = held.setdefault(pair_id, [label_count, needed, 0])
        entry[2] += 1
    return {pid for pid, (count, needed, reserved) in held.items() if count + reserved >= needed}


def candidate_pairs(
    *, test: BlindTest, labeler_id: int | None, exclude_ids: Iterable[int] = ()
) -> QuerySet[BlindPair]:
    """Ready pairs with a label slot left that this labeler never held, labeled or skipped
    (the reservations of others are excluded by the caller, see ``pairs_full_by_reservations``)."""
    pairs = BlindPair.objects.filter(test=test, ready=True, label_count__lt=F("labels_needed"))
    if labeler_id is not None:
        seen = PairAssignment.objects.filter(test=test, labeler_id=labeler_id).values("pair_id")
        pairs = pairs.exclude(pk__in=seen)
    excluded = list(exclude_ids)
    if excluded:
        pairs = pairs.exclude(pk__in=excluded)
    return pairs


def preview_pairs(*, test: BlindTest, user_id: int, count: int) -> list[BlindPair]:
    """What an operator's preview shows: the first ready pairs in their own order (nothing is
    reserved)."""
    pairs = BlindPair.objects.filter(test=test, ready=True)
    return list(pairs.order_by(order_key(test=test, labeler_id=user_id), "pk")[:count])


def labeling_progress(*, test: BlindTest, labeler_id: int, now: datetime) -> Progress:
    """Labels by me, and labels by me plus the pairs still open to me: two queries."""
    done = BlindLabel.objects.filter(test=test, labeler_id=labeler_id).count()
    open_to_me = (
        candidate_pairs(
            test=test,
            labeler_id=labeler_id,
            exclude_ids=pairs_full_by_reservations(test=test, labeler_id=labeler_id, now=now),
        )
        .order_by()
        .aggregate(
            n=Count("pk"),
        )["n"]
    )
    held = PairAssignment.objects.filter(test=test, labeler_id=labeler_id, state=OPEN).count()
    return Progress(done=done, available=done + held + open_to_me)


def last_label_of(*, test: BlindTest, labeler_id: int) -> BlindLabel | None:
    return (
        BlindLabel.objects.filter(test=test, labeler_id=labeler_id)
        .order_by("-created_at", "-id")
        .first()
    )


def pair_in_test(*, test: BlindTest, token: str) -> BlindPair | None:
    return BlindPair.objects.filter(test=test, token=token).first()


def labels_of_pair_count(pair_ids: Iterable[int]) -> dict[int, int]:
    """Stored labels per pair (tests compare it with ``label_count``)."""
    rows = (
        BlindLabel.objects.filter(pair_id__in=list(pair_ids))
        .values("pair_id")
        .annotate(n=Count("id"))
        .values_list("pair_id", "n")
    )
    return dict(rows)


__all__ = [
    "LabelingAccess",
    "Progress",
    "candidate_pairs",
    "held_assignments",
    "labeling_progress",
    "labeling_test_get",
    "labeling_tests_for",
    "labels_of_pair_count",
    "last_label_of",
    "left_side_for",
    "order_key",
    "order_key_python",
    "pair_has_room",
    "pair_in_test",
    "pairs_full_by_reservations",
    "preview_pairs",
    "reserved_elsewhere",
]
