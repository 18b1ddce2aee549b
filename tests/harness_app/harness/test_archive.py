from __future__ import annotations

import dataclasses
import io
import json
import stat
import zipfile

import pytest
from hypothesis import given, settings

from harness_app.harness.archive import MAX_MEMBERS, export_harness_zip, import_harness_zip
from harness_app.harness.errors import ArchiveError, FieldError, HarnessValidationError
from harness_app.harness.model import Harness, Skill
from tests.harness_app.harness.strategies import harnesses


def members(data: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info).decode("utf-8") for info in archive.infolist()}


def build_zip(files: dict[str, bytes | str], *, symlinks: tuple[str, ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            info = zipfile.ZipInfo(name)
            mode = stat.S_IFLNK | 0o777 if name in symlinks else stat.S_IFREG | 0o644
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, content)
    return buffer.getvalue()


def archive_errors(data: bytes, **kwargs: int) -> list[FieldError]:
    with pytest.raises(ArchiveError) as caught:
        import_harness_zip(data, **kwargs)
    return caught.value.errors


@pytest.fixture(scope="module")
def demo_files(live_harness: Harness) -> dict[str, bytes | str]:
    return dict(members(export_harness_zip(live_harness)))


@settings(max_examples=50, deadline=None)
@given(harnesses())
def test_export_import_is_lossless_and_byte_deterministic(harness: Harness) -> None:
    data = export_harness_zip(harness)

    assert import_harness_zip(data) == harness
    assert export_harness_zip(harness) == data
    assert export_harness_zip(import_harness_zip(data)) == data


def test_layout(live_harness: Harness) -> None:
    files = members(export_harness_zip(live_harness))

    assert list(files) == [
        "manifest.json",
        "tools.json",
        "prompt.yaml",
        "hooks.yaml",
        "skills/product-qa/SKILL.md",
        "skills/promo-push/SKILL.md",
        "skills/size-advice/SKILL.md",
        "skills/after-sales/SKILL.md",
    ]
    assert json.loads(files["manifest.json"]) == {
        "format": "hat-harness",
        "version": 1,
        "skills": ["product-qa", "promo-push", "size-advice", "after-sales"],
    }
    tools = json.loads(files["tools.json"])
    assert tools[0]["type"] == "function"
    assert tools[0]["x-hat"]["executor"]["operation"] == "get_product"
    assert files["prompt.yaml"].startswith("sections:\n  - id: persona\n")
    assert files["hooks.yaml"].startswith("hooks:\n  - name: no-absolute-claims\n")
    assert files["skills/product-qa/SKILL.md"].startswith("---\nname: product-qa\n")


def test_export_uses_fixed_timestamps_and_permissions(live_harness: Harness) -> None:
    with zipfile.ZipFile(io.BytesIO(export_harness_zip(live_harness))) as archive:
        infos = archive.infolist()

    assert {info.date_time for info in infos} == {(1980, 1, 1, 0, 0, 0)}
    assert {info.external_attr >> 16 for info in infos} == {0o100644}


def test_import_without_manifest_keeps_member_order(demo_files: dict[str, bytes | str]) -> None:
    files = {name: content for name, content in demo_files.items() if name != "manifest.json"}

    harness = import_harness_zip(build_zip(files))

    assert [s.name for s in harness.skills] == [
        "product-qa",
        "promo-push",
        "size-advice",
        "after-sales",
    ]


def test_folder_entries_are_allowed(
    demo_files: dict[str, bytes | str], live_harness: Harness
) -> None:
    files = {"skills/": b"", "skills/product-qa/": b"", **demo_files}

    assert import_harness_zip(build_zip(files)) == live_harness


def test_archive_over_the_size_limit() -> None:
    assert archive_errors(b"x" * 101, max_bytes=100) == [
        FieldError("", "archive is 101 bytes; the limit is 100 bytes")
    ]


def test_zip_bomb_is_rejected(demo_files: dict[str, bytes | str]) -> None:
    bomb = build_zip({**demo_files, "skills/product-qa/SKILL.md": "x" * 2_000_000})

    assert len(bomb) < 1_048_576
    (error,) = archive_errors(bomb)
    assert error.path == ""
    assert error.message.startswith("archive expands to ")
    assert error.message.endswith("bytes; the limit is 1048576 bytes")


def test_zip_bomb_with_lying_sizes_is_rejected(demo_files: dict[str, bytes | str]) -> None:
    data = bytearray(build_zip({**demo_files, "skills/product-qa/SKILL.md": "x" * 500_000}))
    # Rewrite the declared uncompressed size (local header and central directory) to 10 bytes.
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        info = archive.getinfo("skills/product-qa/SKILL.md")
    size = info.file_size.to_bytes(4, "little")
    data = bytearray(bytes(data).replace(size, (10).to_bytes(4, "little")))

    errors = archive_errors(bytes(data), max_bytes=200_000)

    assert errors[0].path == "skills/product-qa/SKILL.md"


def test_not_a_zip() -> None:
    (error,) = archive_errors(b"PK\x03\x04 definitely not a zip")

    assert error.path == ""
    assert error.message.startswith("not a zip archive")


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("../evil.txt", "path traversal"),
        ("skills/../../etc/passwd", "path traversal"),
        ("/etc/passwd", "absolute paths are not allowed"),
        ("C:/windows/system.ini", "absolute paths are not allowed"),
        ("skills\\qa\\SKILL.md", "backslashes are not allowed"),
    ],
)
def test_unsafe_member_names(demo_files: dict[str, bytes | str], name: str, fragment: str) -> None:
    errors = archive_errors(build_zip({**demo_files, name: "x"}))

    assert errors[0].path == name
    assert fragment in errors[0].message


