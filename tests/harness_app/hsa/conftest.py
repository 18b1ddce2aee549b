"""Fixtures for the HSA engine: the demo harness and gold trajectories over it. No database."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_app.harness.model import Harness
from harness_app.harness.serialization import harness_from_yaml
from harness_app.hsa.trajectory import GoldTrajectory, ToolCall

REPO_ROOT = Path(__file__).resolve().parents[3]
DEMO_HARNESS_PATH = REPO_ROOT / "harness_app" / "demo_data" / "live_stream_harness.yaml"


@pytest.fixture(scope="session")
def demo() -> Harness:
    return harness_from_yaml(DEMO_HARNESS_PATH.read_text("utf-8"))


@pytest.fixture(scope="session")
def product_gold() -> GoldTrajectory:
    """A viewer asks for the price and stock of the product on screen."""
    return GoldTrajectory(
        skill="product-qa",
        tool_calls=(
            ToolCall("get_product", {"sku": "SKU-1001"}, {"title": "Linen shirt", "price": 129.0}),
            ToolCall("check_stock", {"sku": "SKU-1001", "size": "M"}, {"stock": 12}),
        ),
        final_answer="The linen shirt is 129.00 CNY and size M is in stock.",
        comment="How much is the linen shirt, and is M in stock?",
        product_sku="SKU-1001",
        quoted_prices=(129.0,),
        catalog_prices=(129.0,),
    )


@pytest.fixture(scope="session")
def shipping_gold() -> GoldTrajectory:
    return GoldTrajectory(
        skill="after-sales",
        tool_calls=(ToolCall("get_shipping", {"sku": "SKU-1001", "region": "Zhejiang"}),),
        final_answer="Delivery to Zhejiang takes 2-3 days with SF Express.",
        comment="How long does shipping to Zhejiang take?",
    )
