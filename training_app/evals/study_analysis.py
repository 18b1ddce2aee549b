"""The HAT study's numbers from item-level results (pure: plain dicts in, dataclasses out).

One ``ModelScores`` per model holds its item scores on every set (1.0 pass / 0.0 fail):

- ``live``: Live-Stream QA, keyed by base item;
- ``t1`` / ``t2``: the Harness-Variant sets (held-out HSA families), keyed by variant item,
  with ``t1_base`` / ``t2_base`` mapping a variant item to its base item;
- ``ifeval``: IFEval prompt-level strict, keyed by prompt;
- ``bfcl`` / ``bfcl_augmented``: BFCL live_simple on the original and on held-out-augmented
  schemas, both keyed by the original case id.

Every interval is ``eval_stats``'s percentile bootstrap (its default resamples, seed 0, 95%);
comparisons between models are paired on the items both answered. "Harness-Variant QA" is
T1 and T2 pooled, resampled by base item (a base item's variants move together).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from training_app.evals.eval_stats import (
    BootstrapEstimate,
    ErrorReduction,
    PairedDifference,
    bootstrap_mean,
    detected_errors,
    error_reduction,
    paired_bootstrap,
    variant_gap,
)


@dataclass
class ModelScores:
    label: str
    live: dict[str, float] = field(default_factory=dict)
    t1: dict[str, float] = field(default_factory=dict)
    t1_base: dict[str, str] = field(default_factory=dict)
    t2: dict[str, float] = field(default_factory=dict)
    t2_base: dict[str, str] = field(default_factory=dict)
    ifeval: dict[str, float] = field(default_factory=dict)
    bfcl: dict[str, float] = field(default_factory=dict)
    bfcl_augmented: dict[str, float] = field(default_factory=dict)

    def variants(self) -> tuple[dict[str, float], dict[str, str]]:
        """T1 and T2 pooled: keys ``t1:<id>`` / ``t2:<id>`` -> score, and -> base item."""
        scores = {f"t1:{k}": v for k, v in self.t1.items()}
        scores |= {f"t2:{k}": v for k, v in self.t2.items()}
        bases = {f"t1:{k}": self.t1_base.get(k, k) for k in self.t1}
        bases |= {f"t2:{k}": self.t2_base.get(k, k) for k in self.t2}
        return scores, bases

    def harness_variant_by_base(self) -> dict[str, float]:
        """Each base item's mean score over its T1 and T2 variants."""
        scores, bases = self.variants()
        sums: dict[str, list[float]] = {}
        for key, value in scores.items():
            sums.setdefault(bases[key], []).append(value)
        return {base: sum(v) / len(v) for base, v in sums.items()}

    def live_to_variant_drop(self) -> dict[str, float]:
        """Per base item with variants: Live-Stream score minus its variants' mean."""
        variant = self.harness_variant_by_base()
        return {k: self.live[k] - variant[k] for k in self.live if k in variant}


@dataclass(frozen=True)
class ScoreRow:
    label: str
    live: BootstrapEstimate
    harness_variant: BootstrapEstimate
    t1: BootstrapEstimate
    t2: BootstrapEstimate
    ifeval: BootstrapEstimate
    bfcl: BootstrapEstimate
    bfcl_augmented: BootstrapEstimate


def score_row(scores: ModelScores) -> ScoreRow:
    variant_scores, bases = scores.variants()
    keys = list(variant_scores)
    return ScoreRow(
        label=scores.label,
        live=bootstrap_mean(list(scores.live.values())),
        harness_variant=bootstrap_mean(
            [variant_scores[k] for k in keys], clusters=[bases[k] for k in keys]
        ),
        t1=bootstrap_mean(list(scores.t1.values())),
        t2=bootstrap_mean(list(scores.t2.values())),
        ifeval=bootstrap_mean(list(scores.ifeval.values())),
        bfcl=bootstrap_mean(list(scores.bfcl.values())),
        bfcl_augmented=bootstrap_mean(list(scores.bfcl_augmented.values())),
    )


