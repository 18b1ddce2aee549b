"""Harness history, version page, publish/rollback, export/import zip, diff."""

from __future__ import annotations

import dataclasses
import io
import zipfile
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from harness_app import services
from harness_app.harness.serialization import harness_from_dict
from harness_app.models import HarnessVersion
from tests.factories import ProductFactory

pytestmark = pytest.mark.django_db


def new_draft(harness: Any, author: Any, **skill_changes: str) -> HarnessVersion:
    """A new draft whose first skill has ``skill_changes`` applied."""
    latest = harness.versions.order_by("-number").first()
    content = harness_from_dict(latest.content)
    skills = list(content.skills)
    skills[0] = dataclasses.replace(skills[0], **skill_changes)
    return services.harness_version_create(
        harness=harness,
        content=dataclasses.replace(content, skills=tuple(skills)),
        base_version=latest.number,
        author=author,
        message=f"edit {skill_changes}",
    )


def test_history_lists_versions_and_highlights_the_published_one(
    merchant_client: Client, harness: Any, operator: Any
) -> None:
    new_draft(harness, operator, description="Use when a viewer asks anything. Shorter.")
    url = reverse("console:harness-detail", args=[harness.pk])
    html = merchant_client.get(url).content.decode()
    assert html.count('class="is-published"') == 1
    published_row = html.split('class="is-published"')[1].split("</tr>")[0]
    assert "v1" in published_row and "Published" in published_row and "op" in published_row
    assert "Publish v2…" in html  # the draft can be published
    assert reverse("console:version-export", args=[harness.pk, 1]) in html
    assert 'name="from"' in html and 'name="to"' in html  # diff picker
    assert 'enctype="multipart/form-data"' in html  # zip import


def test_history_query_count_is_flat(
    merchant_client: Client, harness: Any, operator: Any, django_assert_max_num_queries: Any
) -> None:
    for i in range(8):
        new_draft(harness, operator, description=f"Use when a viewer asks, take {i}.")
    # session, user, groups, harness, count, page of versions, latest version; the try-it
    # box: version numbers, active endpoints, the room's default endpoint
    with django_assert_max_num_queries(10):
        response = merchant_client.get(reverse("console:harness-detail", args=[harness.pk]))
    assert response.status_code == 200
    assert response.content.decode().count("<tr class=") == 9


def test_history_is_paginated(merchant_client: Client, harness: Any, operator: Any) -> None:
    for i in range(21):
        new_draft(harness, operator, description=f"Use when asked, variant {i}.")
    url = reverse("console:harness-detail", args=[harness.pk])
    assert "Page 1 of 2" in merchant_client.get(url).content.decode()
    page2 = merchant_client.get(url + "?page=2").content.decode()
    assert 'class="is-published"' in page2  # v1 is on the last page


def test_version_page_renders_every_component(
    merchant_client: Client, harness: Any, published_room: Any
) -> None:
    ProductFactory(room=published_room, sku="AAA-1", title="Alpaca Scarf")
    response = merchant_client.get(reverse("console:version-detail", args=[harness.pk, 1]))
    html = response.content.decode()
    assert response.status_code == 200
    for text in ("product-qa", "get_product", "quoted-price-matches-catalog", "Input schema"):
        assert text in html
    # the prompt preview is assembled with the room's first product as sample context
    preview = html.split('<pre class="block prompt">')[1].split("</pre>")[0]
    assert "Room A" in preview
    assert "## " in preview
    assert "AAA-1" in html and "Alpaca Scarf" in html
    xml = merchant_client.get(
        reverse("console:version-detail", args=[harness.pk, 1]) + "?layout=xml"
    ).content.decode()
    assert "&lt;section id=" in xml


def test_publish_asks_for_confirmation_then_publishes(
    merchant_client: Client, harness: Any, operator: Any
) -> None:
    draft = new_draft(harness, operator, description="Use when a viewer asks about products.")
    url = reverse("console:version-publish", args=[harness.pk, draft.number])
    confirm = merchant_client.get(url).content.decode()
    assert "Publish version 2?" in confirm and "runs version 1 now" in confirm
    draft.refresh_from_db()
    assert draft.status == "draft"  # a GET changes nothing
    response = merchant_client.post(url, follow=True)
    draft.refresh_from_db()
    harness.refresh_from_db()
    assert draft.status == "published" and harness.published_version_id == draft.pk
    assert "Published version 2" in response.content.decode()


def test_rollback_to_a_previously_published_version(
    merchant_client: Client, harness: Any, operator: Any
) -> None:
    draft = new_draft(harness, operator, description="Use when a viewer asks about products.")
    services.harness_version_publish(version=draft)
    history = merchant_client.get(reverse("console:harness-detail", args=[harness.pk]))
    assert reverse("console:version-rollback", args=[harness.pk, 1]) in history.content.decode()
    url = reverse("console:version-rollback", args=[harness.pk, 1])
    assert "Roll back to version 1?" in merchant_client.get(url).content.decode()
    response = merchant_client.post(url, follow=True)
    harness.refresh_from_db()
    assert harness.published_version.number == 1
    assert "Rolled back to version 1" in response.content.decode()


