"""Writes of the labeler's side of blind tests: hand out pairs, take labels, undo, skip.

Overlap rules (docs/LABELING.md):

* A pair takes at most k labels (``labels_needed``), each from a different labeler. A pair is
  handed to a labeler only while ``label_count`` plus the *other* labelers' unexpired open
  assignments stays below k: an open assignment reserves a slot for
  ``HAT_BLIND_ASSIGNMENT_TTL_S`` seconds.
* Every slot change happens with the pair's row locked (``SELECT ... FOR UPDATE``; the search
  for a new pair skips rows other labelers hold locked, ``SKIP LOCKED``), and the room is
  re-counted after the lock is taken, so two labelers at once never over-reserve. The check
  constraint ``label_count <= labels_needed`` and the unique (pair, labeler) label are the
  database's backstop. SQLite (``make run``) has no row locks: there a write transaction is
  serialized by the database file lock, and one that read stale rows fails instead of writing.
* A labeler holds up to ``HELD`` pairs: the one on screen and the next one, prefetched so it
  appears at once. A reload shows the same pair (the oldest open assignment).
* A label submitted twice counts once and returns the first label. A label on an expired
  assignment is taken if the pair still has room, refused otherwise.
* Undo deletes the labeler's last label in the test and reopens its assignment, so the same
  pair (same left/right) comes back; skip releases the slot for good for that labeler.

Choices arrive in screen terms (``a`` = left reply, ``b`` = right reply) and are stored in side
terms with the assignment's ``left_side``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, TextChoices
from django.utils import timezone

from experiments_app.models.blind_tests import (
    BlindLabel,
    BlindPair,
    BlindTest,
    BlindTestLabeler,
    PairAssignment,
    Side,
)
from experiments_app.selectors import blind_labeling as reads

# The pair on screen and the one prefetched behind it.
HELD = 2
# How many times a claim looks again when a locked candidate turned out to be full.
CLAIM_ATTEMPTS = 5
REASON_MAX_CHARS = 1000
MAX_SECONDS = 24 * 3600.0
OPEN = PairAssignment.State.OPEN


class ScreenChoice(TextChoices):
    """A labeler's verdict as the page shows it: A is the left reply, B the right one."""

    A = "a", "A is better"
    TIE = "tie", "Tie"
    B = "b", "B is better"
    BOTH_BAD = "both_bad", "Both are bad"


class LabelingError(Exception):
    """A refused labeling action; ``field`` names the input at fault ("" for the request)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Shown:
    """A pair as handed to a labeler, with the side shown on the left."""

    pair: BlindPair
    left_side: str

    @property
    def reply_a(self) -> str:
        return self.pair.reply_one if self.left_side == Side.ONE else self.pair.reply_two

    @property
    def reply_b(self) -> str:
        return self.pair.reply_two if self.left_side == Side.ONE else self.pair.reply_one


@dataclass(frozen=True)
class LabelingState:
    """What the labeling page shows now (``current``) and next (``upcoming``)."""

    current: Shown | None
    upcoming: Shown | None
    progress: reads.Progress
    preview: bool = False


def assignment_ttl() -> timedelta:
    return timedelta(seconds=float(settings.HAT_BLIND_ASSIGNMENT_TTL_S))


def side_choice(*, screen_choice: str, left_side: str) -> str:
    """Map a screen choice to the stored side choice given which side was on the left."""
    right_side = Side.TWO if left_side == Side.ONE else Side.ONE
    mapping = {
        ScreenChoice.A: left_side,
        ScreenChoice.B: right_side,
        ScreenChoice.TIE: BlindLabel.Choice.TIE,
        ScreenChoice.BOTH_BAD: BlindLabel.Choice.BOTH_BAD,
    }
    if screen_choice not in mapping:
        allowed = ", ".join(c.value for c in ScreenChoice)
        raise LabelingError("choice", f"'{screen_choice}' is not a choice; allowed: {allowed}")
    return str(mapping[ScreenChoice(screen_choice)])


def screen_choice(*, choice: str, left_side: str) -> str:
    """The stored side choice as the labeler made it on screen (the inverse of side_choice)."""
    if choice in (BlindLabel.Choice.TIE, BlindLabel.Choice.BOTH_BAD):
        return choice
    return ScreenChoice.A.value if choice == left_side else ScreenChoice.B.value


def _clean_reason(reason: str) -> str:
    if "\x00" in reason:
        raise LabelingError("reason", "must not contain U+0000")
    reason = reason.strip()
    if len(reason) > REASON_MAX_CHARS:
        raise LabelingError("reason", f"at most {REASON_MAX_CHARS} characters")
    return reason


def _clean_seconds(seconds: float | None) -> float | None:
    if seconds is None:
        return None
    if not 0 <= seconds <= MAX_SECONDS:
        raise LabelingError("seconds", f"must be between 0 and {MAX_SECONDS:.0f}")
    return float(seconds)


def _lock_membership(test: BlindTest, labeler_id: int) -> None:
    """Serialize one labeler's requests on one test (two tabs): their holds stay consistent."""
    locked = BlindTestLabeler.objects.select_for_update().filter(test=test, labeler_id=labeler_id)
    if not locked.exists():
        raise LabelingError("", "You are not assigned to this test.")


