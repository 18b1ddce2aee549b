"""The transform registry: every HSA transform, by family and split."""

from __future__ import annotations

from collections.abc import Iterable

from harness_app.hsa.banks import Split
from harness_app.hsa.transforms import (
    hook_functions,
    prompt_structure,
    skill_content,
    skill_ids,
    tool_schemas,
)
from harness_app.hsa.transforms.base import (
    FAMILIES,
    ApplyFn,
    Family,
    Transform,
    TransformResult,
)

TRANSFORMS: tuple[Transform, ...] = (
    *skill_ids.TRANSFORMS,
    *skill_content.TRANSFORMS,
    *tool_schemas.TRANSFORMS,
    *prompt_structure.TRANSFORMS,
    *hook_functions.TRANSFORMS,
)
_BY_NAME: dict[str, Transform] = {transform.name: transform for transform in TRANSFORMS}


def transform_named(name: str) -> Transform:
    """The transform called ``name``; ``KeyError`` lists the known names."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown transform '{name}'; known: {', '.join(_BY_NAME)}") from None


def select_transforms(
    split: Split | None = None, families: Iterable[Family] | None = None
) -> tuple[Transform, ...]:
    """Transforms of one split (``None``: both) and of the given families (``None``: all)."""
    wanted = set(families) if families is not None else set(FAMILIES)
    return tuple(
        t for t in TRANSFORMS if t.family in wanted and (split is None or t.split == split)
    )


__all__ = [
    "FAMILIES",
    "TRANSFORMS",
    "ApplyFn",
    "Family",
    "Transform",
    "TransformResult",
    "select_transforms",
    "transform_named",
]
