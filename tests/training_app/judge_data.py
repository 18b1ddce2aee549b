"""Test data for the judge tests: a hand-built blind test with labels, and scripted judge
answers (JSON completions for tests/inference/scripted_server.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from experiments_app.models import BlindLabel, BlindPair, BlindSide, BlindTest
from tests.factories import UserFactory
from tests.inference.scripted_server import JsonReply, completion
from training_app.evals.judge import CRITERIA


def reply_answer(effectiveness: int = 4, score: int = 4) -> JsonReply:
    body = {name: {"score": score, "reason": f"{name} ok"} for name in CRITERIA}
    body["effectiveness"] = {"score": effectiveness, "reason": "answers the question"}
    return JsonReply(completion(json.dumps(body)))


def pair_answer(choice: str) -> JsonReply:
    return JsonReply(completion(json.dumps({"verdict": choice, "reason": "r"})))


def text_answer(text: str) -> JsonReply:
    return JsonReply(completion(text))


def blind_test(
    room: Any,
    endpoint: Any,
    labels: Sequence[Sequence[str]],
    *,
    gold_labels: Sequence[str] = (),
    name: str = "calibration test",
) -> BlindTest:
    """A test with one pair per entry of ``labels`` (each entry: that pair's label choices,
    one per labeler) and, when ``gold_labels`` is given, a labeled gold pair at the end."""
    version = room.harness.published_version
    test = BlindTest.objects.create(
        name=name,
        room=room,
        compare=BlindTest.Compare.ENDPOINTS,
        request_source=BlindTest.RequestSource.UPLOAD,
        reply_source=BlindTest.ReplySource.STORED,
        labels_per_pair=5,
        status=BlindTest.Status.OPEN,
    )
    for side in ("one", "two"):
        BlindSide.objects.create(
            test=test, side=side, label=f"side {side}", harness_version=version, endpoint=endpoint
        )
    width = max([len(x) for x in labels] + [len(gold_labels)])
    labelers: list[Any] = [UserFactory() for _ in range(width)]
    rows = [*labels, gold_labels] if gold_labels else list(labels)
    for position, choices in enumerate(rows):
        gold = bool(gold_labels) and position == len(rows) - 1
        pair = BlindPair.objects.create(
            test=test,
            position=position,
            comment=f"comment {position}",
            context={"product": {"title": f"product {position}", "price": 10 + position}},
            reply_one=f"reply one {position}",
            reply_two=f"reply two {position}",
            ready=True,
            is_gold=gold,
            gold_side="one" if gold else "",
            labels_needed=5,
            label_count=len(choices),
        )
        for labeler, choice in zip(labelers, choices, strict=False):
            BlindLabel.objects.create(
                pair=pair, test=test, labeler=labeler, choice=choice, left_side="one"
            )
    return test
