"""The QA eval-set document: JSON Lines, written, read back and validated (uploads go
through ``loads_qa_set``).

Line 1 is the header; every later line is one record (blank lines are ignored)::

    {"record": "header", "format": "hat-qa-set", "format_version": 1,
     "kind": "live_stream_qa" | "harness_variant_qa", "name": "...",
     "variant_set": null | "t1" | "t2", "policy": null | "harness-variant-t1" | ...,
     "seed": 0, "source": {...}, "skipped": [{"id", "variant", "reason"}],
     "counts": {"items": N, "harnesses": M},          # optional; checked when present
     "content_hash": "sha256:..."}                     # optional; checked when present
    {"record": "catalog", "catalog": {...}}            # at most one (catalog_snapshot format)
    {"record": "harness", "ref": "h-...", "harness": {...}}          # harness_to_dict
    {"record": "item", "id", "base_id", "comment", "context", "question_type", "gold",
     "facts", "harness_ref", "prompt_layout", "variant"}

Item fields: ``id`` (unique), ``comment`` and ``gold`` (``trajectory_to_dict``) are
required; ``base_id`` defaults to ``id``, ``question_type`` to ``"gold"``, ``facts`` to the
facts derived from the gold (``qa_scoring.gold_facts``), ``prompt_layout`` to
``"markdown"``, ``variant`` to null; ``harness_ref`` may be left out when the set holds
exactly one harness. ``context`` holds ``LiveContext`` fields (strings; ``recent_comments``
a list of strings). In a ``harness_variant_qa`` set every item has a ``variant``:
``{"policy", "seed", "transforms", "no_effect", "mapping", "base_harness_ref"}``; its
transforms must be held-out transforms, of the set's policy when that is a known one.

The content hash is computed over the records as read, with defaults filled in (one
canonical JSON line each), so a document the project wrote and read back keeps its hash.

Every problem is reported with its line and field (``line 7, item.gold.tool_calls[0]:
tool 'get_prodct' is not a tool of the harness``); up to ``max_problems`` are collected
before ``QASetFormatError`` is raised, so an upload can be fixed in one pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final, cast

from harness_app.harness.errors import HarnessValidationError
from harness_app.harness.model import Harness
from harness_app.harness.prompt import PROMPT_LAYOUTS, PromptLayout
from harness_app.harness.serialization import canonical_json, harness_from_dict
from harness_app.hsa.harness_check import harness_problems
from harness_app.hsa.mapping import RenameMapping
from harness_app.hsa.policy import POLICIES
from harness_app.hsa.trajectory import (
    TrajectoryFormatError,
    trajectory_from_dict,
    trajectory_to_dict,
)
from harness_app.hsa.transforms import transform_named
from harness_app.hsa.verify import trajectory_problems
from training_app.evals.qa_scoring import gold_facts
from training_app.evals.qa_sets import (
    QA_SET_KINDS,
    VARIANT_POLICIES,
    VARIANT_SETS,
    ItemVariant,
    QAItem,
    QASet,
    QASetKind,
)
from training_app.pipeline.catalog_snapshot import CatalogSnapshot, CatalogSnapshotError

FORMAT: Final = "hat-qa-set"
FORMAT_VERSION: Final = 1
HEADER_KEYS: Final = frozenset(
    {
        "record",
        "format",
        "format_version",
        "kind",
        "name",
        "variant_set",
        "policy",
        "seed",
        "source",
        "skipped",
        "counts",
        "content_hash",
    }
)
ITEM_KEYS: Final = frozenset(
    {
        "record",
        "id",
        "base_id",
        "comment",
        "context",
        "question_type",
        "gold",
        "facts",
        "harness_ref",
        "prompt_layout",
        "variant",
    }
)
VARIANT_KEYS: Final = frozenset(
    {"policy", "seed", "transforms", "no_effect", "mapping", "base_harness_ref"}
)
CONTEXT_KEYS: Final = frozenset(
    {
        "room_name",
        "room_locale",
        "currency",
        "product_sku",
        "product_title",
        "product_price",
        "uv_id",
        "recent_comments",
        "today",
    }
)
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_MAX_ID = 200


@dataclass(frozen=True)
class DocumentProblem:
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}" + (f", {self.field}" if self.field else "")
        return f"{where}: {self.message}"


class QASetFormatError(ValueError):
    """A QA set document was rejected; ``problems`` lists each with its line and field."""

    def __init__(self, problems: list[DocumentProblem], truncated: bool = False) -> None:
        self.problems = problems
        self.truncated = truncated
        lines = [str(p) for p in problems]
        if truncated:
            lines.append(f"(stopped after {len(problems)} problems)")
        super().__init__(
            lines[0] if len(lines) == 1 else f"{len(problems)} problems:\n- " + "\n- ".join(lines)
        )


class _TooMany(Exception):
    pass


class _Problems:
    def __init__(self, limit: int) -> None:
        self.items: list[DocumentProblem] = []
        self.limit = limit

    def add(self, line: int, field: str, message: str) -> None:
        self.items.append(DocumentProblem(line, field, message))
        if len(self.items) >= self.limit:
            raise _TooMany


# --- writing ---------------------------------------------------------------------------------


def dumps_qa_set(qa_set: QASet) -> str:
    """The document text: the header, then every record, one canonical JSON line each."""
    lines = [canonical_json(qa_set.header())]
    lines.extend(canonical_json(record) for record in qa_set.records())
    return "\n".join(lines) + "\n"


def write_qa_set(qa_set: QASet, target: Path | str | IO[str]) -> None:
    text = dumps_qa_set(qa_set)
    if isinstance(target, Path | str):
        Path(target).write_text(text, encoding="utf-8")
    else:
        target.write(text)


# --- reading ---------------------------------------------------------------------------------


def read_qa_set(path: Path | str, *, max_problems: int = 20) -> QASet:
    return loads_qa_set(Path(path).read_bytes(), max_problems=max_problems)


def loads_qa_set(text: str | bytes, *, max_problems: int = 20) -> QASet:
    """Parse and validate a document; raises ``QASetFormatError`` listing what is wrong."""
    problems = _Problems(max(1, max_problems))
    try:
        result = _Reader(problems).read(text)
    except _TooMany:
        raise QASetFormatError(problems.items, truncated=True) from None
    if problems.items or result is None:
        raise QASetFormatError(problems.items or [DocumentProblem(1, "", "empty document")])
    return result


@dataclass
class _Line:
    number: int
    record: dict[str, Any]


class _Reader:
    def __init__(self, problems: _Problems) -> None:
        self.p = problems

    def read(self, text: str | bytes) -> QASet | None:
        if isinstance(text, bytes):
            try:
                text = text.decode("utf-8")
            except UnicodeDecodeError as exc:
                self.p.add(1, "", f"the document is not UTF-8 text ({exc.reason})")
                return None
        lines = self._json_lines(text)
        if not lines:
            self.p.add(1, "", "empty document: the first line must be the header record")
            return None
        header = self._header(lines[0])
        catalog: dict[str, Any] | None = None
        harness_lines: dict[str, tuple[int, dict[str, Any]]] = {}
        item_lines: list[_Line] = []
        for line in lines[1:]:
            kind = line.record.get("record")
            if kind == "catalog":
                if catalog is not None:
                    self.p.add(line.number, "record", "a second catalog record (at most one)")
                    continue
                catalog = self._catalog(line)
            elif kind == "harness":
                self._harness(line, harness_lines)
            elif kind == "item":
                item_lines.append(line)
            else:
                self.p.add(
                    line.number,
                    "record",
                    f"must be 'catalog', 'harness' or 'item' (got {kind!r}); "
                    "only line 1 is the header",
                )
        harnesses = self._parsed_harnesses(harness_lines)
        if header is None:
            return None
        items = self._items(item_lines, header, harness_lines, harnesses)
        qa_set = QASet(
            kind=cast(QASetKind, header["kind"]),
            name=header["name"],
            items=tuple(items),
            harnesses={ref: data for ref, (_n, data) in harness_lines.items()},
            catalog=catalog,
            variant_set=header["variant_set"],
            policy=header["policy"],
            seed=header["seed"],
            source=header["source"],
            skipped=tuple(header["skipped"]),
        )
        counts = header.get("counts")
        # Counts and hash are checked only on otherwise valid records: a rejected line would
        # make them disagree for no reason of their own.
        if counts is not None and not self.p.items:
            actual = {"items": len(qa_set.items), "harnesses": len(qa_set.harnesses)}
            for key, value in actual.items():
                if counts.get(key) != value:
                    self.p.add(
                        1,
                        f"counts.{key}",
                        f"says {counts.get(key)!r} but the document has {value}",
                    )
        expected = header.get("content_hash")
        if expected is not None and not self.p.items and expected != qa_set.content_hash:
            self.p.add(
                1,
                "content_hash",
                f"does not match the records (they hash to {qa_set.content_hash}); "
                "the document was changed after it was written, or leave content_hash out",
            )
        return qa_set

    # --- lines ---------------------------------------------------------------------------

    def _json_lines(self, text: str) -> list[_Line]:
        out: list[_Line] = []
        for number, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                value = json.loads(raw)
            except json.JSONDecodeError as exc:
                self.p.add(number, "", f"not valid JSON ({exc.msg} at column {exc.colno})")
                continue
            if not isinstance(value, dict):
                self.p.add(number, "", f"must be a JSON object, got {type(value).__name__}")
                continue
            out.append(_Line(number, value))
        return out

    def _header(self, line: _Line) -> dict[str, Any] | None:
        record, n = line.record, line.number
        if record.get("record") != "header":
            self.p.add(n, "record", 'the first line must be the header ({"record": "header", ...})')
            return None
        ok = True
        for key in sorted(set(record) - HEADER_KEYS):
            self.p.add(n, key, f"unknown header key; allowed: {', '.join(sorted(HEADER_KEYS))}")
            ok = False
        if record.get("format") != FORMAT:
            self.p.add(n, "format", f"must be {FORMAT!r}, got {record.get('format')!r}")
            ok = False
        if record.get("format_version") != FORMAT_VERSION:
            self.p.add(
                n,
                "format_version",
                f"must be {FORMAT_VERSION} (the only version), "
                f"got {record.get('format_version')!r}",
            )
            ok = False
        kind = record.get("kind")
        if kind not in QA_SET_KINDS:
            self.p.add(n, "kind", f"must be one of {', '.join(QA_SET_KINDS)}, got {kind!r}")
            ok = False
        name = record.get("name")
        if not isinstance(name, str) or not name.strip():
            self.p.add(n, "name", "must be a non-empty string")
            ok = False
        variant_set = record.get("variant_set")
        if kind == "harness_variant_qa" and variant_set not in VARIANT_SETS:
            self.p.add(
                n,
                "variant_set",
                f"a harness_variant_qa set must say which: {', '.join(VARIANT_SETS)} "
                f"(got {variant_set!r})",
            )
            ok = False
        if kind == "live_stream_qa" and variant_set is not None:
            self.p.add(n, "variant_set", "must be null for a live_stream_qa set")
            ok = False
        policy = record.get("policy")
        if policy is not None and (
            not isinstance(policy, str)
            or (
                isinstance(variant_set, str)
                and variant_set in VARIANT_POLICIES
                and policy != VARIANT_POLICIES[variant_set]
            )
        ):
            wanted = VARIANT_POLICIES.get(str(variant_set), "null")
            self.p.add(n, "policy", f"must be null or {wanted!r} for this set, got {policy!r}")
            ok = False
        seed = record.get("seed", 0)
        if not isinstance(seed, int) or isinstance(seed, bool):
            self.p.add(n, "seed", f"must be an integer, got {seed!r}")
            ok = False
        source = record.get("source", {})
        if not isinstance(source, dict):
            self.p.add(n, "source", "must be an object")
            ok = False
        skipped = record.get("skipped", [])
        if not isinstance(skipped, list) or not all(
            isinstance(s, dict) and all(isinstance(v, str) for v in s.values()) for s in skipped
        ):
            self.p.add(n, "skipped", "must be a list of objects with string values")
            ok = False
        counts = record.get("counts")
        if counts is not None and not isinstance(counts, dict):
            self.p.add(n, "counts", 'must be an object {"items": N, "harnesses": M}')
            ok = False
        content_hash = record.get("content_hash")
        if content_hash is not None and not (
            isinstance(content_hash, str) and content_hash.startswith("sha256:")
        ):
            self.p.add(n, "content_hash", "must be 'sha256:' followed by 64 hex digits")
            ok = False
        if not ok:
            return None
        return {
            "kind": kind,
            "name": name,
            "variant_set": variant_set,
            "policy": policy,
            "seed": seed,
            "source": source,
            "skipped": skipped,
            "counts": counts,
            "content_hash": content_hash,
        }

    def _catalog(self, line: _Line) -> dict[str, Any] | None:
        extra = sorted(set(line.record) - {"record", "catalog"})
        if extra:
            self.p.add(line.number, extra[0], "unknown key of a catalog record")
        catalog = line.record.get("catalog")
        if not isinstance(catalog, dict):
            self.p.add(line.number, "catalog", "must be an object (catalog_snapshot format)")
            return None
        try:
            CatalogSnapshot(catalog)
        except CatalogSnapshotError as exc:
            self.p.add(line.number, "catalog", str(exc).removeprefix("catalog."))
            return None
        return catalog

    def _harness(self, line: _Line, seen: dict[str, tuple[int, dict[str, Any]]]) -> None:
        record, n = line.record, line.number
        extra = sorted(set(record) - {"record", "ref", "harness"})
        if extra:
            self.p.add(n, extra[0], "unknown key of a harness record (allowed: ref, harness)")
        ref = record.get("ref")
        if not isinstance(ref, str) or not _REF.match(ref):
            self.p.add(n, "ref", "must be 1-64 letters, digits, '.', '_' or '-'")
            return
        if ref in seen:
            self.p.add(n, "ref", f"{ref!r} is already defined on line {seen[ref][0]}")
            return
        data = record.get("harness")
        if not isinstance(data, dict):
            self.p.add(n, "harness", "must be an object (harness_to_dict format)")
            return
        seen[ref] = (n, data)

    def _parsed_harnesses(
        self, harness_lines: Mapping[str, tuple[int, dict[str, Any]]]
    ) -> dict[str, Harness]:
        parsed: dict[str, Harness] = {}
        for ref, (n, data) in harness_lines.items():
            try:
                harness = harness_from_dict(data)
            except HarnessValidationError as exc:
                for error in exc.errors:
                    self.p.add(n, _join("harness", error.path), error.message)
                continue
            rule_errors = harness_problems(harness)
            for error in rule_errors:
                self.p.add(n, _join("harness", error.path), error.message)
            if not rule_errors:
                parsed[ref] = harness
        return parsed

    # --- items ---------------------------------------------------------------------------

    def _items(
        self,
        lines: Iterable[_Line],
        header: Mapping[str, Any],
        harness_lines: Mapping[str, tuple[int, dict[str, Any]]],
        harnesses: Mapping[str, Harness],
    ) -> list[QAItem]:
        items: list[QAItem] = []
        ids: dict[str, int] = {}
        for line in lines:
            item = self._item(line, header, harness_lines, harnesses)
            if item is None:
                continue
            if item.id in ids:
                self.p.add(line.number, "id", f"{item.id!r} is already used on line {ids[item.id]}")
                continue
            ids[item.id] = line.number
            items.append(item)
        if not items and not self.p.items:
            self.p.add(1, "", "the document has no item records")
        return items

    def _item(
        self,
        line: _Line,
        header: Mapping[str, Any],
        harness_lines: Mapping[str, tuple[int, dict[str, Any]]],
        harnesses: Mapping[str, Harness],
    ) -> QAItem | None:
        r, n = line.record, line.number
        before = len(self.p.items)
        for key in sorted(set(r) - ITEM_KEYS):
            self.p.add(
                n, key, f"unknown item key; allowed: {', '.join(sorted(ITEM_KEYS - {'record'}))}"
            )
        item_id = self._text(r, "id", n, required=True)
        if item_id and len(item_id) > _MAX_ID:
            self.p.add(n, "id", f"at most {_MAX_ID} characters")
        base_id = self._text(r, "base_id", n) or item_id
        comment = self._text(r, "comment", n, required=True)
        question_type = self._text(r, "question_type", n) or "gold"
        context = self._context(r.get("context", {}), n)
        layout = r.get("prompt_layout", "markdown")
        if layout not in PROMPT_LAYOUTS:
            self.p.add(n, "prompt_layout", f"must be one of {', '.join(PROMPT_LAYOUTS)}")
        ref = r.get("harness_ref")
        if ref is None and len(harness_lines) == 1:
            ref = next(iter(harness_lines))
        if not isinstance(ref, str) or ref not in harness_lines:
            known = ", ".join(harness_lines) or "none"
            self.p.add(n, "harness_ref", f"{ref!r} names no harness record (defined: {known})")
            ref = None
        gold = self._gold(r, n, harnesses.get(ref) if ref else None)
        facts = r.get("facts")
        if facts is not None and (
            not isinstance(facts, list) or not all(isinstance(f, str) and f.strip() for f in facts)
        ):
            self.p.add(n, "facts", "must be a list of non-empty strings")
        variant = self._variant(r.get("variant"), n, header, harness_lines)
        if len(self.p.items) > before or gold is None or ref is None:
            return None
        return QAItem(
            id=item_id,
            base_id=base_id,
            comment=comment,
            context=context,
            question_type=question_type,
            gold=gold,
            facts=tuple(facts) if facts is not None else gold_facts(gold),
            harness_ref=ref,
            prompt_layout=cast(PromptLayout, layout),
            variant=variant,
        )

    def _text(self, r: Mapping[str, Any], key: str, n: int, *, required: bool = False) -> str:
        value = r.get(key)
        if value is None and not required:
            return ""
        if not isinstance(value, str) or not value.strip():
            self.p.add(
                n, key, "is required: a non-empty string" if required else "must be a string"
            )
            return ""
        return value

    def _context(self, value: Any, n: int) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.p.add(n, "context", "must be an object of LiveContext fields")
            return {}
        for key in sorted(set(value) - CONTEXT_KEYS):
            self.p.add(n, f"context.{key}", f"unknown; allowed: {', '.join(sorted(CONTEXT_KEYS))}")
        for key, field_value in value.items():
            if key == "recent_comments":
                if not isinstance(field_value, list) or not all(
                    isinstance(c, str) for c in field_value
                ):
                    self.p.add(n, "context.recent_comments", "must be a list of strings")
            elif key in CONTEXT_KEYS and not isinstance(field_value, str):
                self.p.add(n, f"context.{key}", "must be a string")
        return {"room_name": "", **value}

    def _gold(self, r: Mapping[str, Any], n: int, harness: Harness | None) -> dict[str, Any] | None:
        if "gold" not in r:
            self.p.add(n, "gold", "is required: the gold trajectory (trajectory_to_dict format)")
            return None
        try:
            trajectory = trajectory_from_dict(r["gold"])
        except TrajectoryFormatError as exc:
            self.p.add(n, "gold", str(exc))
            return None
        if harness is not None:
            for problem in trajectory_problems(harness, trajectory):
                self.p.add(n, "gold", f"{problem} (of harness_ref {r.get('harness_ref')!r})")
        return trajectory_to_dict(trajectory)

    def _variant(
        self,
        value: Any,
        n: int,
        header: Mapping[str, Any],
        harness_lines: Mapping[str, tuple[int, dict[str, Any]]],
    ) -> ItemVariant | None:
        if value is None:
            if header["kind"] == "harness_variant_qa":
                self.p.add(n, "variant", "is required in a harness_variant_qa set")
            return None
        if header["kind"] == "live_stream_qa":
            self.p.add(n, "variant", "must be null in a live_stream_qa set")
            return None
        if not isinstance(value, dict):
            self.p.add(n, "variant", "must be an object")
            return None
        for key in sorted(set(value) - VARIANT_KEYS):
            self.p.add(n, f"variant.{key}", f"unknown; allowed: {', '.join(sorted(VARIANT_KEYS))}")
        policy = value.get("policy")
        if not isinstance(policy, str) or not policy:
            self.p.add(n, "variant.policy", "must be a non-empty string")
            policy = ""
        seed = value.get("seed", 0)
        if not isinstance(seed, int) or isinstance(seed, bool):
            self.p.add(n, "variant.seed", "must be an integer")
            seed = 0
        transforms = self._transforms(value.get("transforms", []), n, "transforms", policy, header)
        no_effect = self._transforms(value.get("no_effect", []), n, "no_effect", policy, header)
        try:
            mapping = RenameMapping.from_dict(value.get("mapping") or {})
        except (ValueError, AttributeError) as exc:
            self.p.add(n, "variant.mapping", str(exc))
            mapping = RenameMapping()
        base_ref = value.get("base_harness_ref")
        if not isinstance(base_ref, str) or base_ref not in harness_lines:
            self.p.add(n, "variant.base_harness_ref", f"{base_ref!r} names no harness record")
            base_ref = ""
        return ItemVariant(policy, seed, transforms, no_effect, mapping, base_ref)

    def _transforms(
        self, value: Any, n: int, key: str, policy: str, header: Mapping[str, Any]
    ) -> tuple[str, ...]:
        field = f"variant.{key}"
        if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
            self.p.add(n, field, "must be a list of transform names")
            return ()
        allowed = {t.name for t in POLICIES[policy].transforms} if policy in POLICIES else None
        wanted_policy = VARIANT_POLICIES.get(str(header["variant_set"]))
        set_families = (
            {t.family for t in POLICIES[wanted_policy].transforms} if wanted_policy else None
        )
        for name in value:
            try:
                transform = transform_named(name)
            except KeyError:
                self.p.add(n, field, f"unknown transform {name!r}")
                continue
            if transform.split != "heldout":
                self.p.add(
                    n, field, f"{name} is a training transform; variant sets use held-out ones"
                )
            elif allowed is not None and name not in allowed:
                self.p.add(n, field, f"{name} is not a transform of policy {policy!r}")
            elif set_families is not None and transform.family not in set_families:
                self.p.add(
                    n,
                    field,
                    f"{name} is of family {transform.family}, which is not a "
                    f"{header['variant_set']} family ({', '.join(sorted(set_families))})",
                )
        return tuple(value)


def _join(base: str, path: str) -> str:
    if not path:
        return base
    return f"{base}{path}" if path.startswith("[") else f"{base}.{path}"


__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "DocumentProblem",
    "QASetFormatError",
    "dumps_qa_set",
    "loads_qa_set",
    "read_qa_set",
    "write_qa_set",
]
