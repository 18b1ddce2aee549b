"""Harness-State Augmentation (HSA): task-preserving transformations of a Harness, with the
gold trajectory rewritten to match and every augmented pair verified. Pure Python, never
imports Django (see DESIGN.md and docs/HSA.md).

Typical use::

    example = augment(harness, gold, HSA_TRAIN, seed=7)
    example.harness, example.trajectory, example.mapping, example.provenance
    example.system_prompt(ctx)          # the prompt in the example's layout
    write_jsonl(augment_many(pairs, HSA_TRAIN, seed=0, variants=4), "train.jsonl")

The BFCL run lives in ``harness_app.hsa.bfcl_augment`` (imported on its own, so that
``python -m harness_app.hsa.bfcl_augment`` runs it cleanly).
"""

from harness_app.hsa.augment import (
    AugmentationError,
    AugmentedExample,
    InvalidGoldError,
    augment,
    augment_many,
    example_seed,
    write_jsonl,
)
from harness_app.hsa.mapping import IDENTITY, RenameMapping
from harness_app.hsa.policy import (
    BFCL_TOOL_SCHEMAS,
    BFCL_TOOL_SCHEMAS_HELDOUT,
    HARNESS_VARIANT_T1,
    HARNESS_VARIANT_T2,
    HELDOUT_ALL,
    HSA_TRAIN,
    POLICIES,
    AugmentationPolicy,
)
from harness_app.hsa.trajectory import (
    GoldTrajectory,
    ToolCall,
    TrajectoryFormatError,
    trajectory_from_dict,
    trajectory_from_json,
    trajectory_to_dict,
    trajectory_to_json,
)
from harness_app.hsa.transforms import (
    FAMILIES,
    TRANSFORMS,
    Transform,
    TransformResult,
    select_transforms,
    transform_named,
)
from harness_app.hsa.verify import augmentation_problems, trajectory_problems, verify_pair

__all__ = [
    "BFCL_TOOL_SCHEMAS",
    "BFCL_TOOL_SCHEMAS_HELDOUT",
    "FAMILIES",
    "HARNESS_VARIANT_T1",
    "HARNESS_VARIANT_T2",
    "HELDOUT_ALL",
    "HSA_TRAIN",
    "IDENTITY",
    "POLICIES",
    "TRANSFORMS",
    "AugmentationError",
    "AugmentationPolicy",
    "AugmentedExample",
    "GoldTrajectory",
    "InvalidGoldError",
    "RenameMapping",
    "ToolCall",
    "TrajectoryFormatError",
    "Transform",
    "TransformResult",
    "augment",
    "augment_many",
    "augmentation_problems",
    "example_seed",
    "select_transforms",
    "trajectory_from_dict",
    "trajectory_from_json",
    "trajectory_problems",
    "trajectory_to_dict",
    "trajectory_to_json",
    "transform_named",
    "verify_pair",
    "write_jsonl",
]