@dataclass(frozen=True)
class Comparison:
    """One comparison the study reports: what, between whom, and its interval."""

    name: str
    a: str
    b: str
    result: PairedDifference | ErrorReduction

    @property
    def excludes_zero(self) -> bool:
        low, high = self.result.ci_low, self.result.ci_high
        return bool(low == low and high == high and (low > 0 or high < 0))

    @property
    def half_width(self) -> float:
        """Half the interval's width: about the smallest difference this comparison's items
        resolve (a true difference this large or larger would usually exclude 0)."""
        return (self.result.ci_high - self.result.ci_low) / 2

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "model_a": self.a,
            "model_b": self.b,
            "excludes_zero": self.excludes_zero,
            "half_width": self.half_width,
            **asdict(self.result),
        }


def drop_comparison(a: ModelScores, b: ModelScores) -> Comparison:
    """The Live-Stream -> Harness-Variant drop of ``b`` minus that of ``a``, paired by base
    item (negative: ``b`` loses less under held-out edits)."""
    result = paired_bootstrap(
        a.live_to_variant_drop(), b.live_to_variant_drop(), allow_unmatched=True
    )
    return Comparison("live_to_variant_drop", a.label, b.label, result)


def drop_of(scores: ModelScores) -> Comparison:
    """One model's Live-Stream -> Harness-Variant drop (variant mean minus live, paired by
    base item: negative is a drop)."""
    live = {k: v for k, v in scores.live.items() if k in scores.harness_variant_by_base()}
    result = paired_bootstrap(live, scores.harness_variant_by_base(), allow_unmatched=True)
    return Comparison("variant_minus_live", scores.label, scores.label, result)


def t1_t2_gap(scores: ModelScores) -> Comparison:
    """T1 minus T2 (paired by base item when both sets cover the same ones)."""
    result = variant_gap(
        scores.t1, scores.t2, t1_base_ids=scores.t1_base, t2_base_ids=scores.t2_base
    )
    return Comparison("t1_minus_t2", scores.label, scores.label, result)


def versus(base: ModelScores, other: ModelScores, metric: str) -> Comparison:
    """``other`` minus ``base`` on one set (``ifeval``, ``live``, ``bfcl``, ...), paired."""
    a: Mapping[str, float] = getattr(base, metric)
    b: Mapping[str, float] = getattr(other, metric)
    result = paired_bootstrap(a, b, allow_unmatched=True)
    return Comparison(metric, base.label, other.label, result)


def bfcl_augmentation_drop(scores: ModelScores) -> Comparison:
    """BFCL accuracy on augmented schemas minus on the original ones, paired by case."""
    result = paired_bootstrap(scores.bfcl, scores.bfcl_augmented, allow_unmatched=True)
    return Comparison("bfcl_augmented_minus_original", scores.label, scores.label, result)


def errors_reduction(base: ModelScores, other: ModelScores) -> Comparison:
    """Relative reduction of errors under held-out edits (a variant failing while its base
    item passes on the original harness), ``other`` against ``base``, resampling base items."""
    counts = []
    common = set(base.live) & set(other.live)
    for model in (base, other):
        scores, bases = model.variants()
        keep = {k for k, b in bases.items() if b in common}
        counts.append(
            detected_errors(
                {k: bool(v) for k, v in model.live.items() if k in common},
                {k: bool(scores[k]) for k in keep},
                variant_base_ids={k: bases[k] for k in keep},
            )
        )
    return Comparison("error_reduction", base.label, other.label, error_reduction(*counts))


def study_comparisons(
    models: Mapping[str, ModelScores], *, base: str, fixed: str, hat: str
) -> list[Comparison]:
    """The comparisons issue #16 asks for, in the report's order, among the models given
    (a study cut short reports what it has)."""
    out = [drop_comparison(models[fixed], models[hat])] if fixed in models and hat in models else []
    if base not in models:
        return out
    out += [drop_of(m) for m in models.values()]
    out += [t1_t2_gap(m) for m in models.values()]
    out += [versus(models[base], m, "ifeval") for k, m in models.items() if k != base]
    out += [errors_reduction(models[base], m) for k, m in models.items() if k != base]
    out += [versus(models[base], m, "live") for k, m in models.items() if k != base]
    out += [bfcl_augmentation_drop(m) for m in models.values()]
    out += [versus(models[base], m, "bfcl_augmented") for k, m in models.items() if k != base]
    return out
