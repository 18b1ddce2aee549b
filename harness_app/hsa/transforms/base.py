"""What a transform is: a small, seeded, task-preserving edit of a harness.

A transform takes the current harness, the current gold trajectory (read-only: hooks and
renames need to know what the gold answer does) and a seeded ``random.Random``, and returns the
new harness plus the renames it made. It never rewrites the trajectory itself: ``augment``
does that through the mapping, so the mapping is the single source of truth and is checked.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from harness_app.harness.model import Harness
from harness_app.harness.prompt import PromptLayout
from harness_app.hsa.banks import Split
from harness_app.hsa.mapping import IDENTITY, RenameMapping
from harness_app.hsa.trajectory import GoldTrajectory

Family = Literal["skill_ids", "skill_content", "tool_schemas", "prompt_structure", "hook_functions"]
FAMILIES: Final[tuple[Family, ...]] = (
    "skill_ids",
    "skill_content",
    "tool_schemas",
    "prompt_structure",
    "hook_functions",
)


@dataclass(frozen=True)
class TransformResult:
    """The edited harness, the renames made, and (for layout edits) the prompt layout."""

    harness: Harness
    mapping: RenameMapping = IDENTITY
    prompt_layout: PromptLayout | None = None


ApplyFn = Callable[[Harness, GoldTrajectory, random.Random], TransformResult]


@dataclass(frozen=True)
class Transform:
    """A named edit. ``split`` says whether training may use it or it is held out for the
    Harness-Variant evaluation sets."""

    name: str
    family: Family
    split: Split
    summary: str
    apply_fn: ApplyFn

    def apply(
        self, harness: Harness, trajectory: GoldTrajectory, rng: random.Random
    ) -> TransformResult:
        return self.apply_fn(harness, trajectory, rng)


def unchanged(harness: Harness) -> TransformResult:
    return TransformResult(harness)


# Share of skills / tools a content or schema edit touches: an operator's edit rarely rewrites
# everything, and untouched components stay shared with the original (cheap to verify).
# Identifier renames are the exception: they rename every item, so no original name survives
# to be memorised.
ITEM_RATE: Final = 0.5


def pick_items(count: int, rng: random.Random, rate: float = ITEM_RATE) -> frozenset[int]:
    """Indices of the items an edit touches: each with probability ``rate``, at least one."""
    if count == 0:
        return frozenset()
    chosen = frozenset(i for i in range(count) if rng.random() < rate)
    return chosen or frozenset({rng.randrange(count)})
