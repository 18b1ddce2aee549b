"""Live-Stream QA and Harness-Variant QA evaluation sets, built from a room's catalog and
harness (pure Python: plain dicts in, frozen dataclasses out).

- **Live-Stream QA** (``build_live_stream_qa_set``): the ``split="eval"`` task records of
  ``training_app.pipeline.task_set`` (their comment and answer templates share nothing with
  the training split's), plus optional hand-written task records (``task_from_gold``). Each
  item keeps its gold trajectory (skill, tool calls with arguments and recorded results, the
  final answer) and its gold facts (``qa_scoring.gold_facts``).
- **Harness-Variant QA T1 / T2** (``build_harness_variant_qa_set``): the same items, each
  under a held-out HSA variant of the harness drawn with the policy ``harness-variant-t1``
  (held-out ``skill_ids`` + ``tool_schemas`` transforms: the names and schemas the model must
  read) or ``harness-variant-t2`` (held-out ``skill_content`` + ``prompt_structure`` +
  ``hook_functions``: wording and structure). The two policies draw from disjoint transform
  families. ``harness_app.hsa.augment`` verifies every variant and rewrites the gold through
  the variant's renames; the item records the variant harness (by reference, see below), the
  transforms applied, the seed and the rename mapping, so the variant is reproducible with
  ``augment(base harness, base gold, POLICIES[policy], seed)``.

Harnesses are stored once per set, keyed by a content reference (``h-`` + 16 hex digits of
the SHA-256 of the harness's canonical JSON); items name theirs with ``harness_ref``. The
catalog snapshot the golds were computed from (``catalog_snapshot`` format) travels with the
set, so a run scores against the facts the golds hold. The JSONL document format is in
``qa_set_document``.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final, Literal

from harness_app.harness.model import Harness
from harness_app.harness.prompt import PromptLayout
from harness_app.harness.serialization import canonical_json, harness_from_dict, harness_to_dict
from harness_app.hsa.augment import HSA_FORMAT_VERSION, AugmentationError, augment
from harness_app.hsa.mapping import RenameMapping
from harness_app.hsa.policy import POLICIES
from harness_app.hsa.trajectory import trajectory_from_dict, trajectory_to_dict
from training_app.evals.qa_scoring import gold_facts
from training_app.pipeline.task_set import DEMO_SKILLS, QUESTION_TYPES, generate_tasks

QASetKind = Literal["live_stream_qa", "harness_variant_qa"]
VariantSet = Literal["t1", "t2"]
QA_SET_KINDS: Final[tuple[str, ...]] = ("live_stream_qa", "harness_variant_qa")
VARIANT_SETS: Final[tuple[str, ...]] = ("t1", "t2")
VARIANT_POLICIES: Final[Mapping[str, str]] = {
    "t1": "harness-variant-t1",
    "t2": "harness-variant-t2",
}
# Separates a variant item's id from its base item's: "eval-price-SW-1001~t1".
VARIANT_ID_SEPARATOR: Final = "~"


class QASetError(ValueError):
    """A set cannot be built from these inputs; the message says what is missing."""


def harness_ref(harness: Harness | Mapping[str, Any]) -> str:
    """The content reference of a harness: ``h-`` + 16 hex digits of its canonical JSON's
    SHA-256 (the same harness always gets the same reference)."""
    data = harness_to_dict(harness) if isinstance(harness, Harness) else dict(harness)
    return "h-" + hashlib.sha256(canonical_json(data).encode("utf-8")).hexdigest()[:16]


def catalog_hash(catalog: Mapping[str, Any]) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(dict(catalog)).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ItemVariant:
    """How a Harness-Variant item's harness was made from its base item's."""

    policy: str
    seed: int
    transforms: tuple[str, ...]
    no_effect: tuple[str, ...]
    mapping: RenameMapping
    base_harness_ref: str

    def to_record(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "seed": self.seed,
            "transforms": list(self.transforms),
            "no_effect": list(self.no_effect),
            "mapping": self.mapping.to_dict(),
            "base_harness_ref": self.base_harness_ref,
        }


@dataclass(frozen=True)
class QAItem:
    """One viewer comment with its gold answer, on one harness.

    ``base_id`` is the Live-Stream item a variant item was made from (its own ``id`` for a
    Live-Stream item): paired statistics across T1, T2 and the original match on it.
    ``gold`` is ``trajectory_to_dict`` output in the names of the item's harness.
    """

    id: str
    base_id: str
    comment: str
    context: dict[str, Any]
    question_type: str
    gold: dict[str, Any]
    facts: tuple[str, ...]
    harness_ref: str
    prompt_layout: PromptLayout = "markdown"
    variant: ItemVariant | None = None

    def to_record(self) -> dict[str, Any]:
        return {
            "record": "item",
            "id": self.id,
            "base_id": self.base_id,
            "comment": self.comment,
            "context": dict(self.context),
            "question_type": self.question_type,
            "gold": dict(self.gold),
            "facts": list(self.facts),
            "harness_ref": self.harness_ref,
            "prompt_layout": self.prompt_layout,
            "variant": None if self.variant is None else self.variant.to_record(),
        }

    @property
    def argument_names(self) -> dict[str, dict[str, str]]:
        """Variant tool -> {variant parameter: original parameter}: what the catalog
        operations read (``harness_episode.OfflineToolRunner``). Empty without renames."""
        if self.variant is None:
            return {}
        inverse = self.variant.mapping.inverse()
        return {tool: dict(renames) for tool, renames in inverse.param_renames.items()}


@dataclass(frozen=True)
class QASet:
    """An evaluation set: its items, the harnesses they run on and the catalog snapshot.

    ``source`` records how it was made (generator, split, seed, harness and catalog hashes;
    for a variant set the base set's name and content hash and the policy's families).
    ``skipped`` lists base items that got no verified variant (``{"id", "reason"}``).
    """

    kind: QASetKind
    name: str
    items: tuple[QAItem, ...]
    harnesses: Mapping[str, Mapping[str, Any]]
    catalog: Mapping[str, Any] | None = None
    variant_set: VariantSet | None = None
    policy: str | None = None
    seed: int = 0
    source: Mapping[str, Any] = field(default_factory=dict)
    skipped: tuple[Mapping[str, str], ...] = ()

    def records(self) -> list[dict[str, Any]]:
        """Every record after the header, in document order: catalog, harnesses, items."""
        out: list[dict[str, Any]] = []
        if self.catalog is not None:
            out.append({"record": "catalog", "catalog": dict(self.catalog)})
        out.extend(
            {"record": "harness", "ref": ref, "harness": dict(harness)}
            for ref, harness in self.harnesses.items()
        )
        out.extend(item.to_record() for item in self.items)
        return out

    @cached_property
    def content_hash(self) -> str:
        """``sha256:`` of the canonical JSON of every record after the header, one per line."""
        digest = hashlib.sha256()
        for record in self.records():
            digest.update(canonical_json(record).encode("utf-8"))
            digest.update(b"\n")
        return "sha256:" + digest.hexdigest()

    def header(self) -> dict[str, Any]:
        return {
            "record": "header",
            "format": "hat-qa-set",
            "format_version": 1,
            "kind": self.kind,
            "name": self.name,
            "variant_set": self.variant_set,
            "policy": self.policy,
            "seed": self.seed,
            "source": dict(self.source),
            "skipped": [dict(s) for s in self.skipped],
            "counts": {"items": len(self.items), "harnesses": len(self.harnesses)},
            "content_hash": self.content_hash,
        }

    @cached_property
    def _parsed(self) -> dict[str, Harness]:
        return {ref: harness_from_dict(data) for ref, data in self.harnesses.items()}

    def harness(self, ref: str) -> Harness:
        """The harness stored under ``ref`` (parsed once per set)."""
        try:
            return self._parsed[ref]
        except KeyError:
            raise KeyError(f"set {self.name!r} has no harness {ref!r}") from None

    def harness_for(self, item: QAItem) -> Harness:
        return self.harness(item.harness_ref)

    def item(self, item_id: str) -> QAItem:
        for item in self.items:
            if item.id == item_id:
                return item
        raise KeyError(f"set {self.name!r} has no item {item_id!r}")

    @property
    def base_ids(self) -> dict[str, str]:
        """Item id -> base item id (the pairing key across T1, T2 and the original)."""
        return {item.id: item.base_id for item in self.items}

    @property
    def transform_families(self) -> frozenset[str]:
        """The HSA families of every transform applied to the set's items."""
        return frozenset(
            name.split(".", 1)[0]
            for item in self.items
            if item.variant is not None
            for name in item.variant.transforms
        )


