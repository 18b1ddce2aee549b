"""Augment one (harness, gold trajectory) pair, verified; and many, as a JSONL artifact.

``augment`` samples the policy's transforms with a seeded ``random.Random``, applies them in
order, rewrites the gold trajectory through the composed mapping and then *verifies* the
result (``verify.augmentation_problems``); a pair that fails is never returned. The same
(harness, trajectory, policy, seed) always gives the same example, and its provenance records
how to reproduce it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final

from harness_app.harness.model import Harness
from harness_app.harness.prompt import PromptContext, PromptLayout, assemble_prompt
from harness_app.harness.serialization import canonical_json, harness_to_dict
from harness_app.hsa.harness_check import KnownValid, known_valid
from harness_app.hsa.hook_decisions import DecisionProfile, decision_profile
from harness_app.hsa.mapping import IDENTITY, RenameMapping
from harness_app.hsa.naming import NamingContext, using_naming
from harness_app.hsa.policy import AugmentationPolicy
from harness_app.hsa.trajectory import GoldTrajectory, trajectory_to_dict
from harness_app.hsa.verify import augmentation_problems, verify_pair

HSA_FORMAT_VERSION: Final = 1
# (a BFCL category holds up to ~1,000 cases; each is augmented once per seed)
_ORIGINALS_CACHE_SIZE: Final = 2048


class AugmentationError(ValueError):
    """An augmented pair failed verification (a bug in a transform: report it)."""

    def __init__(self, message: str, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(message + "".join(f"\n- {p}" for p in problems))


class InvalidGoldError(AugmentationError):
    """The *original* pair does not verify, so there is nothing task-preserving to do."""


@dataclass(frozen=True)
class AugmentedExample:
    harness: Harness
    trajectory: GoldTrajectory
    mapping: RenameMapping
    provenance: dict[str, Any] = field(default_factory=dict)
    prompt_layout: PromptLayout = "markdown"

    def to_dict(self) -> dict[str, Any]:
        return {
            "harness": harness_to_dict(self.harness),
            "trajectory": trajectory_to_dict(self.trajectory),
            "mapping": self.mapping.to_dict(),
            "prompt_layout": self.prompt_layout,
            "provenance": self.provenance,
        }

    def to_json(self) -> str:
        """Canonical JSON: the same seed gives byte-identical text."""
        return canonical_json(self.to_dict())

    def system_prompt(self, ctx: PromptContext) -> str:
        """The augmented system prompt, in the example's layout."""
        return assemble_prompt(self.harness, ctx, self.prompt_layout)


@dataclass(frozen=True)
class _Original:
    harness: Harness
    trajectory: GoldTrajectory
    profile: DecisionProfile
    known: KnownValid
    reserved_tools: frozenset[str]
    reserved_params: dict[str, frozenset[str]]


_originals: dict[tuple[int, int], _Original] = {}


def _checked_original(harness: Harness, trajectory: GoldTrajectory) -> _Original:
    """Verify the original pair once per (harness, trajectory) object pair."""
    key = (id(harness), id(trajectory))
    hit = _originals.get(key)
    if hit is not None and hit.harness is harness and hit.trajectory is trajectory:
        return hit
    problems = verify_pair(harness, trajectory)
    if problems:
        raise InvalidGoldError("the original gold trajectory does not fit its harness:", problems)
    if len(_originals) >= _ORIGINALS_CACHE_SIZE:
        _originals.clear()
    original = _Original(
        harness,
        trajectory,
        decision_profile(harness, trajectory),
        known_valid(harness),
        frozenset(tool.name for tool in harness.tools),
        _reserved_params(harness, IDENTITY),
    )
    _originals[key] = original
    return original


def _reserved_params(original: Harness, mapping: RenameMapping) -> dict[str, frozenset[str]]:
    """Current tool name -> the parameter names its original had (see ``NamingContext``)."""
    reserved: dict[str, frozenset[str]] = {}
    for tool in original.tools:
        properties = tool.input_schema.get("properties")
        if isinstance(properties, dict) and properties:
            reserved[mapping.tool(tool.name)] = frozenset(properties)
    return reserved


