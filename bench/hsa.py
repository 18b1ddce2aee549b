"""Harness-State Augmentation throughput, beside the floor of merely copying the harness.

Figure: augmented (harness, gold trajectory) pairs per second on one core for a 20-skill,
30-tool harness (the demo live-stream harness grown with generated skills and tools, 4 hooks
including a numeric threshold and a tool matcher), with the train policy (k=3) and full
verification of every pair (harness rules, arguments against schemas, hook decisions on the
gold trajectory, constraint lines, mapping inversion). Gold trajectories cycle through a pool
of 8 so caches see realistic repetition. Baseline: ``copy.deepcopy`` of the same harness.
Target: >= 2,000 pairs/s. Times are CPU time of this process (``time.process_time``), so
other load on the machine does not distort the per-core figure.
"""

from __future__ import annotations

import copy
import gc
import statistics
import time
from pathlib import Path

from harness_app.harness.model import Harness, Hook, Prompt, Skill, Tool, ToolExecutor
from harness_app.harness.serialization import harness_from_yaml
from harness_app.harness.validation import validate_harness
from harness_app.hsa.augment import augment
from harness_app.hsa.policy import HSA_TRAIN, AugmentationPolicy
from harness_app.hsa.trajectory import GoldTrajectory, ToolCall

DEMO = (
    Path(__file__).resolve().parent.parent
    / "harness_app"
    / "demo_data"
    / "live_stream_harness.yaml"
)
TARGET_PAIRS_PER_SECOND = 2000
_VERBS = ("get", "check", "list", "search", "update", "create")
_NOUNS = (
    "order",
    "review",
    "bundle",
    "gift_card",
    "warranty",
    "livestream_slot",
    "size_chart",
    "invoice",
    "price_history",
    "member",
)
_TOPICS = (
    "gift-wrapping",
    "invoice-request",
    "warranty-claim",
    "bundle-offer",
    "price-history",
    "member-perks",
    "order-status",
    "review-summary",
    "restock-alert",
    "care-guide",
    "material-origin",
    "colour-match",
    "installment-plan",
    "pickup-point",
    "live-giveaway",
    "shop-hours",
)


def _tool(index: int) -> Tool:
    verb, noun = _VERBS[index % len(_VERBS)], _NOUNS[index % len(_NOUNS)]
    name = f"{verb}_{noun}" if index < 30 else f"{verb}_{noun}_{index}"
    properties: dict[str, object] = {
        "sku": {"type": "string", "minLength": 1, "description": "Product SKU, e.g. 'SKU-1001'."}
    }
    if index % 2:
        properties["limit"] = {"type": "integer", "minimum": 1, "maximum": 50}
    if index % 3 == 0:
        properties["channel"] = {"type": "string", "enum": ["app", "web", "live"]}
    return Tool(
        name=name,
        description=f"{verb.capitalize()} the {noun.replace('_', ' ')} data for a product.",
        input_schema={
            "type": "object",
            "properties": properties,
            "required": ["sku"],
            "additionalProperties": False,
        },
        executor=ToolExecutor(kind="catalog", operation="get_product"),
    )


def benchmark_harness() -> Harness:
    """The demo harness grown to 20 skills and 30 tools, with 4 hooks."""
    demo = harness_from_yaml(DEMO.read_text("utf-8"))
    extra_tools: list[Tool] = []
    index = 0
    names = {t.name for t in demo.tools}
    while len(demo.tools) + len(extra_tools) < 30:
        tool = _tool(index)
        index += 1
        if tool.name not in names:
            names.add(tool.name)
            extra_tools.append(tool)
    tools = (*demo.tools, *extra_tools)
    skills = list(demo.skills)
    for position, topic in enumerate(_TOPICS):
        first, second = extra_tools[position], extra_tools[(position + 7) % len(extra_tools)]
        skills.append(
            Skill(
                name=topic,
                description=f"Handle {topic.replace('-', ' ')} questions. Use when a viewer "
                f"asks about {topic.replace('-', ' ')}.",
                body=(
                    f"# {topic.replace('-', ' ').title()}\n\n"
                    f"1. Call {first.name} with the SKU of the product on screen.\n"
                    f"2. If the viewer names another product, call {second.name} for it too.\n"
                    "3. Answer in at most two short sentences.\n\n"
                    "Constraints:\n"
                    "- Never guess a number the tools did not return.\n"
                    "- Do not promise anything on behalf of the shop.\n"
                ),
                allowed_tools=(first.name, second.name),
            )
        )
    hooks = (
        *demo.hooks,
        Hook(
            name="reply-length",
            event="pre_reply",
            condition="size(reply) > 280",
            action="retry_with_feedback",
            feedback="Your reply is too long; keep it under 280 characters.",
        ),
        Hook(
            name="sku-required",
            event="pre_tool_use",
            condition='!has(args.sku) || args.sku == ""',
            matcher="get_*",
            action="block",
            feedback="Pass the SKU of the product.",
        ),
    )
    harness = Harness(tuple(skills), tools, Prompt(demo.prompt.sections), hooks)
    assert not validate_harness(harness), validate_harness(harness)
    return harness