# --- Live-Stream QA --------------------------------------------------------------------------


def _item_from_task(task: Mapping[str, Any], ref: str) -> QAItem:
    gold = trajectory_to_dict(trajectory_from_dict(task["gold"]))
    return QAItem(
        id=str(task["id"]),
        base_id=str(task["id"]),
        comment=str(task["comment"]),
        context=dict(task.get("context") or {}),
        question_type=str(task.get("question_type") or "gold"),
        gold=gold,
        facts=gold_facts(gold),
        harness_ref=ref,
    )


def build_live_stream_qa_set(
    catalog: Mapping[str, Any],
    harness: Harness | Mapping[str, Any],
    *,
    name: str = "Live-Stream QA",
    harness_id: str = "room",
    seed: int = 0,
    per_type: int | None = None,
    question_types: Sequence[str] = QUESTION_TYPES,
    skills: Mapping[str, str | None] = DEMO_SKILLS,
    extra_tasks: Iterable[Mapping[str, Any]] = (),
) -> QASet:
    """The eval split of the task set over ``catalog`` for ``harness`` (every supported
    (product, question type), or ``per_type`` of each drawn with ``seed``), then
    ``extra_tasks`` (hand-written task records, e.g. from ``task_from_gold``)."""
    data = harness_to_dict(harness) if isinstance(harness, Harness) else dict(harness)
    ref = harness_ref(data)
    tasks = generate_tasks(
        catalog,
        data,
        harness_id,
        split="eval",
        seed=seed,
        question_types=question_types,
        per_type=per_type,
        skills=skills,
    )
    extra = list(extra_tasks)
    items = [_item_from_task(task, ref) for task in [*tasks, *extra]]
    counts = Counter(i.id for i in items)
    duplicates = sorted(item_id for item_id, n in counts.items() if n > 1)
    if duplicates:
        raise QASetError(f"item ids must be unique; repeated: {', '.join(duplicates[:5])}")
    return QASet(
        kind="live_stream_qa",
        name=name,
        items=tuple(items),
        harnesses={ref: data},
        catalog=dict(catalog),
        seed=seed,
        source={
            "generator": "training_app.pipeline.task_set",
            "split": "eval",
            "seed": seed,
            "per_type": per_type,
            "question_types": list(question_types),
            "harness_id": harness_id,
            "harness_ref": ref,
            "catalog_hash": catalog_hash(catalog),
            "generated_items": len(tasks),
            "extra_items": len(extra),
        },
    )


