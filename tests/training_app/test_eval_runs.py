"""Eval sets and eval runs through the database: a set built from a room, uploads with line
errors, runs against an instant gold-answering endpoint (scores, progress, resume, cancel,
the versions record), IFEval through an endpoint, the score table and paired comparisons."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.gold_model import WRONG_ANSWER, GoldModelServer
from tests.conftest import publish_compact_harness
from training_app.evals import ifeval
from training_app.evals.qa_set_document import dumps_qa_set, loads_qa_set
from training_app.evals.score_table import ScoreTableError
from training_app.models import EvalRun, EvalSet, ModelEndpoint
from training_app.selectors import evals as eval_selectors
from training_app.services import evals

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def artifacts(tmp_path, settings):  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path / "artifacts"


@pytest.fixture
def run_eval_calls(monkeypatch) -> list[int]:  # type: ignore[no-untyped-def]
    from training_app.tasks import run_eval

    calls: list[int] = []
    monkeypatch.setattr(run_eval, "delay", lambda run_id: calls.append(run_id))
    return calls


@pytest.fixture
def qa_set(compact_room, operator) -> EvalSet:  # type: ignore[no-untyped-def]
    return evals.eval_set_build_qa(
        harness_version=compact_room.harness.published_version,
        name="Compact LS",
        per_type=1,
        seed=3,
        created_by=operator,
    )


def _endpoint(base_url: str, name: str = "gold", tool_mode: str = "text") -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        name=name, base_url=base_url, tool_mode=tool_mode, max_concurrency=8, timeout_s=10
    )


def _items(eval_set: EvalSet) -> Any:
    with eval_set.file.open("rb") as handle:
        return loads_qa_set(handle.read())


def test_a_set_built_from_a_room_is_stored_once_with_its_hash(qa_set, compact_room) -> None:
    # given the set built from the room's catalog and published harness
    document = _items(qa_set)
    # then the stored file is the set, its hash the version key, and building it again
    # returns the same row
    assert qa_set.kind == "live_stream_qa"
    assert qa_set.items == len(document.items) > 5
    assert qa_set.content_hash == document.content_hash
    assert {i.question_type for i in document.items} >= {"price", "stock", "off-topic"}
    again = evals.eval_set_build_qa(
        harness_version=compact_room.harness.published_version, name="x", per_type=1, seed=3
    )
    assert again.pk == qa_set.pk
    assert EvalSet.objects.count() == 1


def test_variant_sets_t1_and_t2_are_built_from_disjoint_families(compact_room) -> None:
    version = compact_room.harness.published_version
    t1 = evals.eval_set_build_qa(harness_version=version, name="T1", variant_set="t1", per_type=1)
    t2 = evals.eval_set_build_qa(harness_version=version, name="T2", variant_set="t2", per_type=1)
    assert (t1.variant_set, t2.variant_set) == ("t1", "t2")
    assert t1.benchmark == "harness_variant_t1"
    families_1, families_2 = _items(t1).transform_families, _items(t2).transform_families
    assert families_1 and families_2 and not families_1 & families_2


def test_an_upload_with_bad_lines_names_them_and_stores_nothing(qa_set) -> None:
    text = dumps_qa_set(_items(qa_set)).splitlines()
    text[3] = '{"record": "item", "id": 7}'
    with pytest.raises(evals.EvalSetError) as caught:
        evals.eval_set_upload(name="bad", data="\n".join(text).encode())
    assert any(p.startswith("line 4") for p in caught.value.problems), caught.value.problems
    assert EvalSet.objects.count() == 1


def test_an_upload_whose_gold_its_own_catalog_contradicts_is_refused(qa_set) -> None:
    # given a set whose first price item claims a price the catalog does not give
    document = json.loads(dumps_qa_set(_items(qa_set)).splitlines()[0])
    lines = dumps_qa_set(_items(qa_set)).splitlines()
    for n, line in enumerate(lines):
        record = json.loads(line)
        if record.get("record") == "item" and record["question_type"] == "price":
            record["gold"]["final_answer"] = "It is $1.23 today."
            record["gold"]["quoted_prices"] = [1.23]
            record.pop("facts", None)
            lines[n] = json.dumps(record)
            bad_id = record["id"]
            break
    lines[0] = json.dumps({k: v for k, v in document.items() if k != "content_hash"})
    # when it is uploaded, then the replay check names the item and nothing is stored
    with pytest.raises(evals.EvalSetError) as caught:
        evals.eval_set_upload(name="contradicted", data="\n".join(lines).encode())
    assert any(bad_id in p for p in caught.value.problems), caught.value.problems
    assert EvalSet.objects.count() == 1


def test_a_run_scores_every_item_against_its_gold(qa_set, operator, run_eval_calls) -> None:
    document = _items(qa_set)
    wrong = {document.items[0].id, document.items[2].id}
    with GoldModelServer(document.items, wrong_items=wrong) as server:
        endpoint = _endpoint(server.base_url)
        # when a run is created (queued on commit) and its task body runs
        with pytest.raises(evals.EvalRunError):
            evals.eval_run_create(eval_set=qa_set, model_label=" ", endpoint=endpoint)
        run = evals.eval_run_create(
            eval_set=qa_set,
            model_label="HAT",
            endpoint=endpoint,
            max_concurrency=4,
            created_by=operator,
        )
        status = evals.eval_run_execute(run.pk)
        run.refresh_from_db()
        assert status == "succeeded", run.error
    run.refresh_from_db()
    # then every item has a row, exactly the wrong ones failed, and the summary agrees
    rows = list(run.item_results.order_by("position"))
    assert [r.item_id for r in rows] == [i.id for i in document.items]
    assert {r.item_id for r in rows if not r.passed} == wrong
    n = len(rows)
    assert run.progress_done == run.progress_total == n
    assert run.summary["n"] == n and run.summary["passed"] == n - 2
    assert run.summary["score"]["estimate"] == pytest.approx((n - 2) / n)
    assert run.summary["score"]["ci_low"] < (n - 2) / n < run.summary["score"]["ci_high"]
    failed = rows[0].result
    assert failed["reply"] == WRONG_ANSWER.strip()
    assert {"name": "reply_length", "passed": False}.items() <= next(
        c for c in failed["checks"] if c["name"] == "reply_length"
    ).items()
    # and the run keeps the versions of what it used
    assert run.versions["eval_set"]["content_hash"] == qa_set.content_hash
    assert run.versions["model"]["endpoint"] == "gold"
    assert run.versions["harness"]["harness_version"] == qa_set.harness_version_id
    assert len(run.versions["scorer"]["sha256"]) == 16
    assert run.generation["tool_mode"] == "text" and run.generation["temperature"] == 0.0


def test_a_redelivered_run_continues_after_the_items_it_stored(qa_set, run_eval_calls) -> None:
    document = _items(qa_set)
    with GoldModelServer(document.items) as server:
        run = evals.eval_run_create(
            eval_set=qa_set, model_label="HAT", endpoint=_endpoint(server.base_url), item_limit=4
        )
        status = evals.eval_run_execute(run.pk)
        run.refresh_from_db()
        assert status == "succeeded", run.error
        first = server.requests
        # a redelivered message for a run left "running" with 2 of its 4 items stored
        run.item_results.filter(position__gte=2).delete()
        EvalRun.objects.filter(pk=run.pk).update(status="running", progress_done=2)
        status = evals.eval_run_execute(run.pk)
        run.refresh_from_db()
        assert status == "succeeded", run.error
        # runs only the missing two
        per_item = first / 4
        assert server.requests - first == pytest.approx(2 * per_item, abs=2)
    assert run.item_results.count() == 4


def test_cancel_stops_between_items_and_keeps_what_finished(
    qa_set, run_eval_calls, monkeypatch
) -> None:
    monkeypatch.setattr(evals, "CANCEL_POLL_S", 0.0)
    document = _items(qa_set)
    with GoldModelServer(document.items) as server:
        run = evals.eval_run_create(
            eval_set=qa_set,
            model_label="HAT",
            endpoint=_endpoint(server.base_url),
            max_concurrency=1,
        )
        original = evals._ResultWriter.add

        def add_then_cancel(writer: Any, **kwargs: Any) -> None:
            original(writer, **kwargs)
            if writer.added == 2:
                evals.eval_run_cancel(run=run)

        evals._ResultWriter.add = add_then_cancel  # type: ignore[method-assign]
        try:
            assert evals.eval_run_execute(run.pk) == "cancelled"
        finally:
            evals._ResultWriter.add = original  # type: ignore[method-assign]
    run.refresh_from_db()
    # read before each item starts (poll interval 0 here): one item was in flight at most
    kept = run.item_results.count()
    assert kept in (2, 3) and kept < len(document.items)
    assert run.progress_done == kept and run.summary["n"] == kept


def test_a_queued_run_cancelled_never_runs(qa_set, run_eval_calls) -> None:
    run = evals.eval_run_create(
        eval_set=qa_set, model_label="A", endpoint=_endpoint("http://127.0.0.1:9/v1")
    )
    assert evals.eval_run_cancel(run=run).status == "cancelled"
    assert evals.eval_run_execute(run.pk) == "cancelled"
    assert run.item_results.count() == 0


def test_an_unreachable_endpoint_fails_items_as_infrastructure(qa_set, run_eval_calls) -> None:
    run = evals.eval_run_create(
        eval_set=qa_set, model_label="A", endpoint=_endpoint("http://127.0.0.1:9/v1"), item_limit=2
    )
    assert evals.eval_run_execute(run.pk) == "succeeded"
    rows = list(run.item_results.all())
    assert len(rows) == 2 and not any(r.passed for r in rows)
    assert all(r.infrastructure_error == "model_unavailable" for r in rows)
    run.refresh_from_db()
    assert run.summary["infrastructure_errors"] == 2


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"local_model_dir": "/nonexistent"}, "local_model_dir"),
        ({"max_concurrency": 99}, "max_concurrency"),
        ({"item_limit": 0}, "item_limit"),
        ({"max_tokens": 0}, "max_tokens"),
    ],
)
def test_bad_run_settings_name_the_field_and_create_nothing(qa_set, kwargs, field) -> None:
    endpoint = _endpoint("http://127.0.0.1:9/v1")
    if "local_model_dir" in kwargs:
        kwargs = {**kwargs}
        endpoint = None  # type: ignore[assignment]
    with pytest.raises(evals.EvalRunError) as caught:
        evals.eval_run_create(eval_set=qa_set, model_label="A", endpoint=endpoint, **kwargs)
    assert caught.value.field == field
    assert EvalRun.objects.count() == 0


def test_ifeval_needs_enough_tokens_for_length_instructions(run_eval_calls) -> None:
    eval_set = evals.eval_set_ifeval()
    assert eval_set.items == 541 and evals.eval_set_ifeval().pk == eval_set.pk
    with pytest.raises(evals.EvalRunError) as caught:
        evals.eval_run_create(
            eval_set=eval_set,
            model_label="A",
            endpoint=_endpoint("http://x.invalid/v1"),
            max_tokens=128,
        )
    assert caught.value.field == "max_tokens"


class _EchoIFEvalServer(GoldModelServer):
    """Answers every IFEval prompt with a fixed response."""

    plain = True

    def __init__(self, response: str) -> None:
        super().__init__(())
        self.response = response

    def next_action(self, messages: list[dict[str, Any]]) -> str:
        return self.response


def test_an_ifeval_run_gives_the_scorers_verdicts(run_eval_calls) -> None:
    eval_set = evals.eval_set_ifeval()
    response = "hello world. this is all lower case, with no capital letters at all."
    prompts = ifeval.load_prompts()[:12]
    expected = ifeval.score(prompts, {p.prompt: response for p in prompts})
    # the server answers in native mode's plain content (no tools are offered)
    with _EchoIFEvalServer(response) as server:
        run = evals.eval_run_create(
            eval_set=eval_set,
            model_label="Base",
            endpoint=_endpoint(server.base_url, tool_mode="native"),
            item_limit=12,
        )
        status = evals.eval_run_execute(run.pk)
        run.refresh_from_db()
        assert status == "succeeded", run.error
    run.refresh_from_db()
    rows = list(run.item_results.order_by("position"))
    assert [r.passed for r in rows] == [o.follow_all_instructions for o in expected.strict]
    assert [r.result["loose"]["follow_instruction_list"] for r in rows] == [
        list(o.follow_instruction_list) for o in expected.loose
    ]
    summary = run.summary
    assert summary["prompt_level_strict"]["estimate"] == pytest.approx(
        expected.accuracies.prompt_level_strict
    )
    assert summary["instruction_level_loose"] == pytest.approx(
        expected.accuracies.instruction_level_loose
    )
    assert run.generation["max_new_tokens"] == 512 and run.generation["decoding"] == "greedy"


def test_the_score_table_and_paired_comparison_from_stored_runs(
    compact_room, run_eval_calls
) -> None:
    version = compact_room.harness.published_version
    live = evals.eval_set_build_qa(harness_version=version, name="LS", per_type=1)
    t1 = evals.eval_set_build_qa(harness_version=version, name="T1", variant_set="t1", per_type=1)
    t2 = evals.eval_set_build_qa(harness_version=version, name="T2", variant_set="t2", per_type=1)
    runs: dict[tuple[str, str], EvalRun] = {}
    for model, wrong_share in (("Base", 2), ("HAT", 0)):
        for eval_set in (live, t1, t2):
            document = _items(eval_set)
            # Base fails every second variant item; HAT none
            wrong = (
                {i.id for n, i in enumerate(document.items) if n % wrong_share == 0}
                if wrong_share and eval_set.kind == "harness_variant_qa"
                else set()
            )
            with GoldModelServer(document.items, wrong_items=wrong) as server:
                endpoint = _endpoint(server.base_url, name=f"{model.lower()}-{eval_set.pk}")
                run = evals.eval_run_create(eval_set=eval_set, model_label=model, endpoint=endpoint)
                evals.eval_run_execute(run.pk)
            runs[model, eval_set.benchmark] = run
    report = eval_selectors.score_report(list(runs.values()), b=500)
    hat = report.table.row("HAT")
    base = report.table.row("Base")
    assert hat.cells["live_stream_qa"].estimate == pytest.approx(100.0)
    assert hat.cells["harness_variant_qa"].estimate == pytest.approx(100.0)
    t1_items = _items(t1).items
    expected_t1 = 100 * sum(1 for n, _ in enumerate(t1_items) if n % 2) / len(t1_items)
    assert base.cells["harness_variant_t1"].estimate == pytest.approx(expected_t1)
    held = {h.model: h for h in report.held_out}
    assert held["HAT"].errors.total == 0 and held["Base"].errors.total > 0
    assert held["HAT"].reduction is not None and held["HAT"].reduction.estimate == pytest.approx(
        1.0
    )
    assert "HAT" in report.table.to_csv()
    # paired: HAT vs Base on T1
    comparison = eval_selectors.eval_runs_compare(
        run_a=runs["Base", "harness_variant_t1"], run_b=runs["HAT", "harness_variant_t1"]
    )
    assert comparison.difference.estimate == pytest.approx(1 - expected_t1 / 100)
    assert comparison.mcnemar.only_b == len(t1_items) - sum(
        1 for n, _ in enumerate(t1_items) if n % 2
    )
    assert comparison.mcnemar.only_a == 0
    with pytest.raises(eval_selectors.ComparisonError):
        eval_selectors.eval_runs_compare(
            run_a=runs["Base", "harness_variant_t1"], run_b=runs["HAT", "live_stream_qa"]
        )


def test_the_score_table_pools_one_models_runs_over_rooms(
    compact_room, other_room, operator, run_eval_calls
) -> None:
    # given two rooms (same catalog and harness, so colliding item ids), each with its
    # Live-Stream, T1 and T2 sets, and Base failing every second T1 item in room B only
    versions = {"A": compact_room.harness.published_version}
    # Room B: the same catalog and compact harness as Room A, so its item ids collide
    versions["B"] = publish_compact_harness(other_room, operator).harness.published_version
    sets = {
        (room, variant): evals.eval_set_build_qa(
            harness_version=version, name=f"{room} {variant}", variant_set=variant, per_type=1
        )
        for room, version in versions.items()
        for variant in ("", "t1", "t2")
    }
    wrong_b_t1 = {i.id for n, i in enumerate(_items(sets["B", "t1"]).items) if n % 2 == 0}
    runs: list[EvalRun] = []
    for model in ("Base", "HAT"):
        for (room, variant), eval_set in sets.items():
            wrong = wrong_b_t1 if (model, room, variant) == ("Base", "B", "t1") else set()
            with GoldModelServer(_items(eval_set).items, wrong_items=wrong) as server:
                endpoint = _endpoint(server.base_url, name=f"{model}-{eval_set.pk}")
                run = evals.eval_run_create(eval_set=eval_set, model_label=model, endpoint=endpoint)
                evals.eval_run_execute(run.pk)
            runs.append(run)
    # when the table is built from all twelve runs
    report = eval_selectors.score_report(runs, b=300)
    # then each cell pools both rooms' items (none lost to the colliding ids) ...
    n_live = sets["A", ""].items + sets["B", ""].items
    n_t1 = sets["A", "t1"].items + sets["B", "t1"].items
    base = report.table.row("Base")
    assert base.cells["live_stream_qa"].n == n_live
    assert base.cells["live_stream_qa"].estimate == pytest.approx(100.0)
    assert base.cells["harness_variant_t1"].n == n_t1
    assert base.cells["harness_variant_t1"].estimate == pytest.approx(
        100 * (n_t1 - len(wrong_b_t1)) / n_t1
    )
    assert report.table.row("HAT").cells["harness_variant_qa"].estimate == pytest.approx(100.0)
    # ... and each room's variants pair with that room's Live-Stream items
    held = {h.model: h for h in report.held_out}
    assert report.problems == ()
    assert held["Base"].errors.total == len(wrong_b_t1) and held["HAT"].errors.total == 0
    # two runs of one model on the same set are still refused, naming both
    first = runs[6]  # HAT on room A's Live-Stream set
    with GoldModelServer(_items(first.eval_set).items) as server:
        again = evals.eval_run_create(
            eval_set=first.eval_set, model_label="HAT", endpoint=_endpoint(server.base_url, "again")
        )
        evals.eval_run_execute(again.pk)
    with pytest.raises(
        ScoreTableError, match=rf"two Live-Stream QA runs .*#{first.pk} and #{again.pk}"
    ):
        eval_selectors.score_report([*runs, again], b=100)


def test_a_runs_column_follows_its_variant_and_a_held_out_bfcl_set(qa_set, run_eval_calls) -> None:
    endpoint = _endpoint("http://127.0.0.1:9/v1")
    live = evals.eval_run_create(eval_set=qa_set, model_label="m", endpoint=endpoint)
    t2 = evals.eval_run_create(
        eval_set=qa_set, model_label="m", endpoint=endpoint, variant_set="t2"
    )
    assert (live.benchmark, t2.benchmark) == ("live_stream_qa", "harness_variant_t2")
    from console.forms.evals import run_choice_label

    assert run_choice_label(t2) == f"#{t2.pk} m · {qa_set.name} · T2"
    assert run_choice_label(live) == f"#{live.pk} m · {qa_set.name}"
    original = evals.eval_set_bfcl(categories=["live_simple"], per_category=4)
    held_out = evals.eval_set_bfcl(
        categories=["live_simple"], per_category=4, augmentation="bfcl-tool-schemas-heldout"
    )
    assert (original.benchmark, held_out.benchmark) == ("bfcl", "bfcl_heldout")


def _call_string(truth: list[dict[str, Any]]) -> str:
    """A Python call string of a BFCL possible answer: each argument's first acceptable value
    other than "" (which means "may be left out")."""
    calls = []
    for entry in truth:
        ((name, arguments),) = entry.items()
        chosen = {arg: [o for o in options if o != ""] for arg, options in arguments.items()}
        parts = [f"{arg}={values[0]!r}" for arg, values in chosen.items() if values]
        calls.append(f"{name}({', '.join(parts)})")
    return "[" + ", ".join(calls) + "]"


class _BfclServer(GoldModelServer):
    """Answers each BFCL question with its possible answer as a call string, except for the
    questions in ``wrong`` (answered with prose)."""

    plain = True

    def __init__(self, answers: dict[str, str]) -> None:
        super().__init__(())
        self.answers = answers

    def next_action(self, messages: list[dict[str, Any]]) -> str:
        question = str(messages[-1]["content"])
        return self.answers.get(question, "I cannot answer that with these functions.")


def test_a_bfcl_run_scores_calls_by_bfcls_rule(run_eval_calls) -> None:
    eval_set = evals.eval_set_bfcl(categories=["simple_python", "irrelevance"], per_category=6)
    assert eval_set.items == 12 and eval_set.benchmark == "bfcl"
    assert (
        evals.eval_set_bfcl(categories=["simple_python", "irrelevance"], per_category=6).pk
        == eval_set.pk
    )
    with eval_set.file.open("rb") as handle:
        cases = [json.loads(line) for line in handle.read().splitlines()]
    simple = [c for c in cases if c["category"] == "simple_python"]
    wrong = {simple[0]["id"], simple[1]["id"]}
    answers = {
        str(c["question"][0][-1]["content"]): _call_string(c["ground_truth"])
        for c in simple
        if c["id"] not in wrong
    }
    with _BfclServer(answers) as server:
        run = evals.eval_run_create(
            eval_set=eval_set,
            model_label="HAT",
            endpoint=_endpoint(server.base_url, tool_mode="native"),
        )
        status = evals.eval_run_execute(run.pk)
        run.refresh_from_db()
        assert status == "succeeded", run.error
    run.refresh_from_db()
    verdicts = {r.item_id: r.passed for r in run.item_results.all()}
    # every truthful call and every declined irrelevance case is valid; the prose answers
    # to call questions are not
    assert {k for k, v in verdicts.items() if not v} == wrong
    assert run.summary["score"]["estimate"] == pytest.approx(10 / 12)
    assert run.summary["categories"]["irrelevance"]["accuracy"] == 1.0
    first_wrong = run.item_results.get(item_id=simple[0]["id"]).result
    assert first_wrong["error_type"].startswith("ast_decoder")
    with pytest.raises(evals.EvalSetError):
        evals.eval_set_bfcl(categories=["java"])


def test_the_result_writer_upserts_and_stores_what_jsonb_refuses(qa_set, run_eval_calls) -> None:
    endpoint = _endpoint("http://127.0.0.1:9/v1")
    run = evals.eval_run_create(eval_set=qa_set, model_label="W", endpoint=endpoint)
    writer = evals._ResultWriter(run)
    fields = {"base_id": "b", "question_type": "price", "infrastructure_error": ""}
    writer.add(position=0, item_id="i", passed=False, result={"reply": "ok"}, **fields)
    writer.flush()
    # a redelivered item overwrites its row; a NUL and a NaN in a reply are stored, not a 500
    writer.add(
        position=0,
        item_id="i",
        passed=True,
        result={"reply": "a\x00b", "latency": float("nan"), "deep": [{"t": "\x00"}]},
        **fields,
    )
    writer.flush()
    (row,) = run.item_results.all()
    assert row.passed and row.score == 1.0
    assert row.result == {"reply": "a\ufffdb", "latency": None, "deep": [{"t": "\ufffd"}]}
    run.refresh_from_db()
    assert run.progress_done == 1
