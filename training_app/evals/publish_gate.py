"""The harness-edit safety gate, pure part: a QA set moved onto a candidate harness, and the
verdict on the candidate against the published version.

Before an edit goes on air, the room's quick QA set runs on the published version and on the
candidate (plus a held-out HSA variant of the candidate: does the model survive the *next*
edit too?). The set's golds name the tools and skills of the harness it was built on, so
each item is first moved onto the harness it runs on (``retarget_qa_set``):

- a tool the edit renamed is followed (``edit_renames``): a removed tool and an added one with
  the same executor (catalog operation, or webhook URL) are the same tool, when that pairing
  is one-to-one; a removed skill and an added one with the same body likewise;
- a tool or skill the edit removed stays in the gold as it was, so the item fails for every
  model: the edit broke it, which is what the gate is for;
- parameter renames are not followed: a catalog operation reads its own argument names, so a
  renamed parameter breaks the tool on air as well (``harness_warnings`` says so).

``gate_verdict`` pairs the runs on ``base_id`` and, for each arm, takes the paired bootstrap
of its pass rate minus the published version's. The candidate arm decides: **block** when its
drop is at least ``block_drop_points`` *and* the interval excludes no change (the drop is
real, not noise of a small set); **warn** when the drop is at least ``warn_drop_points`` (or a
block-sized drop the interval cannot confirm); **pass** otherwise. Variant arms only warn.
Nothing here imports Django.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from harness_app.harness.model import Harness, Skill, Tool
from harness_app.harness.serialization import harness_from_dict, harness_to_dict
from harness_app.hsa.mapping import RenameMapping
from harness_app.hsa.trajectory import trajectory_from_dict, trajectory_to_dict
from training_app.evals.eval_stats import paired_bootstrap
from training_app.evals.qa_sets import QAItem, QASet, QASetError, harness_ref

Decision = Literal["pass", "warn", "block"]
DECISIONS: tuple[str, ...] = ("pass", "warn", "block")
CANDIDATE_ARM = "candidate"


def _pairs(removed: Sequence[Any], added: Sequence[Any], key: Any) -> dict[str, str]:
    """old name -> new name for removed/added items whose ``key`` matches one-to-one."""
    out: dict[str, str] = {}
    for old in removed:
        matches = [new for new in added if key(new) == key(old)]
        partners = [other for other in removed if key(other) == key(old)]
        if len(matches) == 1 and len(partners) == 1:
            out[old.name] = matches[0].name
    return out


def _tool_key(tool: Tool) -> tuple[str, str, str]:
    return (tool.executor.kind, tool.executor.operation, tool.executor.url)


def _skill_key(skill: Skill) -> str:
    return skill.body


def edit_renames(old: Harness, new: Harness) -> RenameMapping:
    """The tool and skill renames from ``old`` to ``new`` (see the module docstring)."""
    new_tools = {t.name for t in new.tools}
    old_tools = {t.name for t in old.tools}
    new_skills = {s.name for s in new.skills}
    old_skills = {s.name for s in old.skills}
    return RenameMapping(
        tool_renames=_pairs(
            [t for t in old.tools if t.name not in new_tools],
            [t for t in new.tools if t.name not in old_tools],
            _tool_key,
        ),
        skill_renames=_pairs(
            [s for s in old.skills if s.name not in new_skills],
            [s for s in new.skills if s.name not in old_skills],
            _skill_key,
        ),
    )


def retarget_qa_set(qa_set: QASet, harness: Harness | Mapping[str, Any], *, name: str) -> QASet:
    """``qa_set``'s items on ``harness``, golds rewritten through the edit's renames. Only a
    Live-Stream set (items on their own harness, not on HSA variants) can be moved."""
    if qa_set.kind != "live_stream_qa":
        raise QASetError(
            f"only a live_stream_qa set can move to another harness; not {qa_set.kind}"
        )
    data = harness_to_dict(harness) if isinstance(harness, Harness) else dict(harness)
    target = harness_from_dict(data)
    ref = harness_ref(data)
    mappings: dict[str, RenameMapping] = {}
    items: list[QAItem] = []
    for item in qa_set.items:
        if item.harness_ref not in mappings:
            mappings[item.harness_ref] = edit_renames(qa_set.harness_for(item), target)
        mapping = mappings[item.harness_ref]
        gold = trajectory_to_dict(mapping.apply(trajectory_from_dict(item.gold)))
        items.append(replace(item, gold=gold, harness_ref=ref))
    return QASet(
        kind="live_stream_qa",
        name=name,
        items=tuple(items),
        harnesses={ref: data},
        catalog=qa_set.catalog,
        seed=qa_set.seed,
        source={
            **dict(qa_set.source),
            "retargeted_from": qa_set.content_hash,
            "renames": {src: m.to_dict() for src, m in mappings.items()},
        },
    )


@dataclass(frozen=True)
class GateThresholds:
    """A room's thresholds, in pass-rate points (0-100)."""

    warn_drop_points: float = 5.0
    block_drop_points: float = 10.0
    confidence: float = 0.95
    resamples: int = 2000
    seed: int = 0

    def problems(self) -> dict[str, str]:
        out: dict[str, str] = {}
        if not 0 <= self.warn_drop_points <= 100:
            out["warn_drop_points"] = "must be between 0 and 100 points"
        if not 0 < self.block_drop_points <= 100:
            out["block_drop_points"] = "must be more than 0 and at most 100 points"
        elif self.block_drop_points < self.warn_drop_points:
            out["block_drop_points"] = "must be at least the warning threshold"
        return out


