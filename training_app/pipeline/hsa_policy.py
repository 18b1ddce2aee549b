"""The HSA policy a training stage augments with: a *training* policy by name, or none.

``""`` is Fixed-Harness training (original harnesses only, the report's baseline). A policy
with any held-out transform is refused: held-out transforms exist to build the
Harness-Variant evaluation sets, and training on them would leak the test edits.
"""

from __future__ import annotations

from harness_app.hsa.policy import POLICIES, AugmentationPolicy


class UnknownPolicyError(ValueError):
    pass


class HeldOutPolicyError(ValueError):
    pass


def training_policy(name: str) -> AugmentationPolicy | None:
    """The policy named ``name`` (None for ``""``); refuses unknown and held-out ones."""
    if not name:
        return None
    policy = POLICIES.get(name)
    if policy is None:
        raise UnknownPolicyError(
            f"unknown HSA policy {name!r}; known policies: {', '.join(sorted(POLICIES))}"
        )
    if policy.split != "train":
        heldout = sorted(t.name for t in policy.transforms if t.split == "heldout")
        raise HeldOutPolicyError(
            f"policy {name!r} is {policy.split} (held-out transforms: {', '.join(heldout)}); "
            "no training stage uses a held-out policy"
        )
    return policy