def _lock_pair(pair_id: int) -> BlindPair:
    return BlindPair.objects.select_for_update().get(pk=pair_id)


def _claim_one(
    *, test: BlindTest, labeler_id: int, now: datetime, tried: set[int]
) -> PairAssignment | None:
    """Reserve a slot on the labeler's next pair, or None when nothing is open to them."""
    for _ in range(CLAIM_ATTEMPTS):
        full = reads.pairs_full_by_reservations(test=test, labeler_id=labeler_id, now=now)
        candidates = (
            reads.candidate_pairs(test=test, labeler_id=labeler_id, exclude_ids=full | tried)
            .order_by(reads.order_key(test=test, labeler_id=labeler_id), "pk")
            .select_for_update(skip_locked=True, of=("self",))
        )
        pair = candidates.first()
        if pair is None:
            return None
        # The lock is ours; count again with a fresh statement (commits of other claims since
        # the candidate search are visible now, and no new claim on this pair can commit).
        if reads.pair_has_room(pair=pair, labeler_id=labeler_id, now=now):
            return PairAssignment.objects.create(
                pair=pair,
                labeler_id=labeler_id,
                test=test,
                left_side=reads.left_side_for(test=test, pair=pair, labeler_id=labeler_id),
                expires_at=now + assignment_ttl(),
            )
        tried.add(pair.pk)
    return None


def _refresh_holds(*, test: BlindTest, labeler_id: int, now: datetime) -> list[PairAssignment]:
    """The labeler's open assignments, each still holding a slot: an expired one is renewed
    when its pair still has room for them, and dropped otherwise (another labeler took it)."""
    holds = reads.held_assignments(test=test, labeler_id=labeler_id)
    expired = [a for a in holds if a.expires_at <= now]
    if not expired:
        return holds
    # Lock the pairs in id order (one statement): two labelers renewing never deadlock.
    locked = {
        p.pk: p
        for p in BlindPair.objects.select_for_update()
        .filter(pk__in=[a.pair_id for a in expired])
        .order_by("pk")
    }
    kept: list[PairAssignment] = []
    for assignment in holds:
        if assignment.expires_at > now:
            kept.append(assignment)
            continue
        pair = locked[assignment.pair_id]
        if reads.pair_has_room(pair=pair, labeler_id=labeler_id, now=now):
            assignment.expires_at = now + assignment_ttl()
            assignment.save(update_fields=["expires_at", "updated_at"])
            assignment.pair = pair
            kept.append(assignment)
        else:
            assignment.delete()
    return kept


def _shown(assignment: PairAssignment | None) -> Shown | None:
    if assignment is None:
        return None
    return Shown(pair=assignment.pair, left_side=assignment.left_side)


def labeling_state(*, test: BlindTest, labeler_id: int) -> LabelingState:
    """The pair to show the labeler now and the next one, reserving slots as needed."""
    with transaction.atomic():
        _lock_membership(test, labeler_id)
        now = timezone.now()
        holds = _refresh_holds(test=test, labeler_id=labeler_id, now=now)
        tried: set[int] = set()
        while len(holds) < HELD:
            claimed = _claim_one(test=test, labeler_id=labeler_id, now=now, tried=tried)
            if claimed is None:
                break
            holds.append(claimed)
        progress = reads.labeling_progress(test=test, labeler_id=labeler_id, now=now)
    return LabelingState(
        current=_shown(holds[0] if holds else None),
        upcoming=_shown(holds[1] if len(holds) > 1 else None),
        progress=progress,
    )


def preview_state(*, test: BlindTest, user_id: int) -> LabelingState:
    """An unassigned operator's look at the test: the first pairs in their order, nothing
    reserved, nothing counted."""
    pairs = reads.preview_pairs(test=test, user_id=user_id, count=HELD)
    shown = [
        Shown(pair=p, left_side=reads.left_side_for(test=test, pair=p, labeler_id=user_id))
        for p in pairs
    ]
    total = BlindPair.objects.filter(test=test, ready=True).count()
    return LabelingState(
        current=shown[0] if shown else None,
        upcoming=shown[1] if len(shown) > 1 else None,
        progress=reads.Progress(done=0, available=total),
        preview=True,
    )


@dataclass(frozen=True)
class Submitted:
    label: BlindLabel
    created: bool