def augment(
    harness: Harness,
    trajectory: GoldTrajectory,
    policy: AugmentationPolicy,
    seed: int,
    *,
    keep_names: frozenset[str] = frozenset(),
) -> AugmentedExample:
    """One augmented, verified example; raises ``AugmentationError`` if verification fails
    and ``InvalidGoldError`` if the original pair is not valid to begin with.
    ``keep_names``: tool and parameter names no transform may rename (recorded in the
    provenance, e.g. names the task text mentions)."""
    original = _checked_original(harness, trajectory)
    # The naming context changes only when tools are renamed (reserved_params is keyed by
    # current tool names), so it is built once and then per tool-renaming step.
    context = NamingContext(
        policy.name_format, keep_names, original.reserved_tools, original.reserved_params
    )
    rng = random.Random(seed)
    current, gold = harness, trajectory
    mapping: RenameMapping = IDENTITY
    steps: list[RenameMapping] = []
    layout: PromptLayout = "markdown"
    applied: list[str] = []
    unchanged: list[str] = []
    for transform in policy.sample(rng):
        with using_naming(context):
            result = transform.apply(current, gold, rng)
        changed = result.harness is not current or (
            result.prompt_layout is not None and result.prompt_layout != layout
        )
        (applied if changed else unchanged).append(transform.name)
        current = result.harness
        if result.prompt_layout is not None:
            layout = result.prompt_layout
        if not result.mapping.is_identity:
            gold = result.mapping.apply(gold)
            mapping = mapping.compose(result.mapping)
            steps.append(result.mapping)
            if result.mapping.tool_renames:
                context = NamingContext(
                    policy.name_format,
                    keep_names,
                    original.reserved_tools,
                    # (the original's reserved names, under the tools' current names)
                    {
                        mapping.tool(name): params
                        for name, params in original.reserved_params.items()
                    },
                )
    problems = augmentation_problems(
        harness,
        trajectory,
        current,
        gold,
        mapping,
        steps,
        original_profile=original.profile,
        known=original.known,
    )
    if problems:
        raise AugmentationError(
            f"augmented pair failed verification (policy {policy.name}, seed {seed}, "
            f"transforms {applied}):",
            problems,
        )
    provenance = {
        "hsa_version": HSA_FORMAT_VERSION,
        "policy": policy.name,
        "split": policy.split,
        "seed": seed,
        "transforms": applied,
        "no_effect": unchanged,
        "verified": True,
    }
    if policy.name_format != "harness":
        provenance["name_format"] = policy.name_format
    if keep_names:
        provenance["keep_names"] = sorted(keep_names)
    return AugmentedExample(current, gold, mapping, provenance, layout)


def example_seed(base_seed: int, index: int, variant: int) -> int:
    """A per-example seed that does not depend on Python's hash randomisation."""
    digest = hashlib.sha256(f"{base_seed}:{index}:{variant}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def augment_many(
    pairs: Iterable[tuple[Harness, GoldTrajectory]],
    policy: AugmentationPolicy,
    *,
    seed: int,
    variants: int = 1,
) -> Iterator[AugmentedExample]:
    """``variants`` augmented examples per pair, each with its own recorded seed."""
    for index, (harness, trajectory) in enumerate(pairs):
        for variant in range(variants):
            example = augment(harness, trajectory, policy, example_seed(seed, index, variant))
            yield dataclasses.replace(
                example, provenance={**example.provenance, "source_index": index}
            )


def write_jsonl(examples: Iterable[AugmentedExample], target: str | Path | IO[str]) -> int:
    """Write one canonical JSON document per line; returns the number written."""
    if isinstance(target, str | Path):
        with Path(target).open("w", encoding="utf-8") as handle:
            return write_jsonl(examples, handle)
    count = 0
    for example in examples:
        target.write(example.to_json() + "\n")
        count += 1
    return count
