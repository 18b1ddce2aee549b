"""Harness <-> zip archive, in files people already know how to edit.

Layout (deterministic: fixed member order, timestamps and permissions, so the same harness
always gives the same bytes and archives can be hashed and diffed)::

    manifest.json            format/version and the skill order (folders have no order)
    tools.json               OpenAI ``tools`` with ``x-hat`` extensions (lossless)
    prompt.yaml              {"sections": [{id, title, template}, ...]}
    hooks.yaml               {"hooks": [{name, event, condition, ...}, ...]}
    skills/<name>/SKILL.md   one per skill

Archives are uploaded by users, so import treats them as hostile: size limits on the archive
and on the total *actual* uncompressed size (zip bombs lie about sizes), a member count
limit, no path traversal, absolute paths, backslashes, symlinks, encryption or duplicate
names, no unexpected files, strict UTF-8. Those are ``ArchiveError``s naming the member;
content that parses but breaks the rules raises ``HarnessValidationError`` from validation.
"""

from __future__ import annotations

import io
import json
import re
import stat
import zipfile
from collections.abc import Callable
from typing import Any, TypeVar

from harness_app.harness.errors import ArchiveError, FieldError, HarnessValidationError
from harness_app.harness.json_limits import JsonLimitError, json_loads_bounded
from harness_app.harness.model import Harness, Hook, Prompt, Skill
from harness_app.harness.openai_tools import from_openai_tools, to_openai_tools
from harness_app.harness.serialization import (
    hook_to_dict,
    prompt_to_dict,
    read_hook,
    read_prompt,
)
from harness_app.harness.skill_md import parse_skill_md, render_skill_md
from harness_app.harness.typed_reader import TypedReader
from harness_app.harness.validation import validate_harness
from harness_app.harness.yaml_codec import dump_yaml, load_yaml

ARCHIVE_FORMAT = "hat-harness"
ARCHIVE_VERSION = 1
MAX_ARCHIVE_BYTES = 1_048_576
MAX_MEMBERS = 500
MANIFEST = "manifest.json"
TOOLS = "tools.json"
PROMPT = "prompt.yaml"
HOOKS = "hooks.yaml"
REQUIRED_MEMBERS = (TOOLS, PROMPT, HOOKS)
_SKILL_MEMBER = re.compile(r"skills/([^/]+)/SKILL\.md")
_ALLOWED_DIRECTORY = re.compile(r"skills/(?:[^/]+/)?")
_FIXED_TIMESTAMP = (1980, 1, 1, 0, 0, 0)  # the earliest a zip can store
_FILE_MODE = 0o100644

T = TypeVar("T")


# ---------------------------------------------------------------------------------- export