def gold_pool(harness: Harness) -> list[GoldTrajectory]:
    """8 gold trajectories over different skills of ``harness``."""
    pool = [
        GoldTrajectory(
            skill="product-qa",
            tool_calls=(
                ToolCall("get_product", {"sku": "SKU-1001"}, {"price": 129.0}),
                ToolCall("check_stock", {"sku": "SKU-1001", "size": "M"}),
            ),
            final_answer="The linen shirt is 129.00 CNY and size M is in stock.",
            comment="How much is the linen shirt, and is M in stock?",
            quoted_prices=(129.0,),
            catalog_prices=(129.0,),
        ),
        GoldTrajectory(
            skill="after-sales",
            tool_calls=(ToolCall("get_shipping", {"sku": "SKU-1001", "region": "Zhejiang"}),),
            final_answer="Delivery to Zhejiang takes 2-3 days with SF Express.",
            comment="How long to Zhejiang?",
        ),
    ]
    for skill in harness.skills[4:10]:
        tool = harness.tool(skill.allowed_tools[0])
        assert tool is not None
        pool.append(
            GoldTrajectory(
                skill=skill.name,
                tool_calls=(ToolCall(tool.name, {"sku": "SKU-2002"}),),
                final_answer="Here is what the shop lists for that product.",
                comment=f"Question about {skill.name}",
            )
        )
    return pool


def measure_pairs_per_second(
    harness: Harness,
    pool: list[GoldTrajectory],
    policy: AugmentationPolicy,
    *,
    pairs: int,
    warmup: int = 1000,
    rounds: int = 1,
) -> float:
    """Median over ``rounds`` of pairs per CPU second, after ``warmup`` pairs (the caches of
    the original harness fill the way they do early in a data-generation run)."""
    for seed in range(warmup):
        augment(harness, pool[seed % len(pool)], policy, seed)
    rates = []
    for round_index in range(rounds):
        start = time.process_time()
        for seed in range(pairs):
            augment(harness, pool[seed % len(pool)], policy, 1_000_000 * (round_index + 1) + seed)
        rates.append(pairs / (time.process_time() - start))
    return statistics.median(rates)


def measure_deepcopy_per_second(harness: Harness, *, copies: int, rounds: int = 1) -> float:
    rates = []
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(copies):
            copy.deepcopy(harness)
        rates.append(copies / (time.process_time() - start))
    return statistics.median(rates)


def bfcl_pairs(category: str = "live_multiple") -> list[tuple[Harness, GoldTrajectory]]:
    """One (harness with all offered functions, gold with every ground-truth call) per case
    whose ground truth fits its functions."""
    from harness_app.harness.bfcl import tool_from_bfcl
    from harness_app.hsa.bfcl_augment import (
        GroundTruthCall,
        gold_from_ground_truth,
        ground_truth_problems,
        question_texts,
    )
    from harness_app.hsa.bfcl_data import load_category

    cases, answers = load_category(category)
    pairs = []
    for case in cases:
        tools = tuple(tool_from_bfcl(f) for f in case["function"])
        by_name = {tool.name: tool for tool in tools}
        calls = [GroundTruthCall.from_bfcl(e) for e in answers[case["id"]]["ground_truth"]]
        if any(c.name not in by_name or ground_truth_problems(by_name[c.name], c) for c in calls):
            continue
        gold = gold_from_ground_truth(tools, calls, "\n".join(question_texts(case["question"])))
        pairs.append((Harness(tools=tools), gold))
    return pairs