def label_submit(
    *,
    test: BlindTest,
    labeler_id: int,
    pair_token: str,
    choice: str,
    reason: str = "",
    seconds: float | None = None,
) -> Submitted:
    """Store the labeler's verdict on a pair they were shown; the same pair again returns the
    first label unchanged (``created=False``)."""
    if choice not in ScreenChoice.values:
        allowed = ", ".join(ScreenChoice.values)
        raise LabelingError("choice", f"'{choice}' is not a choice; allowed: {allowed}")
    reason = _clean_reason(reason)
    seconds = _clean_seconds(seconds)
    if test.status != BlindTest.Status.OPEN:
        raise LabelingError("", "This test is closed for labeling.")
    pair_ref = reads.pair_in_test(test=test, token=pair_token)
    if pair_ref is None:
        raise LabelingError("pair", "No such pair in this test.")
    with transaction.atomic():
        _lock_membership(test, labeler_id)
        pair = _lock_pair(pair_ref.pk)
        existing = BlindLabel.objects.filter(pair=pair, labeler_id=labeler_id).first()
        if existing is not None:
            return Submitted(label=existing, created=False)
        assignment = (
            PairAssignment.objects.select_for_update()
            .filter(pair=pair, labeler_id=labeler_id)
            .first()
        )
        if assignment is None:
            raise LabelingError("pair", "This pair was not shown to you.")
        if assignment.state == PairAssignment.State.SKIPPED:
            raise LabelingError("pair", "You skipped this pair.")
        stored_choice = side_choice(screen_choice=choice, left_side=assignment.left_side)
        now = timezone.now()
        if assignment.expires_at <= now and not reads.pair_has_room(
            pair=pair, labeler_id=labeler_id, now=now
        ):
            raise LabelingError(
                "pair",
                "Your time on this pair ran out and other labelers have since filled it; "
                "your label was not stored.",
            )
        try:
            with transaction.atomic():
                label = BlindLabel.objects.create(
                    pair=pair,
                    test=test,
                    labeler_id=labeler_id,
                    choice=stored_choice,
                    left_side=assignment.left_side,
                    reason=reason,
                    seconds=seconds,
                )
                BlindPair.objects.filter(pk=pair.pk).update(label_count=F("label_count") + 1)
        except IntegrityError:
            # Only reachable without row locks (SQLite): the unique label or the k check.
            existing = BlindLabel.objects.filter(pair=pair, labeler_id=labeler_id).first()
            if existing is not None:
                return Submitted(label=existing, created=False)
            raise LabelingError("pair", "This pair has all the labels it needs.") from None
        assignment.state = PairAssignment.State.LABELED
        assignment.save(update_fields=["state", "updated_at"])
    return Submitted(label=label, created=True)


@dataclass(frozen=True)
class Undone:
    pair: BlindPair
    choice: str  # in screen terms


def label_undo(*, test: BlindTest, labeler_id: int) -> Undone:
    """Delete the labeler's last label in the test and reopen its assignment: the same pair,
    with the same left/right, is shown again."""
    if test.status != BlindTest.Status.OPEN:
        raise LabelingError("", "This test is closed for labeling.")
    with transaction.atomic():
        _lock_membership(test, labeler_id)
        last = reads.last_label_of(test=test, labeler_id=labeler_id)
        if last is None:
            raise LabelingError("", "There is no label to undo.")
        pair = _lock_pair(last.pair_id)
        undone = Undone(
            pair=pair, choice=screen_choice(choice=last.choice, left_side=last.left_side)
        )
        last.delete()
        BlindPair.objects.filter(pk=pair.pk).update(label_count=F("label_count") - 1)
        PairAssignment.objects.update_or_create(
            pair=pair,
            labeler_id=labeler_id,
            defaults={
                "state": OPEN,
                "expires_at": timezone.now() + assignment_ttl(),
                "left_side": last.left_side,
                "test": test,
            },
        )
    return undone


def pair_skip(*, test: BlindTest, labeler_id: int, pair_token: str) -> BlindPair:
    """Give back a pair the labeler holds; it is never offered to them again."""
    if test.status != BlindTest.Status.OPEN:
        raise LabelingError("", "This test is closed for labeling.")
    pair = reads.pair_in_test(test=test, token=pair_token)
    if pair is None:
        raise LabelingError("pair", "No such pair in this test.")
    with transaction.atomic():
        _lock_membership(test, labeler_id)
        assignment = (
            PairAssignment.objects.select_for_update()
            .filter(pair=pair, labeler_id=labeler_id)
            .first()
        )
        if assignment is None:
            raise LabelingError("pair", "This pair was not shown to you.")
        if assignment.state == PairAssignment.State.LABELED:
            raise LabelingError("pair", "You labeled this pair; undo the label instead.")
        if assignment.state != PairAssignment.State.SKIPPED:
            assignment.state = PairAssignment.State.SKIPPED
            assignment.save(update_fields=["state", "updated_at"])
    return pair


__all__ = [
    "HELD",
    "REASON_MAX_CHARS",
    "LabelingError",
    "LabelingState",
    "ScreenChoice",
    "Shown",
    "Submitted",
    "Undone",
    "label_submit",
    "label_undo",
    "labeling_state",
    "pair_skip",
    "preview_state",
    "screen_choice",
    "side_choice",
]