def test_symlink_members_are_rejected(demo_files: dict[str, bytes | str]) -> None:
    data = build_zip(
        {**demo_files, "skills/qa/SKILL.md": "/etc/passwd"}, symlinks=("skills/qa/SKILL.md",)
    )

    assert archive_errors(data) == [
        FieldError("skills/qa/SKILL.md", "symbolic links are not allowed")
    ]


def test_unexpected_files_are_rejected(demo_files: dict[str, bytes | str]) -> None:
    errors = archive_errors(
        build_zip({**demo_files, "notes.txt": "hi", "__MACOSX/": b"", "skills/qa/run.py": "x"})
    )

    assert [e.path for e in errors] == ["notes.txt", "__MACOSX/", "skills/qa/run.py"]
    assert errors[0].message.startswith("unexpected file; an archive holds only manifest.json")
    assert errors[1].message == "unexpected folder; only skills/<name>/ folders are allowed"


def test_too_many_members(demo_files: dict[str, bytes | str]) -> None:
    files = dict(demo_files)
    files.update({f"skills/s{i}/": b"" for i in range(MAX_MEMBERS)})

    assert archive_errors(build_zip(files)) == [
        FieldError("", f"archive has {len(files)} members; the limit is 500")
    ]


def test_duplicate_member_names(demo_files: dict[str, bytes | str]) -> None:
    buffer = io.BytesIO(build_zip(demo_files))
    with zipfile.ZipFile(buffer, "a") as archive, pytest.warns(UserWarning):
        archive.writestr("tools.json", "[]")

    errors = archive_errors(buffer.getvalue())

    assert errors == [FieldError("tools.json", "appears more than once in the archive")]


def test_missing_required_files(demo_files: dict[str, bytes | str]) -> None:
    files = {k: v for k, v in demo_files.items() if k not in ("hooks.yaml", "tools.json")}

    assert [e.path for e in archive_errors(build_zip(files))] == ["tools.json", "hooks.yaml"]


def test_non_utf8_text(demo_files: dict[str, bytes | str]) -> None:
    errors = archive_errors(build_zip({**demo_files, "prompt.yaml": b"sections: []\n\xff\xfe"}))

    assert errors == [FieldError("prompt.yaml", "is not UTF-8 text (byte 0xff at offset 13)")]


