"""One HSA augmentation of a harness, for people to look at before they train on it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness_app.harness.diff import Change, semantic_diff
from harness_app.harness.model import Harness
from harness_app.hsa import (
    POLICIES,
    TRANSFORMS,
    AugmentationPolicy,
    AugmentedExample,
    GoldTrajectory,
    augment,
)


class PreviewInputError(ValueError):
    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message)


@dataclass(frozen=True)
class Preview:
    original: Harness
    example: AugmentedExample
    changes: list[Change]


def catalog() -> dict[str, Any]:
    return {
        "transforms": [{"name": t.name, "family": t.family, "split": t.split} for t in TRANSFORMS],
        "policies": [
            {
                "name": p.name,
                "split": p.split,
                "k": p.k,
                "transforms": [t.name for t in p.transforms],
            }
            for p in POLICIES.values()
        ],
    }


def preview(
    *, content: Harness, policy: str | None, transforms: list[str] | None, seed: int
) -> Preview:
    """Apply a named policy, or the given transforms in order, with ``seed``."""
    if bool(policy) == bool(transforms):
        raise PreviewInputError("policy", "give either a policy or a list of transforms")
    if policy:
        if policy not in POLICIES:
            raise PreviewInputError(
                "policy", f"unknown policy {policy!r}; policies: {', '.join(POLICIES)}"
            )
        chosen = POLICIES[policy]
    else:
        known = {t.name for t in TRANSFORMS}
        unknown = [name for name in transforms or () if name not in known]
        if unknown:
            raise PreviewInputError("transforms", f"unknown transform {unknown[0]!r}")
        chosen = AugmentationPolicy(name="preview", weights=(), k=0, always=tuple(transforms or ()))
    # No gold trajectory is needed to show the harness side; an empty one verifies trivially.
    example = augment(content, GoldTrajectory(skill=None), chosen, seed)
    return Preview(content, example, semantic_diff(content, example.harness))