def test_rollback_to_a_never_published_version_is_refused(
    merchant_client: Client, harness: Any, operator: Any
) -> None:
    draft = new_draft(harness, operator, description="Use when a viewer asks about products.")
    url = reverse("console:version-rollback", args=[harness.pk, draft.number])
    assert "never published" in merchant_client.get(url).content.decode()
    response = merchant_client.post(url, follow=True)
    assert "Nothing changed" in response.content.decode()
    harness.refresh_from_db()
    assert harness.published_version.number == 1


def test_export_then_import_zip_makes_an_identical_draft(
    merchant_client: Client, harness: Any
) -> None:
    export = merchant_client.get(reverse("console:version-export", args=[harness.pk, 1]))
    assert export["Content-Type"] == "application/zip"
    assert zipfile.is_zipfile(io.BytesIO(export.content))
    response = merchant_client.post(
        reverse("console:harness-import", args=[harness.pk]),
        {
            "file": SimpleUploadedFile("h.zip", export.content, "application/zip"),
            "base_version": "1",
            "message": "round trip",
        },
    )
    assert response.status_code == 302
    v1, v2 = harness.versions.order_by("number")
    assert (v1.skills_hash, v1.tools_hash, v1.prompt_hash, v1.hooks_hash) == (
        v2.skills_hash,
        v2.tools_hash,
        v2.prompt_hash,
        v2.hooks_hash,
    )


def test_import_of_a_broken_zip_shows_the_errors_and_saves_nothing(
    merchant_client: Client, harness: Any
) -> None:
    response = merchant_client.post(
        reverse("console:harness-import", args=[harness.pk]),
        {
            "file": SimpleUploadedFile("h.zip", b"not a zip", "application/zip"),
            "base_version": "1",
        },
    )
    assert response.status_code == 400
    assert "Not imported" in response.content.decode()
    assert harness.versions.count() == 1


def test_diff_lists_sentences_by_component_with_hash_badges(
    merchant_client: Client, harness: Any, operator: Any
) -> None:
    new_draft(harness, operator, description="Use when a viewer asks what a product is.")
    response = merchant_client.get(
        reverse("console:harness-diff", args=[harness.pk]) + "?from=1&to=2"
    )
    html = response.content.decode()
    skills = html.split('id="diff-skills"')[1].split('id="diff-tools"')[0]
    assert "skill product-qa: description changed" in skills
    assert "hash changed" in skills
    for other in ("tools", "prompt", "hooks"):
        group = html.split(f'id="diff-{other}"')[1][:600]
        assert "hash equal" in group and "No changes." in group


def test_diff_of_missing_version_is_404_and_bad_input_is_a_field_error(
    merchant_client: Client, harness: Any
) -> None:
    url = reverse("console:harness-diff", args=[harness.pk])
    assert merchant_client.get(url + "?from=1&to=9").status_code == 404
    response = merchant_client.get(url + "?from=x&to=1")
    assert response.status_code == 400
    assert "Enter a whole number" in response.content.decode()
    assert merchant_client.get(url).status_code == 200  # picker only


def test_diff_shows_the_changed_lines_of_a_body_escaped(
    merchant_client: Client, harness: Any, operator: Any
) -> None:
    # given a new draft whose first skill body has one changed line (with markup in it)
    body = harness_from_dict(harness.versions.get().content).skills[0].body
    first_line = body.split("\n")[0]
    new_draft(harness, operator, body=body.replace(first_line, "<b>Product</b> Q&A", 1))
    # when the diff is opened
    html = merchant_client.get(
        reverse("console:harness-diff", args=[harness.pk]) + "?from=1&to=2"
    ).content.decode()
    # then the sentence is followed by the line diff: the old line removed, the new one
    # added (escaped), with unchanged context lines and line numbers
    skills = html.split('id="diff-skills"')[1].split('id="diff-tools"')[0]
    assert "skill product-qa: body changed" in skills
    assert "body: 1 line added, 1 removed" in skills
    removed = skills.split('class="line-removed"')[1].split("</tr>")[0]
    added = skills.split('class="line-added"')[1].split("</tr>")[0]
    assert (
        f'<td class="text">{escape(first_line)}</td>' in removed
        and '<td class="ln">1</td>' in removed
    )
    assert '<td class="text">&lt;b&gt;Product&lt;/b&gt; Q&amp;A</td>' in added
    assert "<b>Product</b>" not in skills
    assert skills.count('class="line-same"') == 3
    assert "unchanged lines" in skills
