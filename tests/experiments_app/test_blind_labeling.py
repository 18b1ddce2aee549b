"""The labeler's side of blind tests, as services: handing out pairs under the k-label limit,
labels in side terms, double submits, undo, skip, expiry, left/right balance and who may label.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.http import Http404
from django.utils import timezone

from console.roles import Role
from experiments_app.models import BlindLabel, BlindPair, BlindTest, PairAssignment
from experiments_app.selectors import blind_labeling as reads
from experiments_app.services import blind_labeling as labeling
from tests.experiments_app.blind_labeling_data import build_blind_test
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def labelers(n: int) -> list[Any]:
    return [UserFactory(username=f"lab{i}", role=Role.LABELER) for i in range(n)]


def state(test: BlindTest, user: Any) -> labeling.LabelingState:
    return labeling.labeling_state(test=test, labeler_id=user.pk)


def label(test: BlindTest, user: Any, pair: BlindPair, choice: str = "a", **kw: Any) -> Any:
    return labeling.label_submit(
        test=test, labeler_id=user.pk, pair_token=pair.token, choice=choice, **kw
    )


def test_next_pair_reserves_and_a_reload_shows_the_same_pair(operator: Any) -> None:
    # given
    (alice,) = labelers(1)
    test = build_blind_test(operator=operator, labelers=[alice], pairs=6, k=2)
    # when
    first = state(test, alice)
    again = state(test, alice)
    # then: the pair on screen and a different prefetched one, both reserved, stable on reload
    assert first.current is not None and first.upcoming is not None
    assert first.current.pair.pk != first.upcoming.pair.pk
    assert again.current is not None and again.upcoming is not None
    assert (again.current.pair.pk, again.upcoming.pair.pk) == (
        first.current.pair.pk,
        first.upcoming.pair.pk,
    )
    held = PairAssignment.objects.filter(labeler=alice, state="open")
    assert held.count() == labeling.HELD
    assert first.progress == reads.Progress(done=0, available=6)


def test_pair_order_is_the_labelers_own_keyed_shuffle(operator: Any) -> None:
    alice, bob = labelers(2)
    test = build_blind_test(operator=operator, labelers=[alice, bob], pairs=40, k=2)
    ids = list(BlindPair.objects.filter(test=test).values_list("pk", flat=True))

    def expected(user: Any) -> list[int]:
        return sorted(
            ids,
            key=lambda pid: reads.order_key_python(test=test, labeler_id=user.pk, pair_id=pid),
        )

    for user in (alice, bob):
        shown = state(test, user)
        assert shown.current is not None and shown.upcoming is not None
        assert [shown.current.pair.pk, shown.upcoming.pair.pk] == expected(user)[:2]
    # two labelers do not walk the pairs in the same order (40! orders; equal by chance ~0)
    assert expected(alice) != expected(bob)
    assert sorted(ids) != expected(alice)


def test_k_is_enforced_counting_labels_and_other_labelers_reservations(operator: Any) -> None:
    # given one pair with k=2 and three labelers
    alice, bob, carol = labelers(3)
    test = build_blind_test(operator=operator, labelers=[alice, bob, carol], pairs=1, k=2)
    pair = BlindPair.objects.get(test=test)
    # when alice and bob are shown it, carol gets nothing: both slots are reserved
    assert state(test, alice).current is not None
    assert state(test, bob).current is not None
    carol_view = state(test, carol)
    assert carol_view.current is None
    assert carol_view.progress == reads.Progress(done=0, available=0)
    # one label + one reservation still fill k=2
    label(test, alice, pair)
    assert state(test, carol).current is None
    # bob skips: his slot is free again and carol gets the pair
    labeling.pair_skip(test=test, labeler_id=bob.pk, pair_token=pair.token)
    carol_view = state(test, carol)
    assert carol_view.current is not None and carol_view.current.pair.pk == pair.pk
    label(test, carol, pair, "b")
    pair.refresh_from_db()
    assert pair.label_count == 2 == BlindLabel.objects.filter(pair=pair).count()
    # full: nobody is shown it again, and a label from bob (who skipped) is refused
    assert state(test, bob).current is None
    with pytest.raises(labeling.LabelingError) as refused:
        label(test, bob, pair)
    assert refused.value.field == "pair"


def test_a_label_submitted_twice_counts_once_and_returns_the_first(operator: Any) -> None:
    (alice,) = labelers(1)
    test = build_blind_test(operator=operator, labelers=[alice], pairs=3, k=2)
    shown = state(test, alice).current
    assert shown is not None
    first = label(test, alice, shown.pair, "a", reason="clearer")
    second = label(test, alice, shown.pair, "b", reason="changed my mind")
    assert first.created is True and second.created is False
    assert second.label.pk == first.label.pk
    assert second.label.choice == first.label.choice == shown.left_side
    assert second.label.reason == "clearer"
    shown.pair.refresh_from_db()
    assert shown.pair.label_count == 1
    assert BlindLabel.objects.filter(pair=shown.pair).count() == 1


@pytest.mark.parametrize("left_side", ["one", "two"])
def test_screen_choices_map_to_sides_for_either_left_side(left_side: str) -> None:
    right_side = "two" if left_side == "one" else "one"
    expected = {"a": left_side, "b": right_side, "tie": "tie", "both_bad": "both_bad"}
    for screen, side in expected.items():
        assert labeling.side_choice(screen_choice=screen, left_side=left_side) == side
        assert labeling.screen_choice(choice=side, left_side=left_side) == screen
    with pytest.raises(labeling.LabelingError) as refused:
        labeling.side_choice(screen_choice="one", left_side=left_side)
    assert refused.value.field == "choice"


def test_a_label_is_stored_in_side_terms_with_the_left_side(operator: Any) -> None:
    # given pairs shown with either side on the left
    alice, bob = labelers(2)
    test = build_blind_test(operator=operator, labelers=[alice, bob], pairs=30, k=2)
    seen_left = set()
    for user in (alice, bob):
        for _ in range(15):
            shown = state(test, user).current
            assert shown is not None
            # reply A is the reply of the left side
            if shown.left_side == "one":
                assert shown.reply_a == shown.pair.reply_one
                assert shown.reply_b == shown.pair.reply_two
            else:
                assert shown.reply_a == shown.pair.reply_two
                assert shown.reply_b == shown.pair.reply_one
            # when the labeler prefers A
            stored = label(test, user, shown.pair, "a").label
            # then the side on the left won, and the left side is kept for the bias check
            assert stored.choice == shown.left_side
            assert stored.left_side == shown.left_side
            seen_left.add(shown.left_side)
    assert seen_left == {"one", "two"}


def test_left_right_is_balanced_and_keyed_per_pair_and_labeler(operator: Any) -> None:
    users = labelers(5)
    test = build_blind_test(operator=operator, labelers=users, pairs=400, k=5)
    pairs = list(BlindPair.objects.filter(test=test))
    draws = [
        reads.left_side_for(test=test, pair=pair, labeler_id=user.pk)
        for pair in pairs
        for user in users
    ]
    share = draws.count("one") / len(draws)
    # 2,000 fair coins: sd 0.011, so 0.45..0.55 is a 4.5-sigma band
    assert 0.45 <= share <= 0.55
    # per pair, labelers disagree on the order for some pairs (not one order per pair)
    per_pair = [
        {reads.left_side_for(test=test, pair=p, labeler_id=u.pk) for u in users} for p in pairs
    ]
    assert sum(len(sides) == 2 for sides in per_pair) > 300  # expected 400 * (1 - 2/32)
    # another salt draws other sides: the order cannot be predicted without the salt
    other = BlindTest(order_salt="another-salt")
    redrawn = [
        reads.left_side_for(test=other, pair=pair, labeler_id=user.pk)
        for pair in pairs
        for user in users
    ]
    agreement = sum(a == b for a, b in zip(draws, redrawn, strict=True)) / len(draws)
    assert 0.45 <= agreement <= 0.55
    # the stored assignment uses the same draw
    shown = state(test, users[0]).current
    assert shown is not None
    assert shown.left_side == reads.left_side_for(
        test=test, pair=shown.pair, labeler_id=users[0].pk
    )


def test_undo_deletes_the_last_label_and_shows_the_pair_again(operator: Any) -> None:
    (alice,) = labelers(1)
    test = build_blind_test(operator=operator, labelers=[alice], pairs=5, k=2)
    first = state(test, alice).current
    assert first is not None
    label(test, alice, first.pair, "a")
    second = state(test, alice).current
    assert second is not None and second.pair.pk != first.pair.pk
    label(test, alice, second.pair, "tie")
    # when
    undone = labeling.label_undo(test=test, labeler_id=alice.pk)
    # then the second label is gone, its pair is shown again with the same left side
    assert undone.pair.pk == second.pair.pk and undone.choice == "tie"
    second.pair.refresh_from_db()
    assert second.pair.label_count == 0
    assert not BlindLabel.objects.filter(pair=second.pair, labeler=alice).exists()
    again = state(test, alice)
    assert again.current is not None
    assert again.current.pair.pk == second.pair.pk
    assert again.current.left_side == second.left_side
    assert again.progress.done == 1
    # it can be labeled again; a second undo takes back that label, a third the first one
    label(test, alice, second.pair, "b")
    assert labeling.label_undo(test=test, labeler_id=alice.pk).pair.pk == second.pair.pk
    assert labeling.label_undo(test=test, labeler_id=alice.pk).pair.pk == first.pair.pk
    with pytest.raises(labeling.LabelingError, match="no label to undo"):
        labeling.label_undo(test=test, labeler_id=alice.pk)
    assert BlindPair.objects.filter(test=test, label_count__gt=0).count() == 0


def test_skip_releases_the_slot_and_never_shows_the_pair_again(operator: Any) -> None:
    alice, bob = labelers(2)
    test = build_blind_test(operator=operator, labelers=[alice, bob], pairs=3, k=1)
    shown = state(test, alice).current
    assert shown is not None
    labeling.pair_skip(test=test, labeler_id=alice.pk, pair_token=shown.pair.token)
    assert PairAssignment.objects.get(pair=shown.pair, labeler=alice).state == "skipped"
    # alice walks through the other pairs and never gets the skipped one
    seen = []
    for _ in range(5):
        current = state(test, alice).current
        if current is None:
            break
        seen.append(current.pair.pk)
        label(test, alice, current.pair)
    assert shown.pair.pk not in seen and len(seen) == 2
    # its slot is free for bob
    bob_view = state(test, bob)
    assert bob_view.current is not None and bob_view.current.pair.pk == shown.pair.pk
    with pytest.raises(labeling.LabelingError, match="skipped"):
        label(test, alice, shown.pair)


def test_an_expired_assignment_frees_its_slot(operator: Any, settings: Any) -> None:
    settings.HAT_BLIND_ASSIGNMENT_TTL_S = 60
    alice, bob = labelers(2)
    test = build_blind_test(operator=operator, labelers=[alice, bob], pairs=1, k=1)
    pair = BlindPair.objects.get(test=test)
    held = state(test, alice).current
    assert held is not None and held.pair.pk == pair.pk
    assert state(test, bob).current is None
    assignment = PairAssignment.objects.get(pair=pair, labeler=alice)
    ttl = (assignment.expires_at - assignment.created_at).total_seconds()
    assert 59 <= ttl <= 61
    # when alice's reservation runs out, bob gets the pair
    PairAssignment.objects.filter(pk=assignment.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    bob_view = state(test, bob)
    assert bob_view.current is not None and bob_view.current.pair.pk == pair.pk
    # alice's late label is refused with a clear error: the pair has no room left
    with pytest.raises(labeling.LabelingError, match="ran out") as refused:
        label(test, alice, pair)
    assert refused.value.field == "pair"
    # and her page drops the expired hold instead of showing a full pair
    assert state(test, alice).current is None
    label(test, bob, pair)
    pair.refresh_from_db()
    assert pair.label_count == 1


def test_a_late_label_is_taken_while_the_pair_has_room(operator: Any) -> None:
    (alice,) = labelers(1)
    test = build_blind_test(operator=operator, labelers=[alice], pairs=2, k=1)
    held = state(test, alice).current
    assert held is not None
    PairAssignment.objects.filter(labeler=alice).update(
        expires_at=timezone.now() - timedelta(seconds=5)
    )
    assert label(test, alice, held.pair).created is True
    # an expired hold with room is renewed on the next look, not dropped
    renewed = state(test, alice).current
    assert renewed is not None
    assignment = PairAssignment.objects.get(pair=renewed.pair, labeler=alice)
    assert assignment.expires_at > timezone.now()


def test_labels_need_a_shown_pair_and_valid_fields(operator: Any) -> None:
    (alice,) = labelers(1)
    test = build_blind_test(operator=operator, labelers=[alice], pairs=4, k=1)
    shown = state(test, alice).current
    assert shown is not None
    never_shown = (
        BlindPair.objects.filter(test=test)
        .exclude(pk__in=PairAssignment.objects.values("pair"))
        .first()
    )
    assert never_shown is not None
    cases: list[tuple[dict[str, Any], str, str]] = [
        (dict(pair=never_shown), "pair", "not shown"),
        (dict(pair=shown.pair, reason="bad\x00byte"), "reason", "U\\+0000"),
        (dict(pair=shown.pair, reason="x" * 1001), "reason", "1000"),
        (dict(pair=shown.pair, seconds=-1.0), "seconds", "between"),
        (dict(pair=shown.pair, choice="left"), "choice", "not a choice"),
    ]
    for kwargs, field, message in cases:
        with pytest.raises(labeling.LabelingError, match=message) as refused:
            label(test, alice, **{"choice": "a", **kwargs})
        assert refused.value.field == field
    with pytest.raises(labeling.LabelingError) as refused:
        labeling.label_submit(test=test, labeler_id=alice.pk, pair_token="nope", choice="a")
    assert refused.value.field == "pair"
    # nothing was stored by the refusals
    assert BlindLabel.objects.count() == 0
    assert BlindPair.objects.filter(test=test, label_count__gt=0).count() == 0
    # a 1000-character reason is fine
    assert label(test, alice, shown.pair, reason="y" * 1000).label.reason == "y" * 1000


def test_progress_counts_my_labels_and_what_is_open_to_me(operator: Any) -> None:
    alice, bob = labelers(2)
    test = build_blind_test(operator=operator, labelers=[alice, bob], pairs=4, k=1)
    # bob holds two pairs (k=1): two are open to alice
    state(test, bob)
    view = state(test, alice)
    assert view.progress == reads.Progress(done=0, available=2)
    assert view.current is not None
    label(test, alice, view.current.pair)
    assert state(test, alice).progress == reads.Progress(done=1, available=2)


def test_who_may_label_which_test(operator: Any, merchant: Any) -> None:
    alice, bob = labelers(2)
    test = build_blind_test(operator=operator, labelers=[alice, merchant], pairs=2, k=1)
    # an assigned labeler on an open test
    access = reads.labeling_test_get(user=alice, token=test.token)
    assert access.assigned and not access.preview
    # a labeler not assigned, a merchant even when assigned, an unknown token: 404
    for user, token in ((bob, test.token), (merchant, test.token), (alice, "unknown")):
        with pytest.raises(Http404):
            reads.labeling_test_get(user=user, token=token)
    with pytest.raises(labeling.LabelingError, match="not assigned"):
        labeling.labeling_state(test=test, labeler_id=bob.pk)
    with pytest.raises(labeling.LabelingError, match="not assigned"):
        labeling.label_submit(
            test=test,
            labeler_id=bob.pk,
            pair_token=BlindPair.objects.filter(test=test).first().token,  # type: ignore[union-attr]
            choice="a",
        )
    # a closed test is gone for its labelers
    BlindTest.objects.filter(pk=test.pk).update(status=BlindTest.Status.CLOSED)
    with pytest.raises(Http404):
        reads.labeling_test_get(user=alice, token=test.token)
    # the labeler's list shows open assigned tests only
    BlindTest.objects.filter(pk=test.pk).update(status=BlindTest.Status.OPEN)
    assert [t.pk for t in reads.labeling_tests_for(alice)] == [test.pk]
    assert list(reads.labeling_tests_for(bob)) == []


def test_an_operator_preview_reserves_and_counts_nothing(operator: Any) -> None:
    (alice,) = labelers(1)
    test = build_blind_test(operator=operator, labelers=[alice], pairs=3, k=1)
    access = reads.labeling_test_get(user=operator, token=test.token)
    assert access.preview
    view = labeling.preview_state(test=test, user_id=operator.pk)
    assert view.preview and view.current is not None and view.upcoming is not None
    assert PairAssignment.objects.count() == 0
    # the operator's list shows the test as a preview
    (listed,) = reads.labeling_tests_for(operator)
    assert listed.pk == test.pk and listed.assigned is False  # type: ignore[attr-defined]
    # the labeler still has every pair
    assert state(test, alice).progress == reads.Progress(done=0, available=3)
