"""Fixtures for the pure harness package: no database, no Django."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_app.harness.model import Harness
from harness_app.harness.serialization import harness_from_yaml

REPO_ROOT = Path(__file__).resolve().parents[3]
DEMO_HARNESS_PATH = REPO_ROOT / "harness_app" / "demo_data" / "live_stream_harness.yaml"


@pytest.fixture(scope="session")
def live_harness() -> Harness:
    """The demo live-stream harness (product-qa, promo-push, size-advice, after-sales)."""
    return harness_from_yaml(DEMO_HARNESS_PATH.read_text("utf-8"))