def export_harness_zip(harness: Harness) -> bytes:
    """The archive bytes for a harness (same harness, same bytes)."""
    members: list[tuple[str, str]] = [
        (
            MANIFEST,
            _json_text(
                {
                    "format": ARCHIVE_FORMAT,
                    "version": ARCHIVE_VERSION,
                    "skills": [skill.name for skill in harness.skills],
                }
            ),
        ),
        (TOOLS, _json_text(to_openai_tools(harness.tools, include_extensions=True))),
        (PROMPT, dump_yaml(prompt_to_dict(harness.prompt))),
        (HOOKS, dump_yaml({"hooks": [hook_to_dict(hook) for hook in harness.hooks]})),
    ]
    members += [
        (f"skills/{skill.name}/SKILL.md", render_skill_md(skill)) for skill in harness.skills
    ]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in members:
            info = zipfile.ZipInfo(name, date_time=_FIXED_TIMESTAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, whatever machine exports
            info.external_attr = _FILE_MODE << 16
            archive.writestr(info, text.encode("utf-8"), compresslevel=9)
    return buffer.getvalue()


def _json_text(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


# ---------------------------------------------------------------------------------- import


def import_harness_zip(data: bytes, max_bytes: int = MAX_ARCHIVE_BYTES) -> Harness:
    """Read and validate an archive. Raises ``ArchiveError`` (unsafe or malformed archive,
    paths are member names) or ``HarnessValidationError`` (content breaks the rules)."""
    texts = _read_members(data, max_bytes)
    errors: list[FieldError] = []
    tools = _parse_member(TOOLS, texts[TOOLS], errors, _parse_tools)
    prompt = _parse_member(PROMPT, texts[PROMPT], errors, _parse_prompt)
    hooks = _parse_member(HOOKS, texts[HOOKS], errors, _parse_hooks)
    skills_by_folder: dict[str, Skill] = {}
    for name, text in texts.items():
        match = _SKILL_MEMBER.fullmatch(name)
        if match is None:
            continue
        skill = _parse_member(name, text, errors, parse_skill_md)
        if skill is not None and skill.name != match[1]:
            errors.append(
                FieldError(
                    name,
                    f"frontmatter name '{skill.name}' does not match the folder name "
                    f"'{match[1]}'; they must be the same",
                )
            )
        elif skill is not None:
            skills_by_folder[match[1]] = skill
    order = _skill_order(texts.get(MANIFEST), list(skills_by_folder), errors)
    if errors:
        raise ArchiveError(errors)
    harness = Harness(
        skills=tuple(skills_by_folder[name] for name in order),
        tools=tools or (),
        prompt=prompt or Prompt(),
        hooks=hooks or (),
    )
    problems = validate_harness(harness)
    if problems:
        raise HarnessValidationError(problems)
    return harness


def _read_members(data: bytes, max_bytes: int) -> dict[str, str]:
    """Safety checks and decoding; returns member name -> text for files (not folders)."""
    if len(data) > max_bytes:
        raise ArchiveError(
            [FieldError("", f"archive is {len(data)} bytes; the limit is {max_bytes} bytes")]
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise ArchiveError([FieldError("", f"not a zip archive ({exc})")]) from exc
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_MEMBERS:
            raise ArchiveError(
                [FieldError("", f"archive has {len(infos)} members; the limit is {MAX_MEMBERS}")]
            )
        errors: list[FieldError] = []
        seen: set[str] = set()
        files: list[zipfile.ZipInfo] = []
        for info in infos:
            problem = _member_problem(info, seen)
            seen.add(info.filename)
            if problem:
                errors.append(FieldError(info.filename, problem))
            elif not info.is_dir():
                files.append(info)
        if errors:
            raise ArchiveError(errors)
        declared = sum(info.file_size for info in files)
        if declared > max_bytes:
            raise ArchiveError(
                [
                    FieldError(
                        "", f"archive expands to {declared} bytes; the limit is {max_bytes} bytes"
                    )
                ]
            )
        texts: dict[str, str] = {}
        budget = max_bytes
        for info in files:
            raw = _read_capped(archive, info, budget)
            budget -= len(raw)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                errors.append(
                    FieldError(
                        info.filename,
                        f"is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
                    )
                )
                continue
            texts[info.filename] = text.removeprefix("\ufeff")
    missing = [name for name in REQUIRED_MEMBERS if name not in seen]
    errors += [
        FieldError(name, f"is missing; every harness archive has {', '.join(REQUIRED_MEMBERS)}")
        for name in missing
    ]
    if errors:
        raise ArchiveError(errors)
    return texts


def _member_problem(info: zipfile.ZipInfo, seen: set[str]) -> str | None:
    name = info.filename
    if "\\" in name:
        return "backslashes are not allowed in member names; use '/'"
    if name.startswith("/") or re.match(r"[A-Za-z]:", name):
        return "absolute paths are not allowed"
    parts = name.rstrip("/").split("/")
    if any(part in ("..", ".", "") for part in parts):
        return "'..', '.' and empty path segments are not allowed (path traversal)"
    if stat.S_ISLNK(info.external_attr >> 16):
        return "symbolic links are not allowed"
    if info.flag_bits & 0x1:
        return "encrypted members are not allowed"
    if name in seen:
        return "appears more than once in the archive"
    if info.is_dir():
        if name in ("skills/",) or _ALLOWED_DIRECTORY.fullmatch(name):
            return None
        return "unexpected folder; only skills/<name>/ folders are allowed"
    if name in (MANIFEST, *REQUIRED_MEMBERS) or _SKILL_MEMBER.fullmatch(name):
        return None
    return (
        f"unexpected file; an archive holds only {MANIFEST}, {TOOLS}, {PROMPT}, {HOOKS} "
        "and skills/<name>/SKILL.md"
    )


def _read_capped(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int) -> bytes:
    """Read at most ``budget`` bytes: declared sizes in a zip can lie, actual ones cannot."""
    try:
        with archive.open(info) as member:
            raw = member.read(budget + 1)
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        OSError,
        EOFError,
        ValueError,
        NotImplementedError,
        RuntimeError,
    ) as exc:
        raise ArchiveError([FieldError(info.filename, f"cannot be read ({exc})")]) from exc
    if len(raw) > budget:
        raise ArchiveError(
            [FieldError(info.filename, "archive expands beyond the size limit (possible zip bomb)")]
        )
    return raw


def _parse_member(
    name: str, text: str, errors: list[FieldError], parse: Callable[[str], T]
) -> T | None:
    """Run a parser on one member, re-rooting its errors at the member name."""
    try:
        return parse(text)
    except HarnessValidationError as exc:
        errors.extend(
            FieldError(name, f"{error.path}: {error.message}" if error.path else error.message)
            for error in exc.errors
        )
        return None


def _parse_tools(text: str) -> tuple[Any, ...]:
    try:
        data = json_loads_bounded(text, refuse_nul=False)  # NUL: refused at save, not here
    except JsonLimitError as exc:
        raise HarnessValidationError([FieldError(exc.path, exc.message)]) from None
    except json.JSONDecodeError as exc:
        raise HarnessValidationError(
            [FieldError("", f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}")]
        ) from exc
    return from_openai_tools(data)


def _parse_yaml_list(text: str, key: str) -> tuple[TypedReader, list[Any]]:
    data = load_yaml(text, path="")
    reader = TypedReader()
    document = reader.mapping({} if data is None else data, "", optional=(key,))
    items = reader.array(document, key, "") if document is not None else []
    return reader, items


def _parse_prompt(text: str) -> Prompt:
    data = load_yaml(text, path="")
    reader = TypedReader()
    prompt = read_prompt(reader, {} if data is None else data, "")
    if reader.errors:
        raise HarnessValidationError(reader.errors)
    return prompt


def _parse_hooks(text: str) -> tuple[Hook, ...]:
    reader, items = _parse_yaml_list(text, "hooks")
    hooks = [read_hook(reader, item, f"hooks[{index}]") for index, item in enumerate(items)]
    if reader.errors:
        raise HarnessValidationError(reader.errors)
    return tuple(hook for hook in hooks if hook is not None)


def _skill_order(
    manifest_text: str | None, folders: list[str], errors: list[FieldError]
) -> list[str]:
    """Skill order from the manifest (if any) — it must list exactly the skill folders."""
    if manifest_text is None:
        return folders
    try:
        manifest = json_loads_bounded(manifest_text, refuse_nul=False)
    except JsonLimitError as exc:
        errors.append(FieldError(MANIFEST, str(exc)))
        return folders
    except json.JSONDecodeError as exc:
        errors.append(
            FieldError(
                MANIFEST, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
            )
        )
        return folders
    reader = TypedReader()
    document = reader.mapping(manifest, "", required=("format", "version"), optional=("skills",))
    if document is None:
        errors.extend(FieldError(MANIFEST, e.message) for e in reader.errors)
        return folders
    if document.get("format") != ARCHIVE_FORMAT or document.get("version") != ARCHIVE_VERSION:
        reader.error(
            "",
            f"format must be {ARCHIVE_FORMAT!r} version {ARCHIVE_VERSION}, got "
            f"{document.get('format')!r} version {document.get('version')!r}",
        )
    order = list(reader.strings(document, "skills", ""))
    if sorted(order) != sorted(folders) or len(set(order)) != len(order):
        reader.error(
            "skills",
            f"must list each skill folder exactly once; folders: "
            f"{', '.join(sorted(folders)) or 'none'}; listed: "
            f"{', '.join(order) or 'none'}",
        )
    errors.extend(
        FieldError(MANIFEST, f"{e.path}: {e.message}" if e.path else e.message)
        for e in reader.errors
    )
    return order if not reader.errors else folders
