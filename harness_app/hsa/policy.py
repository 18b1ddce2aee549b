"""Which transforms an example gets: weighted sampling of k transforms, seeded.

A policy names its transforms with weights (by default each *family* gets equal weight,
shared by its transforms, so a family with many variants is not sampled more often), a number
``k`` sampled without replacement per example, and optionally transforms applied to every
example first (``always``). The split is part of the policy: ``train`` policies can only hold
train transforms, and the Harness-Variant sets T1/T2 use held-out transforms only.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from harness_app.hsa.banks import Split
from harness_app.hsa.naming import NameFormat
from harness_app.hsa.transforms import (
    FAMILIES,
    Family,
    Transform,
    select_transforms,
    transform_named,
)

PolicySplit = Literal["train", "heldout", "mixed"]


@dataclass(frozen=True)
class AugmentationPolicy:
    name: str
    weights: tuple[tuple[str, float], ...]
    k: int = 3
    always: tuple[str, ...] = ()
    # "python" keeps every new name parseable by BFCL's scorer (see naming.NameFormat).
    name_format: NameFormat = "harness"

    def __post_init__(self) -> None:
        if self.k < 0:
            raise ValueError(f"policy '{self.name}': k must be >= 0, got {self.k}")
        for transform_name, weight in self.weights:
            transform_named(transform_name)
            if not weight > 0:
                raise ValueError(
                    f"policy '{self.name}': weight of {transform_name} must be > 0, got {weight}"
                )
        for transform_name in self.always:
            transform_named(transform_name)
        names = [n for n, _w in self.weights]
        if len(set(names)) != len(names):
            raise ValueError(f"policy '{self.name}': a transform is listed twice")
        if set(names) & set(self.always):
            raise ValueError(f"policy '{self.name}': a transform is both weighted and always")

    @property
    def transforms(self) -> tuple[Transform, ...]:
        return tuple(transform_named(n) for n in self.always) + tuple(
            transform_named(n) for n, _w in self.weights
        )

    @cached_property
    def split(self) -> PolicySplit:
        splits = {t.split for t in self.transforms}
        if splits == {"train"}:
            return "train"
        if splits == {"heldout"}:
            return "heldout"
        return "mixed"

    @cached_property
    def _resolved(self) -> tuple[tuple[Transform, ...], tuple[tuple[Transform, float], ...]]:
        return (
            tuple(transform_named(n) for n in self.always),
            tuple((transform_named(n), w) for n, w in self.weights),
        )

    def sample(self, rng: random.Random) -> list[Transform]:
        """``always`` in order, then up to ``k`` weighted picks without replacement (in the
        order drawn, which is the order they are applied)."""
        always, weighted = self._resolved
        chosen = list(always)
        pool = list(weighted)
        for _ in range(min(self.k, len(pool))):
            total = sum(w for _t, w in pool)
            point = rng.random() * total
            for index, (transform, weight) in enumerate(pool):
                point -= weight
                if point < 0 or index == len(pool) - 1:
                    chosen.append(transform)
                    pool.pop(index)
                    break
        return chosen

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "split": self.split,
            "k": self.k,
            "always": list(self.always),
            "name_format": self.name_format,
            "weights": {name: weight for name, weight in self.weights},
        }

    @classmethod
    def build(
        cls,
        name: str,
        *,
        split: Split | None,
        k: int = 3,
        families: Iterable[Family] | None = None,
        weights: Mapping[str, float] | None = None,
        always: Iterable[str] = (),
        exclude: Iterable[str] = (),
        name_format: NameFormat = "harness",
    ) -> AugmentationPolicy:
        """A policy over the transforms of ``split`` (``None``: both) and ``families``.
        Default weights: 1 per family, split equally among its transforms; ``weights``
        overrides single transforms."""
        skip = set(always) | set(exclude)
        selected = [t for t in select_transforms(split, families) if t.name not in skip]
        per_family: dict[str, int] = {}
        for transform in selected:
            per_family[transform.family] = per_family.get(transform.family, 0) + 1
        overrides = dict(weights or {})
        pairs = tuple(
            (t.name, float(overrides.get(t.name, 1.0 / per_family[t.family]))) for t in selected
        )
        return cls(name=name, weights=pairs, k=k, always=tuple(always), name_format=name_format)


HSA_TRAIN = AugmentationPolicy.build("hsa-train", split="train", k=3)
HARNESS_VARIANT_T1 = AugmentationPolicy.build(
    "harness-variant-t1", split="heldout", k=2, families=("skill_ids", "tool_schemas")
)
HARNESS_VARIANT_T2 = AugmentationPolicy.build(
    "harness-variant-t2",
    split="heldout",
    k=2,
    families=("skill_content", "prompt_structure", "hook_functions"),
)
HELDOUT_ALL = AugmentationPolicy.build("hsa-heldout", split="heldout", k=3)
# BFCL: the training policy draws on train transforms only (it used to mix in the held-out
# ones, which leaked them into training data); the held-out one is for evaluation sets.
BFCL_TOOL_SCHEMAS = AugmentationPolicy.build(
    "bfcl-tool-schemas",
    split="train",
    k=2,
    families=("tool_schemas",),
    always=("tool_schemas.rename_tools", "tool_schemas.rename_params"),
    name_format="python",
)
BFCL_TOOL_SCHEMAS_HELDOUT = AugmentationPolicy.build(
    "bfcl-tool-schemas-heldout",
    split="heldout",
    k=2,
    families=("tool_schemas",),
    always=("tool_schemas.unseen_synonym_names",),
    name_format="python",
)
POLICIES: dict[str, AugmentationPolicy] = {
    policy.name: policy
    for policy in (
        HSA_TRAIN,
        HARNESS_VARIANT_T1,
        HARNESS_VARIANT_T2,
        HELDOUT_ALL,
        BFCL_TOOL_SCHEMAS,
        BFCL_TOOL_SCHEMAS_HELDOUT,
    )
}
__all__ = [
    "BFCL_TOOL_SCHEMAS",
    "BFCL_TOOL_SCHEMAS_HELDOUT",
    "FAMILIES",
    "HARNESS_VARIANT_T1",
    "HARNESS_VARIANT_T2",
    "HELDOUT_ALL",
    "HSA_TRAIN",
    "POLICIES",
    "AugmentationPolicy",
]
