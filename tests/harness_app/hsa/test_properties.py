"""The HSA contract, for any valid harness, gold trajectory, policy and seed:

- the augmented harness passes the full ``validate_harness``;
- the remapped gold trajectory verifies against it;
- the mapping inverts (the original gold trajectory comes back exactly);
- the same seed reproduces byte-identical output.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness_app.harness.model import Harness
from harness_app.harness.validation import validate_harness
from harness_app.hsa.augment import augment
from harness_app.hsa.harness_check import harness_problems
from harness_app.hsa.policy import (
    HARNESS_VARIANT_T1,
    HARNESS_VARIANT_T2,
    HSA_TRAIN,
    AugmentationPolicy,
)
from harness_app.hsa.trajectory import GoldTrajectory
from harness_app.hsa.transforms import TRANSFORMS
from harness_app.hsa.verify import verify_pair
from tests.harness_app.harness.strategies import harnesses
from tests.harness_app.hsa.strategies import harness_and_gold, rich_harness_and_gold

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
seeds = st.integers(min_value=0, max_value=2**63)
policies = st.sampled_from([HSA_TRAIN, HARNESS_VARIANT_T1, HARNESS_VARIANT_T2])
single_transform_policies = st.sampled_from(
    [AugmentationPolicy(name=t.name, weights=(), k=0, always=(t.name,)) for t in TRANSFORMS]
)


def _check_contract(
    harness: Harness, gold: GoldTrajectory, policy: AugmentationPolicy, seed: int
) -> None:
    assert verify_pair(harness, gold) == []  # the strategy draws consistent pairs
    example = augment(harness, gold, policy, seed)
    assert validate_harness(example.harness) == []
    assert verify_pair(example.harness, example.trajectory) == []
    assert example.mapping.apply(gold) == example.trajectory
    assert example.mapping.inverse().apply(example.trajectory) == gold
    again = augment(harness, gold, policy, seed)
    assert again.to_json() == example.to_json()
    assert example.provenance["seed"] == seed
    assert example.provenance["policy"] == policy.name


@PROPERTY
@given(pair=harness_and_gold(), policy=policies, seed=seeds)
def test_augmented_pairs_are_valid_invertible_and_reproducible(
    pair: tuple[Harness, GoldTrajectory], policy: AugmentationPolicy, seed: int
) -> None:
    harness, gold = pair
    _check_contract(harness, gold, policy, seed)


@PROPERTY
@given(pair=harness_and_gold(), policy=single_transform_policies, seed=seeds)
def test_every_transform_alone_keeps_the_contract(
    pair: tuple[Harness, GoldTrajectory], policy: AugmentationPolicy, seed: int
) -> None:
    harness, gold = pair
    _check_contract(harness, gold, policy, seed)


@PROPERTY
@given(pair=rich_harness_and_gold(), policy=single_transform_policies, seed=seeds)
def test_every_transform_keeps_the_contract_on_reference_rich_harnesses(
    pair: tuple[Harness, GoldTrajectory], policy: AugmentationPolicy, seed: int
) -> None:
    harness, gold = pair
    _check_contract(harness, gold, policy, seed)


@PROPERTY
@given(pair=st.one_of(harness_and_gold(), rich_harness_and_gold()), seed=seeds)
def test_chains_of_many_transforms_keep_the_contract(
    pair: tuple[Harness, GoldTrajectory], seed: int
) -> None:
    harness, gold = pair
    everything = AugmentationPolicy.build("everything", split=None, k=8)
    _check_contract(harness, gold, everything, seed)


@settings(max_examples=100, deadline=None)
@given(harness=harnesses())
def test_cached_harness_check_agrees_with_validate_harness(harness: Harness) -> None:
    assert harness_problems(harness) == []
    assert validate_harness(harness) == []


def test_different_seeds_give_different_examples(
    demo: Harness, product_gold: GoldTrajectory
) -> None:
    outputs = {augment(demo, product_gold, HSA_TRAIN, seed).to_json() for seed in range(20)}
    assert len(outputs) > 15


@pytest.mark.parametrize("seed", range(30))
def test_demo_harness_augments_under_every_policy(
    demo: Harness, product_gold: GoldTrajectory, shipping_gold: GoldTrajectory, seed: int
) -> None:
    for policy in (HSA_TRAIN, HARNESS_VARIANT_T1, HARNESS_VARIANT_T2):
        for gold in (product_gold, shipping_gold):
            _check_contract(demo, gold, policy, seed)
