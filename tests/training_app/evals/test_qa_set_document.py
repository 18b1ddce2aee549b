"""The QA set document: written and read back unchanged, and every kind of bad upload
rejected with its line and field."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from harness_app.harness.serialization import harness_from_yaml, harness_to_dict
from training_app.evals.qa_set_document import (
    QASetFormatError,
    dumps_qa_set,
    loads_qa_set,
    read_qa_set,
    write_qa_set,
)
from training_app.evals.qa_sets import (
    QASet,
    build_harness_variant_qa_set,
    build_live_stream_qa_set,
)
from training_app.pipeline.catalog_snapshot import demo_catalog

ROOT = Path(__file__).resolve().parents[3]
DEMO_HARNESS = ROOT / "harness_app" / "demo_data" / "live_stream_harness.yaml"


@cache
def live_set() -> QASet:
    harness = harness_to_dict(harness_from_yaml(DEMO_HARNESS.read_text("utf-8")))
    return build_live_stream_qa_set(demo_catalog(), harness, per_type=2)


@cache
def t1_set() -> QASet:
    return build_harness_variant_qa_set(live_set(), "t1")


def lines(qa: QASet) -> list[dict[str, Any]]:
    return [json.loads(line) for line in dumps_qa_set(qa).splitlines()]


def text(records: list[dict[str, Any]]) -> str:
    return "\n".join(json.dumps(r) for r in records) + "\n"


def problems(records: list[dict[str, Any]] | str) -> list[str]:
    with pytest.raises(QASetFormatError) as caught:
        loads_qa_set(records if isinstance(records, str) else text(records))
    return [str(p) for p in caught.value.problems]


def test_round_trip_keeps_the_set_and_its_hash(tmp_path: Path) -> None:
    for qa in (live_set(), t1_set()):
        path = tmp_path / "set.jsonl"
        write_qa_set(qa, path)
        back = read_qa_set(path)
        assert back == qa and back.content_hash == qa.content_hash
        header = json.loads(path.read_text("utf-8").splitlines()[0])
        assert header["kind"] == qa.kind and header["format_version"] == 1
        assert header["content_hash"] == qa.content_hash
        assert header["counts"] == {"items": len(qa.items), "harnesses": len(qa.harnesses)}
        # the same set always writes the same bytes
        assert dumps_qa_set(back) == path.read_text("utf-8")


def test_a_minimal_hand_written_upload_gets_defaults() -> None:
    # given a header without hash or counts, one harness, items without ref, base_id, facts
    records = lines(live_set())
    header = {k: v for k, v in records[0].items() if k not in ("content_hash", "counts")}
    item = {k: v for k, v in records[3].items() if k in ("record", "id", "comment", "gold")}
    upload = [header, records[2], item]
    qa = loads_qa_set(text(upload))
    # then the defaults are filled in and the facts are derived from the gold
    (read,) = qa.items
    original = live_set().item(item["id"])
    assert read.harness_ref == original.harness_ref and read.base_id == read.id
    assert read.facts == original.facts and read.question_type == "gold"
    assert qa.catalog is None


def test_header_problems_name_line_1_and_the_field() -> None:
    records = lines(live_set())
    assert problems([{"record": "item"}, *records[1:]]) == [
        'line 1, record: the first line must be the header ({"record": "header", ...})'
    ]
    bad = dict(records[0], kind="qa", format_version=2, extra=1)
    assert problems([bad, *records[1:]]) == [
        "line 1, extra: unknown header key; allowed: content_hash, counts, format, "
        "format_version, kind, name, policy, record, seed, skipped, source, variant_set",
        "line 1, format_version: must be 1 (the only version), got 2",
        "line 1, kind: must be one of live_stream_qa, harness_variant_qa, got 'qa'",
    ]
    variant = lines(t1_set())
    bad = dict(variant[0], variant_set=None)
    assert "line 1, variant_set: a harness_variant_qa set must say which: t1, t2 (got None)" in (
        problems([bad, *variant[1:]])
    )
    bad = dict(variant[0], policy="harness-variant-t2")
    assert problems([bad, *variant[1:]]) == [
        "line 1, policy: must be null or 'harness-variant-t1' for this set, "
        "got 'harness-variant-t2'"
    ]
    assert problems("") == ["line 1: empty document: the first line must be the header record"]


def test_item_problems_name_their_line_and_field() -> None:
    records = lines(live_set())
    first = records[3]
    broken_gold = json.loads(json.dumps(first["gold"]))
    broken_gold["tool_calls"][0]["name"] = "get_prodct"
    upload = [
        records[0],
        records[1],
        records[2],
        dict(first, comment=""),
        dict(first, id=records[4]["id"], gold=broken_gold),
        "not json",
        dict(records[5], harness_ref="h-0000000000000000", context={"room": "x"}),
        dict(records[6], prompt_layout="yaml", facts=[""], variant={"policy": "x"}),
        records[4],
        {"record": "header"},
    ]
    raw = "\n".join(r if isinstance(r, str) else json.dumps(r) for r in upload)
    ref = records[2]["ref"]
    found = problems(raw)
    assert found[0] == "line 6: not valid JSON (Expecting value at column 1)"
    assert (
        "line 10, record: must be 'catalog', 'harness' or 'item' (got 'header'); "
        "only line 1 is the header" in found
    )
    assert "line 4, comment: is required: a non-empty string" in found
    assert (
        "line 5, gold: tool_calls[0]: tool 'get_prodct' is not a tool of the harness "
        f"(of harness_ref {ref!r})" in found
    )
    assert any(p.startswith("line 7, context.room: unknown; allowed: currency") for p in found)
    assert (
        f"line 7, harness_ref: 'h-0000000000000000' names no harness record (defined: {ref})"
        in found
    )
    assert "line 8, prompt_layout: must be one of markdown, xml, json" in found
    assert "line 8, facts: must be a list of non-empty strings" in found
    assert "line 8, variant: must be null in a live_stream_qa set" in found
    # line 5 was rejected, so line 9 reuses its id without a clash; nothing else is reported
    assert len(found) == 9


def test_harness_and_catalog_problems() -> None:
    records = lines(live_set())
    harness = json.loads(json.dumps(records[2]["harness"]))
    harness["tools"][0]["name"] = "bad name!"
    found = problems(
        [
            records[0],
            {"record": "catalog", "catalog": {"products": []}},
            dict(records[2], harness=harness),
            *records[3:5],
        ]
    )
    assert found[0] == "line 2, catalog: products must be a non-empty list"
    assert any(p.startswith("line 3, harness.tools[0].name:") for p in found), found
    found = problems([records[0], records[2], dict(records[2], ref="bad ref"), *records[3:5]])
    assert found == ["line 3, ref: must be 1-64 letters, digits, '.', '_' or '-'"]


def test_tampering_and_wrong_counts_are_caught() -> None:
    records = lines(live_set())
    changed = dict(records[3], comment=records[3]["comment"] + "!")
    found = problems([records[0], *records[1:3], changed, *records[4:]])
    assert len(found) == 1 and found[0].startswith(
        "line 1, content_hash: does not match the records (they hash to sha256:"
    )
    header = dict(records[0], counts={"items": 99, "harnesses": 1})
    assert problems([header, *records[1:]]) == [
        f"line 1, counts.items: says 99 but the document has {len(live_set().items)}"
    ]


def test_variant_sets_must_keep_to_their_families() -> None:
    records = lines(t1_set())
    item_line = next(i for i, r in enumerate(records) if r["record"] == "item")
    item = records[item_line]
    t2_transform = dict(item["variant"], transforms=["prompt_structure.json_layout"])
    train_transform = dict(item["variant"], transforms=["skill_ids.synonyms"], policy="manual")
    header = {k: v for k, v in records[0].items() if k != "content_hash"}
    upload = [
        header,
        *records[1:item_line],
        dict(item, variant=t2_transform),
        dict(records[item_line + 1], variant=train_transform),
        dict(records[item_line + 2], variant=None),
        *records[item_line + 3 :],
    ]
    found = problems(upload)
    n = item_line + 1
    assert found == [
        f"line {n}, variant.transforms: prompt_structure.json_layout is not a transform of "
        "policy 'harness-variant-t1'",
        f"line {n + 1}, variant.transforms: skill_ids.synonyms is a training transform; "
        "variant sets use held-out ones",
        f"line {n + 2}, variant: is required in a harness_variant_qa set",
    ]
    manual = dict(item["variant"], transforms=["prompt_structure.json_layout"], policy="manual")
    found = problems([header, *records[1:item_line], dict(item, variant=manual)])
    assert found == [
        f"line {n}, variant.transforms: prompt_structure.json_layout is of family "
        "prompt_structure, which is not a t1 family (skill_ids, tool_schemas)"
    ]


def test_problems_stop_at_the_limit() -> None:
    records = lines(live_set())
    bad_items = [dict(r, comment="") for r in records[3:]]
    with pytest.raises(QASetFormatError) as caught:
        loads_qa_set(text([records[0], *records[1:3], *bad_items]), max_problems=5)
    assert len(caught.value.problems) == 5 and caught.value.truncated
    assert str(caught.value).endswith("(stopped after 5 problems)")
