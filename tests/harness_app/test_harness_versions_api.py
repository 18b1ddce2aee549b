"""Harness versioning through the API: drafts, conflicts, publish, rollback, diff, zip."""

from __future__ import annotations

import copy
import io
import threading
import zipfile

import pytest
from django.db import IntegrityError, connection, transaction

from harness_app import services
from harness_app.harness.serialization import harness_to_dict, harness_to_yaml
from harness_app.models import Harness, HarnessVersion

pytestmark = pytest.mark.django_db


def versions_url(room) -> str:  # type: ignore[no-untyped-def]
    return f"/api/v1/harnesses/{room.harness.pk}/versions/"


def edited_content(
    demo_harness,
    description: str = "Answers product questions. Use when a viewer asks about a product.",
) -> dict:  # type: ignore[no-untyped-def]
    content = copy.deepcopy(harness_to_dict(demo_harness))
    content["skills"][0]["description"] = description
    return content


def test_edit_creates_a_new_draft_on_top_of_the_base(published_room, merchant_api, demo_harness):
    response = merchant_api.post(
        versions_url(published_room),
        {"base_version": 1, "message": "reword", "content": edited_content(demo_harness)},
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["number"], body["parent"], body["status"], body["author"]) == (
        2,
        1,
        "draft",
        "merchant-a",
    )
    v1 = HarnessVersion.objects.get(harness=published_room.harness, number=1)
    assert body["hashes"]["skills"] != v1.skills_hash
    assert body["hashes"]["tools"] == v1.tools_hash  # only skills changed
    assert v1.content == harness_to_dict(demo_harness)  # v1 is untouched