def _bfcl_rounds(
    pairs: list[tuple[Harness, GoldTrajectory]], rounds: int, seed_base: int
) -> tuple[float, float]:
    from harness_app.hsa.policy import BFCL_TOOL_SCHEMAS

    rates, floors = [], []
    for round_index in range(rounds):
        start = time.process_time()
        for index, (harness, gold) in enumerate(pairs):
            augment(harness, gold, BFCL_TOOL_SCHEMAS, seed_base * (round_index + 1) + index)
        rates.append(len(pairs) / (time.process_time() - start))
        start = time.process_time()
        for harness, _gold in pairs:
            copy.deepcopy(harness)
        floors.append(len(pairs) / (time.process_time() - start))
    return statistics.median(rates), statistics.median(floors)


def run_bfcl(rounds: int = 3) -> dict[str, float]:
    """live_multiple under ``bfcl-tool-schemas`` (every case once per round, a new seed per
    pair) beside ``copy.deepcopy`` of the same case harnesses, CPU time, after one warm-up
    pass; with the default garbage collector and after ``gc.freeze()`` (as a generation
    worker does once its data set is loaded). Target: >= 0.4x the deepcopy floor."""
    from harness_app.hsa.policy import BFCL_TOOL_SCHEMAS

    pairs = bfcl_pairs()
    for index, (harness, gold) in enumerate(pairs):
        augment(harness, gold, BFCL_TOOL_SCHEMAS, index)
    rate, floor = _bfcl_rounds(pairs, rounds, 1_000_000)
    gc.collect()
    gc.freeze()
    try:
        frozen, frozen_floor = _bfcl_rounds(pairs, rounds, 7_000_000)
    finally:
        gc.unfreeze()
    for label, r, f in (("default gc", rate, floor), ("after gc.freeze()", frozen, frozen_floor)):
        print(
            f"BFCL live_multiple ({len(pairs)} cases), {BFCL_TOOL_SCHEMAS.name}, {label:<17}"
            f" {r:>6.0f} pairs/s   floor copy.deepcopy {f:>6.0f}/s   {r / f:.2f}x the floor"
            " (target 0.4x)"
        )
    return {
        "bfcl_pairs_per_second": rate,
        "bfcl_deepcopy_per_second": floor,
        "bfcl_pairs_per_second_frozen": frozen,
        "bfcl_deepcopy_per_second_frozen": frozen_floor,
    }


def run(pairs: int = 600, rounds: int = 5) -> dict[str, float]:
    harness = benchmark_harness()
    pool = gold_pool(harness)
    print(
        f"harness: {len(harness.skills)} skills, {len(harness.tools)} tools, "
        f"{len(harness.hooks)} hooks; policy {HSA_TRAIN.name} (k={HSA_TRAIN.k}); "
        f"{len(pool)} gold trajectories; median of {rounds} rounds x {pairs} pairs, CPU time"
    )
    default_gc = measure_pairs_per_second(harness, pool, HSA_TRAIN, pairs=pairs, rounds=rounds)
    default_floor = measure_deepcopy_per_second(harness, copies=pairs // 2, rounds=rounds)
    # A generation worker freezes its long-lived objects (imports, the harness, warm caches)
    # after warm-up, so full garbage collections stop rescanning them.
    gc.collect()
    gc.freeze()
    try:
        frozen = measure_pairs_per_second(
            harness, pool, HSA_TRAIN, pairs=pairs, warmup=0, rounds=rounds
        )
        frozen_floor = measure_deepcopy_per_second(harness, copies=pairs // 2, rounds=rounds)
    finally:
        gc.unfreeze()
    for label, rate, floor in (
        ("default gc", default_gc, default_floor),
        ("after gc.freeze()", frozen, frozen_floor),
    ):
        print(
            f"{'augment + verify, ' + label:<40} {rate:>7.0f} pairs/s ({1e6 / rate:4.0f} µs)   "
            f"floor copy.deepcopy {floor:>7.0f}/s ({1e6 / floor:4.0f} µs)   "
            f"{rate / floor:.2f}x the floor"
        )
    verdict = "meets" if frozen >= TARGET_PAIRS_PER_SECOND else "MISSES"
    print(f"{verdict} the {TARGET_PAIRS_PER_SECOND} pairs/s target (after gc.freeze())")
    bfcl = run_bfcl()
    return bfcl | {
        "pairs_per_second": frozen,
        "pairs_per_second_default_gc": default_gc,
        "deepcopy_per_second": frozen_floor,
        "deepcopy_per_second_default_gc": default_floor,
    }


if __name__ == "__main__":
    run()