# --- Harness-Variant QA ----------------------------------------------------------------------


def variant_seed(seed: int, policy: str, base_id: str, variant: int, attempt: int) -> int:
    """The augmentation seed of one variant: stable for the same inputs, independent of
    the item's position (adding an item does not change the others' variants)."""
    text = f"{seed}:{policy}:{base_id}:{variant}:{attempt}"
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def build_harness_variant_qa_set(
    base: QASet,
    variant_set: VariantSet,
    *,
    seed: int = 0,
    variants_per_item: int = 1,
    max_tries: int = 4,
    name: str | None = None,
) -> QASet:
    """Every item of the Live-Stream set ``base`` under ``variants_per_item`` verified
    held-out variants of its harness (policy ``VARIANT_POLICIES[variant_set]``).

    A try whose transforms all had no effect (the harness unchanged) or that fails
    verification is retried with the next seed; after ``max_tries`` the item is left out
    and listed in ``skipped`` with the reason.
    """
    if base.kind != "live_stream_qa":
        raise QASetError(
            f"variants are built from a live_stream_qa set; {base.name!r} is {base.kind}"
        )
    if variant_set not in VARIANT_POLICIES:
        raise QASetError(
            f"variant_set must be one of {', '.join(VARIANT_SETS)}; got {variant_set!r}"
        )
    if variants_per_item < 1 or max_tries < 1:
        raise QASetError("variants_per_item and max_tries must be at least 1")
    policy = POLICIES[VARIANT_POLICIES[variant_set]]
    # The base harnesses come first: every variant names its base (``base_harness_ref``).
    harnesses: dict[str, Mapping[str, Any]] = {
        ref: base.harnesses[ref] for ref in dict.fromkeys(i.harness_ref for i in base.items)
    }
    items: list[QAItem] = []
    skipped: list[dict[str, str]] = []
    for item in base.items:
        original = base.harness_for(item)
        gold = trajectory_from_dict(item.gold)
        for number in range(variants_per_item):
            problem = ""
            for attempt in range(max_tries):
                try_seed = variant_seed(seed, policy.name, item.id, number, attempt)
                try:
                    example = augment(original, gold, policy, try_seed)
                except AugmentationError as exc:
                    problem = str(exc).splitlines()[0]
                    continue
                if not example.provenance.get("transforms"):
                    problem = "every sampled transform left the harness unchanged"
                    continue
                data = harness_to_dict(example.harness)
                ref = harness_ref(data)
                harnesses.setdefault(ref, data)
                suffix = variant_set if variants_per_item == 1 else f"{variant_set}.{number}"
                items.append(
                    QAItem(
                        id=f"{item.id}{VARIANT_ID_SEPARATOR}{suffix}",
                        base_id=item.base_id,
                        comment=item.comment,
                        context=dict(item.context),
                        question_type=item.question_type,
                        gold=trajectory_to_dict(example.trajectory),
                        facts=item.facts,
                        harness_ref=ref,
                        prompt_layout=example.prompt_layout,
                        variant=ItemVariant(
                            policy=policy.name,
                            seed=try_seed,
                            transforms=tuple(example.provenance.get("transforms", ())),
                            no_effect=tuple(example.provenance.get("no_effect", ())),
                            mapping=example.mapping,
                            base_harness_ref=item.harness_ref,
                        ),
                    )
                )
                break
            else:
                skipped.append(
                    {"id": item.id, "variant": str(number), "reason": problem or "no variant"}
                )
    families = sorted({t.family for t in policy.transforms})
    return QASet(
        kind="harness_variant_qa",
        name=name or f"{base.name} / Harness-Variant {variant_set.upper()}",
        items=tuple(items),
        harnesses=harnesses,
        catalog=base.catalog,
        variant_set=variant_set,
        policy=policy.name,
        seed=seed,
        source={
            "base_set": base.name,
            "base_content_hash": base.content_hash,
            "policy": policy.describe(),
            "families": families,
            "hsa_version": HSA_FORMAT_VERSION,
            "variants_per_item": variants_per_item,
            "max_tries": max_tries,
        },
        skipped=tuple(skipped),
    )