def test_saving_on_a_stale_base_is_409_naming_the_newer_version(
    published_room, merchant_api, operator_api, demo_harness
):
    # given two editors who both loaded v1
    first = operator_api.post(
        versions_url(published_room),
        {"base_version": 1, "content": edited_content(demo_harness, "A. Use when x.")},
        format="json",
    )
    assert first.status_code == 201
    # when the second saves on the stale base
    second = merchant_api.post(
        versions_url(published_room),
        {"base_version": 1, "content": edited_content(demo_harness, "B. Use when y.")},
        format="json",
    )
    # then it is refused, names version 2, and nothing was saved
    assert second.status_code == 409
    assert second.json()["latest_version"] == 2
    assert "version 2 is newer" in second.json()["detail"]
    assert HarnessVersion.objects.filter(harness=published_room.harness).count() == 2


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_writers_never_lose_an_update(published_room, operator, demo_harness):
    if connection.vendor != "postgresql":
        pytest.skip("row locks are exercised on PostgreSQL")
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def writer(text: str) -> None:
        content = copy.deepcopy(demo_harness)
        from dataclasses import replace

        content = replace(
            content, skills=(replace(content.skills[0], description=text), *content.skills[1:])
        )
        barrier.wait()
        try:
            v = services.harness_version_create(
                harness=published_room.harness, content=content, base_version=1, author=operator
            )
            outcomes.append(f"saved v{v.number}")
        except services.StaleBaseVersion as exc:
            outcomes.append(f"conflict latest={exc.latest}")
        finally:
            connection.close()

    threads = [
        threading.Thread(target=writer, args=(f"Writer {i}. Use when testing.",)) for i in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["conflict latest=2", "saved v2"]
    assert HarnessVersion.objects.filter(harness=published_room.harness).count() == 2


def test_invalid_content_is_400_with_field_errors_and_saves_nothing(
    published_room, merchant_api, demo_harness
):
    content = harness_to_dict(demo_harness)
    content["skills"][0]["name"] = "Promo Push"
    content["skills"][1]["allowed_tools"] = ["no_such_tool"]
    content["tools"][0]["input_schema"] = {
        "type": "object",
        "properties": {"sku": {"type": "strng"}},
    }
    content["prompt"]["sections"][0]["template"] = "Hello {unknown_var}"
    content["hooks"][1]["condition"] = "quoted_prices.exists(p, "
    response = merchant_api.post(
        versions_url(published_room), {"base_version": 1, "content": content}, format="json"
    )
    assert response.status_code == 400
    fields = {e["field"] for e in response.json()["errors"]}
    assert {
        "content.skills[0].name",
        "content.skills[1].allowed_tools[0]",
        "content.prompt.sections[0].template",
        "content.hooks[1].condition",
    } <= fields
    assert any(f.startswith("content.tools[0].input_schema") for f in fields)
    assert HarnessVersion.objects.filter(harness=published_room.harness).count() == 1


def test_duplicate_skill_names_are_rejected(published_room, merchant_api, demo_harness):
    content = harness_to_dict(demo_harness)
    content["skills"][1]["name"] = content["skills"][0]["name"]
    response = merchant_api.post(
        versions_url(published_room), {"base_version": 1, "content": content}, format="json"
    )
    assert response.status_code == 400
    assert any(e["field"] == "content.skills[1].name" for e in response.json()["errors"])


def test_yaml_mode_saves_the_same_content(published_room, merchant_api, demo_harness):
    response = merchant_api.post(
        versions_url(published_room),
        {"base_version": 1, "content_yaml": harness_to_yaml(demo_harness)},
        format="json",
    )
    assert response.status_code == 201
    assert response.json()["content"] == harness_to_dict(demo_harness)


def test_publish_moves_the_pointer_and_archives_the_previous(
    published_room, merchant_api, demo_harness
):
    merchant_api.post(
        versions_url(published_room),
        {"base_version": 1, "content": edited_content(demo_harness)},
        format="json",
    )
    response = merchant_api.post(
        f"/api/v1/harnesses/{published_room.harness.pk}/versions/2/publish/"
    )
    assert response.status_code == 200
    statuses = dict(
        HarnessVersion.objects.filter(harness=published_room.harness).values_list(
            "number", "status"
        )
    )
    assert statuses == {1: "archived", 2: "published"}
    assert Harness.objects.get(pk=published_room.harness.pk).published_version.number == 2
    again = merchant_api.post(f"/api/v1/harnesses/{published_room.harness.pk}/versions/2/publish/")
    assert again.status_code == 409


def test_rollback_republishes_an_older_version(published_room, merchant_api, demo_harness):
    hid = published_room.harness.pk
    merchant_api.post(
        versions_url(published_room),
        {"base_version": 1, "content": edited_content(demo_harness)},
        format="json",
    )
    merchant_api.post(f"/api/v1/harnesses/{hid}/versions/2/publish/")
    response = merchant_api.post(
        f"/api/v1/harnesses/{hid}/rollback/", {"to_version": 1}, format="json"
    )
    assert response.status_code == 200
    assert Harness.objects.get(pk=hid).published_version.number == 1
    statuses = dict(HarnessVersion.objects.filter(harness_id=hid).values_list("number", "status"))
    assert statuses == {1: "published", 2: "archived"}


def test_rollback_to_a_never_published_draft_is_refused(published_room, merchant_api, demo_harness):
    hid = published_room.harness.pk
    merchant_api.post(
        versions_url(published_room),
        {"base_version": 1, "content": edited_content(demo_harness)},
        format="json",
    )
    response = merchant_api.post(
        f"/api/v1/harnesses/{hid}/rollback/", {"to_version": 2}, format="json"
    )
    assert response.status_code == 409
    assert "never published" in response.json()["detail"]


def test_database_allows_only_one_published_version(published_room, operator, demo_harness):
    v2 = services.harness_version_create(
        harness=published_room.harness, content=demo_harness, base_version=1, author=operator
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        HarnessVersion.objects.filter(pk=v2.pk).update(status="published")


@pytest.mark.django_db(transaction=True)
def test_concurrent_publishes_leave_exactly_one_published(published_room, operator, demo_harness):
    if connection.vendor != "postgresql":
        pytest.skip("row locks are exercised on PostgreSQL")
    v2 = services.harness_version_create(
        harness=published_room.harness, content=demo_harness, base_version=1, author=operator
    )
    v3 = services.harness_version_create(
        harness=published_room.harness, content=demo_harness, base_version=2, author=operator
    )
    barrier = threading.Barrier(2)

    def publish(version):  # type: ignore[no-untyped-def]
        barrier.wait()
        try:
            services.harness_version_publish(version=version)
        finally:
            connection.close()

    threads = [threading.Thread(target=publish, args=(v,)) for v in (v2, v3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    published = list(
        HarnessVersion.objects.filter(harness=published_room.harness, status="published")
    )
    assert len(published) == 1
    assert Harness.objects.get(pk=published_room.harness.pk).published_version_id == published[0].pk


def test_diff_reads_as_sentences(published_room, merchant_api, demo_harness):
    content = edited_content(demo_harness)
    hook = next(h for h in content["hooks"] if h["name"] == "no-absolute-claims")
    hook["feedback"] = "Please avoid absolute claims such as 'best' or 'guaranteed'."
    merchant_api.post(
        versions_url(published_room), {"base_version": 1, "content": content}, format="json"
    )
    response = merchant_api.get(f"/api/v1/harnesses/{published_room.harness.pk}/diff/?from=1&to=2")
    assert response.status_code == 200
    summaries = [c["summary"] for c in response.json()["changes"]]
    skill = demo_harness.skills[0].name
    assert f"skill {skill}: description changed" in summaries
    assert "hook no-absolute-claims: feedback changed" in summaries
    assert len(summaries) == 2


def test_diff_rejects_bad_version_parameters(published_room, merchant_api):
    response = merchant_api.get(f"/api/v1/harnesses/{published_room.harness.pk}/diff/?from=x&to=1")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "from"
    assert (
        merchant_api.get(
            f"/api/v1/harnesses/{published_room.harness.pk}/diff/?from=1&to=9"
        ).status_code
        == 404
    )


def test_zip_export_then_import_is_lossless(published_room, merchant_api, demo_harness):
    hid = published_room.harness.pk
    exported = merchant_api.get(f"/api/v1/harnesses/{hid}/versions/1/export/")
    assert exported.status_code == 200
    assert exported["Content-Type"] == "application/zip"
    upload = io.BytesIO(exported.content)
    upload.name = "harness.zip"
    response = merchant_api.post(
        f"/api/v1/harnesses/{hid}/import/", {"file": upload, "base_version": 1}, format="multipart"
    )
    assert response.status_code == 201, response.json()
    v1, v2 = (HarnessVersion.objects.get(harness_id=hid, number=n) for n in (1, 2))
    assert v2.content == v1.content
    assert (v2.skills_hash, v2.tools_hash, v2.prompt_hash, v2.hooks_hash) == (
        v1.skills_hash,
        v1.tools_hash,
        v1.prompt_hash,
        v1.hooks_hash,
    )


def _zip(entries: dict[str, bytes]) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    buffer.seek(0)
    buffer.name = "bad.zip"
    return buffer


@pytest.mark.parametrize(
    "entries",
    [
        {"../evil.txt": b"x", "tools.json": b"[]"},
        {"/abs/tools.json": b"[]"},
        {"tools.json": b"\xff\xfe not utf-8", "prompt.yaml": b"sections: []", "hooks.yaml": b"[]"},
    ],
    ids=["path-traversal", "absolute-path", "non-utf8"],
)
def test_bad_zip_imports_are_400_and_save_nothing(published_room, merchant_api, entries):
    hid = published_room.harness.pk
    response = merchant_api.post(
        f"/api/v1/harnesses/{hid}/import/",
        {"file": _zip(entries), "base_version": 1},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["errors"], response.json()
    assert HarnessVersion.objects.filter(harness_id=hid).count() == 1


def test_payload_over_one_megabyte_is_400_naming_the_limit(published_room, merchant_api):
    big = {"base_version": 1, "content_yaml": "x" * (1_048_576 + 10)}
    response = merchant_api.post(versions_url(published_room), big, format="json")
    assert response.status_code == 400
    assert "limit is 1048576 bytes" in response.json()["detail"]
    assert HarnessVersion.objects.filter(harness=published_room.harness).count() == 1


def _exported_entries(merchant_api, hid) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    exported = merchant_api.get(f"/api/v1/harnesses/{hid}/versions/1/export/")
    with zipfile.ZipFile(io.BytesIO(exported.content)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_zip_with_deeply_nested_or_nul_content_is_400_and_saves_nothing(
    published_room, merchant_api
):
    hid = published_room.harness.pk
    entries = _exported_entries(merchant_api, hid)
    skill_md = next(name for name in entries if name.endswith("SKILL.md"))
    cases = {
        "tools.json": {"tools.json": b"[" * 100_000 + b"]" * 100_000},
        "manifest": {
            name: b'{"format": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
            for name in entries
            if name.endswith(".json") and name != "tools.json"
        },
        "skill body": {skill_md: entries[skill_md] + b"\x00"},
    }
    for case, replaced in cases.items():
        response = merchant_api.post(
            f"/api/v1/harnesses/{hid}/import/",
            {"file": _zip(entries | replaced), "base_version": 1},
            format="multipart",
        )
        assert response.status_code == 400, (case, response.content[:300])
        errors = response.json()["errors"]
        assert errors and all(e["field"].startswith("file") for e in errors), (case, errors)
        assert any(
            "nested deeper than 64 levels" in e["message"] or "U+0000" in e["message"]
            for e in errors
        ), (case, errors)
    assert HarnessVersion.objects.filter(harness_id=hid).count() == 1


def test_yaml_content_with_nul_in_a_skill_body_is_400_naming_it(published_room, merchant_api):
    version = HarnessVersion.objects.get(harness=published_room.harness)
    content = copy.deepcopy(version.content)
    content["skills"][0]["body"] += "\x00"
    from harness_app.harness.serialization import harness_from_dict

    text = harness_to_yaml(harness_from_dict(content))
    response = merchant_api.post(
        versions_url(published_room),
        {"base_version": 1, "content_yaml": text},
        format="json",
    )
    assert response.status_code == 400, response.content[:300]
    assert response.json()["errors"] == [
        {
            "field": "content.skills[0].body",
            "message": "must not contain the NUL character (U+0000)",
        }
    ]
    assert HarnessVersion.objects.filter(harness=published_room.harness).count() == 1


@pytest.mark.parametrize("value", ["%C2%B2", "-1", "0", "99999999999999999999999"])
def test_diff_version_parameters_are_bounded_whole_numbers(published_room, merchant_api, value):
    hid = published_room.harness.pk
    response = merchant_api.get(f"/api/v1/harnesses/{hid}/diff/?from=1&to={value}")
    assert response.status_code == 400, response.content[:300]
    (error,) = response.json()["errors"]
    assert error["field"] == "to"
    assert error["message"].startswith("must be a whole number from 1 to 2147483647")
