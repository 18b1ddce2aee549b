"""docs/HSA.md quotes these exact outputs; if a bank or a transform changes, update the docs."""

from __future__ import annotations

from harness_app.harness.model import Harness, Hook
from harness_app.hsa.augment import augment
from harness_app.hsa.policy import AugmentationPolicy
from harness_app.hsa.trajectory import GoldTrajectory


def only(name: str) -> AugmentationPolicy:
    return AugmentationPolicy(name=name, weights=(), k=0, always=(name,))


def test_worked_examples_in_the_docs(demo: Harness, product_gold: GoldTrajectory) -> None:
    gold = product_gold
    synonyms = augment(demo, gold, only("skill_ids.synonyms"), 1)
    assert synonyms.mapping.skill_renames == {
        "product-qa": "item-faq",
        "promo-push": "deal-announce",
        "size-advice": "sizing-guide",
        "after-sales": "post-purchase",
    }
    tools = augment(demo, gold, only("tool_schemas.rename_tools"), 4)
    assert tools.mapping.tool_renames == {
        "get_product": "GetProduct",
        "check_stock": "check.stock",
        "list_coupons": "list-coupons",
        "get_shipping": "getShipping",
    }
    params = augment(demo, gold, only("tool_schemas.rename_params"), 6)
    assert params.mapping.param_renames["check_stock"] == {"sku": "codigo", "size": "talla"}
    titles = augment(demo, gold, only("prompt_structure.retitle_sections"), 0)
    assert [s.title for s in titles.harness.prompt.sections][-1] == "Compliance rules"
    length = Hook("reply-length", "pre_reply", "size(reply) > 280", feedback="Too long.")
    with_hook = Harness(demo.skills, demo.tools, demo.prompt, (*demo.hooks, length))
    varied = augment(with_hook, gold, only("hook_functions.vary_thresholds"), 0)
    assert varied.harness.hooks[2].condition == "size(reply) > 350"
