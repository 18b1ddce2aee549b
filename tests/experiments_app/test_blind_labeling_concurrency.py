"""Twenty labelers labeling at once against PostgreSQL: no pair passes k, no label is lost,
every pair's ``label_count`` is its real number of labels, and a label sent twice at once
counts once.

Each labeler runs in its own thread with its own database connection (real transactions and
row locks, hence ``transaction=True``); a barrier starts them together."""

from __future__ import annotations

import random
import threading
from collections import Counter
from typing import Any

import pytest
from django.db import connection

from console.roles import Role
from experiments_app.models import BlindLabel, BlindPair, PairAssignment
from experiments_app.selectors import blind_labeling as reads
from experiments_app.services import blind_labeling as labeling
from tests.db_sessions import wait_for_other_sessions_to_close
from tests.experiments_app.blind_labeling_data import build_blind_test
from tests.factories import UserFactory

LABELERS = 20
PAIRS = 40
K = 3

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row locks need PostgreSQL (CI runs it)"
    ),
]


def _label_everything(
    test: Any, user: Any, barrier: threading.Barrier, seed: int
) -> tuple[list[tuple[int, int]], list[str]]:
    """Label every pair open to ``user``; sometimes send the same label twice in a row or
    skip. Returns the (pair, labeler) labels it created, and any error."""
    rng = random.Random(seed)
    created: list[tuple[int, int]] = []
    errors: list[str] = []
    try:
        barrier.wait(timeout=30)
        for _ in range(PAIRS * 2):
            state = labeling.labeling_state(test=test, labeler_id=user.pk)
            if state.current is None:
                break
            pair = state.current.pair
            if rng.random() < 0.05:
                labeling.pair_skip(test=test, labeler_id=user.pk, pair_token=pair.token)
                continue
            choice = rng.choice(["a", "b", "tie", "both_bad"])
            for _repeat in range(2 if rng.random() < 0.2 else 1):
                submitted = labeling.label_submit(
                    test=test, labeler_id=user.pk, pair_token=pair.token, choice=choice
                )
                if submitted.created:
                    created.append((pair.pk, user.pk))
    except Exception as exc:
        errors.append(f"{user.username}: {type(exc).__name__}: {exc}")
    finally:
        connection.close()
    return created, errors


def _double_submit(test: Any, user: Any, token: str, barrier: threading.Barrier, out: list) -> None:  # type: ignore[type-arg]
    try:
        barrier.wait(timeout=30)
        out.append(
            labeling.label_submit(test=test, labeler_id=user.pk, pair_token=token, choice="a")
        )
    except Exception as exc:
        out.append(exc)
    finally:
        connection.close()


def test_twenty_labelers_at_once_never_pass_k_nor_lose_a_label(operator: Any) -> None:
    # given
    users: list[Any] = [
        UserFactory(username=f"conc{i}", role=Role.LABELER) for i in range(LABELERS)
    ]
    test = build_blind_test(operator=operator, labelers=users, pairs=PAIRS, k=K)
    barrier = threading.Barrier(LABELERS)
    results: dict[int, tuple[list[tuple[int, int]], list[str]]] = {}

    def run(i: int, user: Any) -> None:
        results[i] = _label_everything(test, user, barrier, seed=i)

    # when all twenty label at once
    threads = [threading.Thread(target=run, args=(i, u)) for i, u in enumerate(users)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    wait_for_other_sessions_to_close()

    # then no thread failed (no deadlock, no constraint error)
    errors = [e for _created, errs in results.values() for e in errs]
    assert errors == []
    assert len(results) == LABELERS
    created = [pl for made, _errs in results.values() for pl in made]
    stored = list(BlindLabel.objects.filter(test=test).values_list("pair_id", "labeler_id"))
    # every label a labeler was told was stored is there, once
    assert sorted(created) == sorted(stored)
    assert len(set(stored)) == len(stored)
    per_pair = Counter(pair_id for pair_id, _ in stored)
    pairs = list(BlindPair.objects.filter(test=test))
    for pair in pairs:
        # never past k, and the counter is the real count
        assert pair.label_count <= K
        assert pair.label_count == per_pair.get(pair.pk, 0)
    assert reads.labels_of_pair_count(p.pk for p in pairs) == dict(per_pair)
    # nothing is left reserved: every labeler ran out of pairs
    assert PairAssignment.objects.filter(test=test, state="open").count() == 0
    # a slot a late skip gave back is labeled in a sweep afterwards: then every pair has k
    for user in users:
        while (shown := labeling.labeling_state(test=test, labeler_id=user.pk).current) is not None:
            labeling.label_submit(
                test=test, labeler_id=user.pk, pair_token=shown.pair.token, choice="tie"
            )
    counts = list(BlindPair.objects.filter(test=test).values_list("label_count", flat=True))
    assert counts == [K] * PAIRS
    assert BlindLabel.objects.filter(test=test).count() == PAIRS * K


def test_the_same_label_sent_twice_at_once_counts_once(operator: Any) -> None:
    user: Any = UserFactory(username="twice", role=Role.LABELER)
    test = build_blind_test(operator=operator, labelers=[user], pairs=2, k=2)
    shown = labeling.labeling_state(test=test, labeler_id=user.pk).current
    assert shown is not None
    barrier = threading.Barrier(8)
    out: list[Any] = []
    threads = [
        threading.Thread(target=_double_submit, args=(test, user, shown.pair.token, barrier, out))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    wait_for_other_sessions_to_close()
    assert all(isinstance(r, labeling.Submitted) for r in out), out
    assert sum(r.created for r in out) == 1
    assert len({r.label.pk for r in out}) == 1
    shown.pair.refresh_from_db()
    assert shown.pair.label_count == 1 == BlindLabel.objects.filter(pair=shown.pair).count()
