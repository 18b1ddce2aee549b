"""The harness editor: form round trip, field-level errors, conflicts, YAML mode."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from harness_app import services
from harness_app.harness.serialization import harness_from_dict, harness_to_yaml
from harness_app.models import HarnessVersion
from tests.console.browser_form import as_post_data, form_fields, set_field

pytestmark = pytest.mark.django_db


def load_editor(client: Client, harness: Any, query: str = "") -> list[tuple[str, str]]:
    response = client.get(reverse("console:harness-edit", args=[harness.pk]) + query)
    assert response.status_code == 200
    return form_fields(response.content.decode(), "editor-form")


def save(client: Client, harness: Any, fields: list[tuple[str, str]]) -> Any:
    return client.post(reverse("console:harness-edit", args=[harness.pk]), as_post_data(fields))


def field_block(html: str, html_name: str) -> str:
    """The rendered wrapper of one field (label, widget, errors, warnings)."""
    start = html.index(f'data-field="{html_name}"')
    end = html.find('data-field="', start + 1)
    return html[start : end if end != -1 else None]


def field_errors(html: str, html_name: str) -> list[str]:
    return re.findall(r'class="field-error" role="alert">([^<]*)</p>', field_block(html, html_name))


def test_saving_the_untouched_form_reproduces_the_content_exactly(
    merchant_client: Client, harness: Any
) -> None:
    # given the editor as a browser submits it (textareas with CRLF line ends)
    fields = load_editor(merchant_client, harness)
    # when
    response = save(merchant_client, harness, fields)
    # then a new draft with the very same content and hashes
    assert response.status_code == 302
    v1, v2 = harness.versions.order_by("number")
    assert response["Location"] == reverse("console:version-detail", args=[harness.pk, 2])
    assert v2.status == "draft" and v2.parent_id == v1.pk
    assert v2.content == v1.content
    assert v2.skills_hash == v1.skills_hash and v2.hooks_hash == v1.hooks_hash


def test_editing_a_description_creates_a_draft_with_that_change(
    merchant_client: Client, harness: Any
) -> None:
    fields = load_editor(merchant_client, harness)
    fields = set_field(
        fields, "skills-0-description", "Use when a viewer asks about price, material or specs."
    )
    fields = set_field(fields, "message", "shorter description")
    response = save(merchant_client, harness, fields)
    assert response.status_code == 302
    page = merchant_client.get(response["Location"]).content.decode()
    assert "Saved as draft version 2" in page and "Publish v2…" in page
    v2 = harness.versions.get(number=2)
    assert v2.message == "shorter description"
    assert v2.content["skills"][0]["description"] == (
        "Use when a viewer asks about price, material or specs."
    )
    diff = merchant_client.get(
        reverse("console:harness-diff", args=[harness.pk]) + "?from=1&to=2"
    ).content.decode()
    assert "skill product-qa: description changed" in diff


def test_a_bad_skill_name_is_shown_at_that_field_and_nothing_is_saved(
    merchant_client: Client, harness: Any
) -> None:
    fields = set_field(load_editor(merchant_client, harness), "skills-1-name", "Promo Push!")
    response = save(merchant_client, harness, fields)
    html = response.content.decode()
    assert response.status_code == 400
    errors = field_errors(html, "skills-1-name")
    assert len(errors) == 1 and "Promo Push!" in errors[0]
    assert not field_errors(html, "skills-0-name")
    assert not field_errors(html, "skills-1-description")
    assert "Not saved" in html and 'value="Promo Push!"' in html  # the input is kept
    assert harness.versions.count() == 1


def test_errors_are_placed_on_tool_hook_and_section_fields(
    merchant_client: Client, harness: Any
) -> None:
    fields = load_editor(merchant_client, harness)
    fields = set_field(fields, "tools-0-input_schema", '{"type": "object", "properties": 5}')
    fields = set_field(fields, "hooks-1-condition", "reply + 1 > 2")
    fields = set_field(fields, "sections-0-template", "Hello {nope}")
    response = save(merchant_client, harness, fields)
    html = response.content.decode()
    assert response.status_code == 400
    assert field_errors(html, "tools-0-input_schema")
    assert field_errors(html, "hooks-1-condition")
    assert "nope" in " ".join(field_errors(html, "sections-0-template"))
    assert harness.versions.count() == 1


def test_invalid_json_schema_text_is_a_field_error_with_line_and_column(
    merchant_client: Client, harness: Any
) -> None:
    fields = set_field(
        load_editor(merchant_client, harness),
        "tools-1-input_schema",
        '{\r\n  "type": "object",,\r\n}',
    )
    html = save(merchant_client, harness, fields).content.decode()
    errors = field_errors(html, "tools-1-input_schema")
    assert errors and "line 2" in errors[0]
    assert harness.versions.count() == 1


def test_unknown_allowed_tool_after_removing_a_tool_is_shown_at_the_skill(
    merchant_client: Client, harness: Any
) -> None:
    fields = load_editor(merchant_client, harness)
    tool_index = next(
        n.split("-")[1]
        for n, v in fields
        if re.fullmatch(r"tools-\d+-name", n) and v == "check_stock"
    )
    fields.append((f"tools-{tool_index}-DELETE", "on"))
    html = save(merchant_client, harness, fields).content.decode()
    assert "check_stock" in " ".join(field_errors(html, "skills-0-allowed_tools"))
    assert harness.versions.count() == 1


def test_removing_and_adding_entries(merchant_client: Client, harness: Any) -> None:
    fields = load_editor(merchant_client, harness)
    fields.append(("skills-3-DELETE", "on"))
    # the no-JavaScript "Add hook" round trip adds a blank, error-free hook form
    added = merchant_client.post(
        reverse("console:harness-edit", args=[harness.pk]),
        as_post_data([*fields, ("add", "hooks")]),
    )
    html = added.content.decode()
    hook_count = len(harness_from_dict(harness.versions.get().content).hooks)
    assert f'data-field="hooks-{hook_count}-name"' in html
    assert 'class="field-error"' not in html
    fields = form_fields(html, "editor-form")
    fields = set_field(fields, f"hooks-{hook_count}-name", "no-phone-numbers")
    fields = set_field(fields, f"hooks-{hook_count}-condition", r"\d{3}-\d{4}")
    fields = set_field(fields, f"hooks-{hook_count}-condition_kind", "regex")
    fields = set_field(fields, f"hooks-{hook_count}-event", "pre_reply")
    fields = set_field(fields, f"hooks-{hook_count}-feedback", "Do not share phone numbers.")
    response = save(merchant_client, harness, fields)
    assert response.status_code == 302
    content = harness_from_dict(harness.versions.get(number=2).content)
    assert [s.name for s in content.skills] == ["product-qa", "promo-push", "size-advice"]
    assert content.hooks[-1].name == "no-phone-numbers"
    assert content.hooks[-1].condition_kind == "regex"


def test_a_stale_base_version_names_the_newer_version_and_keeps_the_input(
    merchant_client: Client, harness: Any, operator: Any
) -> None:
    # given the merchant opened the editor on v1 ...
    fields = load_editor(merchant_client, harness)
    fields = set_field(fields, "skills-0-description", "Use when a viewer asks: my edit.")
    # ... and meanwhile the operator saved v2
    services.harness_version_create(
        harness=harness,
        content=harness_from_dict(harness.versions.get().content),
        base_version=1,
        author=operator,
        message="operator edit",
    )
    # when
    response = save(merchant_client, harness, fields)
    # then
    html = response.content.decode()
    assert response.status_code == 409
    assert "Not saved: version 2 is newer than the version you edited" in html
    assert reverse("console:version-detail", args=[harness.pk, 2]) in html
    assert "Use when a viewer asks: my edit." in html
    assert harness.versions.count() == 2
    # and the operator may explicitly save on top of v2
    kept = form_fields(html, "editor-form")
    response = save(merchant_client, harness, [*kept, ("save_on_top_of", "2")])
    assert response.status_code == 302
    v3 = harness.versions.get(number=3)
    assert v3.parent.number == 2
    assert v3.content["skills"][0]["description"] == "Use when a viewer asks: my edit."


def test_warnings_are_yellow_notes_at_their_fields(merchant_client: Client, harness: Any) -> None:
    fields = set_field(
        load_editor(merchant_client, harness), "skills-0-description", "Answers product questions."
    )
    fields = set_field(fields, "skills-1-name", "BAD NAME")  # keep it unsaved
    html = save(merchant_client, harness, fields).content.decode()
    assert "does not say when to use the skill" in field_block(html, "skills-0-description")
    assert 'class="field-warning"' in field_block(html, "skills-0-description")


def test_editor_can_start_from_an_older_version(
    merchant_client: Client, harness: Any, operator: Any
) -> None:
    v1 = harness.versions.get()
    content = harness_from_dict(v1.content)
    services.harness_version_create(
        harness=harness,
        content=content.__class__(
            skills=content.skills[:1],
            tools=content.tools,
            prompt=content.prompt,
            hooks=content.hooks,
        ),
        base_version=1,
        author=operator,
    )
    fields = load_editor(merchant_client, harness, "?from=1")
    assert ("base_version", "2") in fields and ("source_version", "1") in fields
    assert save(merchant_client, harness, fields).status_code == 302
    assert harness.versions.get(number=3).content == v1.content


def test_yaml_mode_saves_and_reports_syntax_errors_with_lines(
    merchant_client: Client, harness: Any
) -> None:
    fields = load_editor(merchant_client, harness, "?mode=yaml")
    assert ("mode", "yaml") in fields
    yaml_text = dict(fields)["content_yaml"].replace("\r\n", "\n")
    assert yaml_text == harness_to_yaml(harness_from_dict(harness.versions.get().content))
    bad = set_field(fields, "content_yaml", "skills: [\n  - name: x\n")
    html = save(merchant_client, harness, bad).content.decode()
    assert "yaml" in html and "line" in html and "Not saved" in html
    assert harness.versions.count() == 1
    edited = set_field(
        fields, "content_yaml", yaml_text.replace("name: promo-push", "name: promo-blast")
    )
    response = save(merchant_client, harness, edited)
    assert response.status_code == 302
    names = [s["name"] for s in harness.versions.get(number=2).content["skills"]]
    assert "promo-blast" in names


def test_yaml_mode_validation_errors_name_their_path(merchant_client: Client, harness: Any) -> None:
    fields = load_editor(merchant_client, harness, "?mode=yaml")
    yaml_text = dict(fields)["content_yaml"].replace("name: promo-push", "name: Promo Push")
    html = save(merchant_client, harness, set_field(fields, "content_yaml", yaml_text))
    text = html.content.decode()
    assert "<code>skills[1].name</code>" in text
    assert harness.versions.count() == 1


def test_first_version_of_an_empty_harness(merchant_client: Client, room: Any) -> None:
    fields = load_editor(merchant_client, room.harness, "?mode=yaml")
    assert ("base_version", "") in fields
    response = save(
        merchant_client,
        room.harness,
        set_field(
            fields,
            "content_yaml",
            (
                "skills:\n- name: greet\n"
                "  description: Use when a viewer says hello.\n  body: Say hi.\n"
            ),
        ),
    )
    assert response.status_code == 302
    assert HarnessVersion.objects.get(harness=room.harness).number == 1


# ------------------------------------------------- issue 15.2: errors at the line, one pass


def test_yaml_errors_name_line_and_column_mark_the_line_and_keep_the_text(
    merchant_client: Client, harness: Any
) -> None:
    # given the raw YAML with one skill allowed an unknown tool (a rule error, found by path)
    fields = load_editor(merchant_client, harness, "?mode=yaml")
    yaml_text = dict(fields)["content_yaml"].replace("\r\n", "\n")
    typed = yaml_text.replace("      - check_stock\n", "      - check_stock\n      - no_such\n", 1)
    line = typed.split("\n").index("      - no_such") + 1
    # when it is saved
    response = save(merchant_client, harness, set_field(fields, "content_yaml", typed))
    html = response.content.decode()
    # then the error names its line and column, the gutter marks that line, the text is kept
    assert response.status_code == 400
    assert f'data-yaml-line="{line}" data-yaml-column="9">line {line}, column 9</a>' in html
    assert "<code>skills[0].allowed_tools[2]</code>" in html
    assert f'class="gutter-error" data-error-line="{line}"' in html
    assert f'class="code-line-mark" aria-hidden="true" data-error-line="{line}"' in html
    assert 'aria-invalid="true"' in html and 'aria-describedby="yaml-errors"' in html
    kept = dict(form_fields(html, "editor-form"))["content_yaml"].replace("\r\n", "\n")
    assert kept == typed
    assert harness.versions.count() == 1


def test_yaml_syntax_error_is_shown_once_at_its_line(merchant_client: Client, harness: Any) -> None:
    fields = load_editor(merchant_client, harness, "?mode=yaml")
    typed = "skills:\n  - name: a\n    name: b\n"
    html = save(merchant_client, harness, set_field(fields, "content_yaml", typed)).content.decode()
    assert 'data-yaml-line="3" data-yaml-column="5">line 3, column 5</a>: duplicate key' in html
    assert html.count("line 3, column 5") == 1
    assert 'class="gutter-error" data-error-line="3"' in html
    assert "name: b" in html


def test_the_yaml_gutter_has_one_number_per_line(merchant_client: Client, harness: Any) -> None:
    fields = load_editor(merchant_client, harness, "?mode=yaml")
    lines = dict(fields)["content_yaml"].replace("\r\n", "\n").count("\n")
    html = merchant_client.get(
        reverse("console:harness-edit", args=[harness.pk]) + "?mode=yaml"
    ).content.decode()
    gutter = html.split('class="code-gutter"')[1].split("</ol>")[0]
    assert gutter.count("<li") == lines
    assert f'rows="{max(36, lines + 2)}"' in html


def test_form_mode_reports_field_and_rule_errors_in_one_save(
    merchant_client: Client, harness: Any
) -> None:
    # given one tool schema that is not JSON and four rule errors elsewhere
    fields = load_editor(merchant_client, harness)
    fields = set_field(fields, "tools-1-input_schema", '{"type": "object",,}')
    fields = set_field(fields, "skills-1-name", "Promo Push!")
    fields = set_field(fields, "hooks-1-condition", "reply + 1 > 2")
    fields = set_field(fields, "sections-0-template", "Hello {nope}")
    fields = set_field(fields, "tools-0-executor_url", "not a url")
    fields = set_field(fields, "tools-0-executor_kind", "webhook")
    # when saved once
    response = save(merchant_client, harness, fields)
    html = response.content.decode()
    # then all five are reported together, each at its field
    assert response.status_code == 400
    assert "line 1" in field_errors(html, "tools-1-input_schema")[0]
    assert field_errors(html, "skills-1-name")
    assert field_errors(html, "hooks-1-condition")
    assert "nope" in " ".join(field_errors(html, "sections-0-template"))
    assert field_errors(html, "tools-0-executor_url")
    assert len(field_errors(html, "tools-1-input_schema")) == 1  # no stand-in rule noise
    summary = html.split('id="error-summary"')[1].split("</div>")[0]
    assert summary.count("<li>") >= 5
    assert harness.versions.count() == 1


def test_form_mode_with_only_a_field_error_still_checks_the_rules(
    merchant_client: Client, harness: Any
) -> None:
    fields = load_editor(merchant_client, harness)
    fields = set_field(fields, "hooks-0-max_retries", "many")
    fields = set_field(fields, "skills-0-name", "Bad Name")
    html = save(merchant_client, harness, fields).content.decode()
    assert field_errors(html, "hooks-0-max_retries")
    assert field_errors(html, "skills-0-name")


# ----------------------------------------------------- issue 15.2: the base after a rollback


def _roll_back_to_v1(harness: Any, operator: Any) -> None:
    v1 = harness.versions.get()
    content = harness_from_dict(v1.content)
    v2 = services.harness_version_create(
        harness=harness,
        content=content.__class__(
            skills=content.skills[:1], tools=content.tools, prompt=content.prompt
        ),
        base_version=1,
        author=operator,
    )
    services.harness_version_publish(version=v2)
    services.harness_rollback(harness=harness, to_number=1)
    harness.refresh_from_db()


def test_after_a_rollback_the_editor_starts_from_the_published_version(
    merchant_client: Client, harness: Any, operator: Any
) -> None:
    # given v2 was published and then rolled back to v1
    _roll_back_to_v1(harness, operator)
    # when the editor opens without ?from
    response = merchant_client.get(reverse("console:harness-edit", args=[harness.pk]))
    html = response.content.decode()
    fields = form_fields(html, "editor-form")
    # then it builds on top of v2 (the newest) with v1's content, and says so
    assert ("base_version", "2") in fields and ("source_version", "1") in fields
    source = html.split('id="edit-source"')[1].split("</p>")[0]
    assert "<b>v1</b></a> (the published version, live in the room)" in source
    assert "Start from the latest, v2 (archived: it was live before" in source
    assert save(merchant_client, harness, fields).status_code == 302
    assert harness.versions.get(number=3).content == harness.versions.get(number=1).content


def test_after_a_rollback_the_latest_can_still_be_chosen(
    merchant_client: Client, harness: Any, operator: Any
) -> None:
    _roll_back_to_v1(harness, operator)
    html = merchant_client.get(
        reverse("console:harness-edit", args=[harness.pk]) + "?from=2"
    ).content.decode()
    assert ("source_version", "2") in form_fields(html, "editor-form")
    assert "Editing from" in html and "<b>v2</b></a> (archived" in html


def test_harness_page_offers_the_published_version_after_a_rollback(
    merchant_client: Client, harness: Any, operator: Any
) -> None:
    _roll_back_to_v1(harness, operator)
    html = merchant_client.get(
        reverse("console:harness-detail", args=[harness.pk])
    ).content.decode()
    edit_url = reverse("console:harness-edit", args=[harness.pk])
    assert f'href="{edit_url}" title="The latest version, v2, was rolled back' in html
    assert "Edit from published (v1)</a>" in html
    assert f'href="{edit_url}?from=2">Edit from latest (v2, rolled back)</a>' in html


def test_a_newer_draft_stays_the_default_start(
    merchant_client: Client, harness: Any, operator: Any
) -> None:
    content = harness_from_dict(harness.versions.get().content)
    services.harness_version_create(
        harness=harness,
        content=content.__class__(skills=content.skills[:2], tools=content.tools),
        base_version=1,
        author=operator,
    )
    html = merchant_client.get(reverse("console:harness-edit", args=[harness.pk])).content.decode()
    assert ("source_version", "2") in form_fields(html, "editor-form")
    assert "<b>v2</b></a> (a draft, not live)" in html
    detail = merchant_client.get(reverse("console:harness-detail", args=[harness.pk]))
    assert "Edit from latest (v2)</a>" in detail.content.decode()


def test_the_yaml_gutter_is_capped_for_huge_pastes() -> None:
    from console.forms.harness_editor import YamlEditForm
    from console.views.editor import MAX_GUTTER_LINES, _yaml_marks
    from harness_app.harness.errors import FieldError

    text = "\n" * (MAX_GUTTER_LINES + 500) + "x: *a\n"
    marks = _yaml_marks(YamlEditForm(), text, [FieldError("yaml", "line 20501, column 4: bad")])
    assert len(marks["yaml_gutter"]) == MAX_GUTTER_LINES
    assert marks["yaml_error_lines"] == [MAX_GUTTER_LINES + 501]
    assert marks["yaml_located"][0].line == MAX_GUTTER_LINES + 501