def test_bad_json_and_yaml(demo_files: dict[str, bytes | str]) -> None:
    errors = archive_errors(
        build_zip({**demo_files, "tools.json": "[{,]", "hooks.yaml": "hooks: [\n"})
    )

    assert errors[0] == FieldError(
        "tools.json",
        "invalid JSON at line 1, column 3: Expecting property name enclosed in double quotes",
    )
    assert errors[1].path == "hooks.yaml"
    assert errors[1].message.startswith("line 2, column 1:")


def test_shape_errors_inside_members_keep_the_inner_path(
    demo_files: dict[str, bytes | str],
) -> None:
    hooks = (
        "hooks:\n  - name: x\n    event: pre_reply\n    condition: 'true'\n    max_retries: lots\n"
    )

    errors = archive_errors(build_zip({**demo_files, "hooks.yaml": hooks}))

    assert errors == [
        FieldError("hooks.yaml", "hooks[0].max_retries: must be an integer, got string")
    ]


def test_skill_folder_must_match_frontmatter_name(demo_files: dict[str, bytes | str]) -> None:
    files = dict(demo_files)
    files["skills/promo/SKILL.md"] = files.pop("skills/promo-push/SKILL.md")
    files.pop("manifest.json")

    assert archive_errors(build_zip(files)) == [
        FieldError(
            "skills/promo/SKILL.md",
            "frontmatter name 'promo-push' does not match the folder name 'promo'; "
            "they must be the same",
        )
    ]


def test_bad_skill_frontmatter_is_reported_at_the_member(
    demo_files: dict[str, bytes | str],
) -> None:
    errors = archive_errors(build_zip({**demo_files, "skills/product-qa/SKILL.md": "no front"}))

    assert errors[0].path == "skills/product-qa/SKILL.md"
    assert errors[0].message.startswith("frontmatter: SKILL.md must start with a '---' line")


def test_manifest_must_list_the_skill_folders(demo_files: dict[str, bytes | str]) -> None:
    manifest = {"format": "hat-harness", "version": 1, "skills": ["product-qa"]}

    (error,) = archive_errors(build_zip({**demo_files, "manifest.json": json.dumps(manifest)}))

    assert error.path == "manifest.json"
    assert error.message.startswith("skills: must list each skill folder exactly once")


def test_valid_archive_with_invalid_content_raises_validation_errors(
    live_harness: Harness,
) -> None:
    skill = dataclasses.replace(live_harness.skills[0], allowed_tools=("teleport",))
    data = export_harness_zip(
        dataclasses.replace(live_harness, skills=(skill, *live_harness.skills[1:]))
    )

    with pytest.raises(HarnessValidationError) as caught:
        import_harness_zip(data)

    assert not isinstance(caught.value, ArchiveError)
    assert [e.path for e in caught.value.errors] == ["skills[0].allowed_tools[0]"]


def test_empty_harness_round_trips() -> None:
    assert import_harness_zip(export_harness_zip(Harness())) == Harness()


def test_skill_order_survives_a_manifest(live_harness: Harness) -> None:
    reordered = dataclasses.replace(live_harness, skills=tuple(reversed(live_harness.skills)))

    assert [s.name for s in import_harness_zip(export_harness_zip(reordered)).skills] == [
        "after-sales",
        "size-advice",
        "promo-push",
        "product-qa",
    ]


def test_archive_error_is_a_validation_error() -> None:
    assert issubclass(ArchiveError, HarnessValidationError)
    assert isinstance(ArchiveError([FieldError("a", "b")]), HarnessValidationError)


def test_skill_md_name_with_unicode_body(live_harness: Harness) -> None:
    skill = Skill("qa", "Use when asked.", body="直播间 ✨\n")

    assert import_harness_zip(export_harness_zip(Harness(skills=(skill,)))).skills == (skill,)