@dataclass(frozen=True)
class ArmDelta:
    """One arm against the published version, in points; ``newly_failing`` are base ids
    that pass on the published version and fail on this arm."""

    arm: str
    n: int
    baseline_rate: float
    arm_rate: float
    delta_points: float
    ci_low: float
    ci_high: float
    p_value: float
    newly_failing: tuple[str, ...]
    newly_passing: tuple[str, ...]
    decision: Decision


@dataclass(frozen=True)
class GateVerdict:
    decision: Decision
    reasons: tuple[str, ...]
    arms: tuple[ArmDelta, ...]
    thresholds: GateThresholds

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _arm_decision(delta: float, ci_high: float, t: GateThresholds, *, may_block: bool) -> Decision:
    drop = -delta
    if may_block and drop >= t.block_drop_points and ci_high < 0:
        return "block"
    if drop >= t.warn_drop_points and drop > 0:
        return "warn"
    return "pass"


def gate_verdict(
    baseline: Mapping[str, bool],
    arms: Mapping[str, Mapping[str, bool]],
    thresholds: GateThresholds | None = None,
) -> GateVerdict:
    """The verdict on ``arms`` (arm -> {base_id: passed}; ``CANDIDATE_ARM`` decides) against
    the published version's ``baseline`` ({base_id: passed}). An arm is compared on the
    items both ran (a variant set may skip an item it could not vary)."""
    t = thresholds or GateThresholds()
    if CANDIDATE_ARM not in arms:
        raise ValueError(f"the arms need a {CANDIDATE_ARM!r} arm")
    deltas: list[ArmDelta] = []
    reasons: list[str] = []
    for arm, results in arms.items():
        common = sorted(set(baseline) & set(results))
        if not common:
            raise ValueError(f"arm {arm!r} shares no item with the published version's run")
        a = {k: float(baseline[k]) for k in common}
        b = {k: float(results[k]) for k in common}
        diff = paired_bootstrap(
            a, b, resamples=t.resamples, seed=t.seed, confidence=t.confidence
        ).scaled(100.0)
        decision = _arm_decision(diff.estimate, diff.ci_high, t, may_block=arm == CANDIDATE_ARM)
        deltas.append(
            ArmDelta(
                arm=arm,
                n=len(common),
                baseline_rate=diff.mean_a,
                arm_rate=diff.mean_b,
                delta_points=diff.estimate,
                ci_low=diff.ci_low,
                ci_high=diff.ci_high,
                p_value=diff.p_value,
                newly_failing=tuple(k for k in common if baseline[k] and not results[k]),
                newly_passing=tuple(k for k in common if results[k] and not baseline[k]),
                decision=decision,
            )
        )
        if decision != "pass":
            reasons.append(
                f"{arm}: pass rate {diff.mean_b:.1f}% vs {diff.mean_a:.1f}% published "
                f"({diff.estimate:+.1f} points, {100 * t.confidence:.0f}% CI "
                f"{diff.ci_low:+.1f} to {diff.ci_high:+.1f}); "
                + (
                    f"a drop of at least {t.block_drop_points:g} points that the interval confirms"
                    if decision == "block"
                    else f"a drop of at least {t.warn_drop_points:g} points"
                )
            )
    order = {"pass": 0, "warn": 1, "block": 2}
    overall: Decision = max((d.decision for d in deltas), key=order.__getitem__)
    return GateVerdict(decision=overall, reasons=tuple(reasons), arms=tuple(deltas), thresholds=t)
