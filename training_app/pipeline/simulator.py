"""The live-stream simulator HSA-RL trains in: viewer comments from the task records, the
room's catalog in memory, and the project's own ``HarnessAgent`` (text tool mode) with the
real ``ToolRunner`` executing tool calls, under one HSA variant of the task's harness.

``ProductCatalog`` implements ``inference.tools.catalog.CatalogGateway`` over product rows in
the demo catalog's CSV format (``harness_app/demo_data/products.csv``), answering in the same
shapes as the Django ``RoomCatalogGateway``; coupons come from the task golds' ``list_coupons``
results (the room's coupons when the golds were written). Webhook tools are refused: a
training simulator never calls a merchant's endpoints.

``LiveStreamSimulator.episode`` draws the harness variant: with a *training* HSA policy it
augments (harness, gold) through ``harness_app.hsa.augment`` (verified, task-preserving, the
gold rewritten to the variant's names); held-out policies are refused so evaluation variants
never leak into training; with no policy it is Fixed-Harness RL. The agent run itself and
the typed task record are ``harness_episode``'s, shared with the offline QA evaluation.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from harness_app.harness.model import Harness
from harness_app.harness.prompt import PromptLayout
from harness_app.harness.serialization import harness_from_dict
from harness_app.hsa.augment import AugmentationError, augment
from harness_app.hsa.policy import AugmentationPolicy
from harness_app.hsa.trajectory import GoldTrajectory, trajectory_to_dict
from inference.agents.model_port import ChatModel
from inference.agents.session import AgentConfig
from inference.trace import ReplyTrace
from training_app.pipeline.catalog_snapshot import (
    FREE_SHIPPING_FROM,
    SEARCH_LIMIT,
    STANDARD_SHIPPING,
)
from training_app.pipeline.harness_episode import (
    Task,
    TaskRecordError,
    argument_names,
    run_harness_agent,
    webhook_tools,
)

__all__ = [
    "Episode",
    "LiveStreamSimulator",
    "ProductCatalog",
    "SimulatorError",
    "Task",
    "coupons_from_tasks",
]


class SimulatorError(ValueError):
    """A task, harness or policy the simulator cannot run; the message says which."""


# --- the room's catalog ----------------------------------------------------------------------


# Not CatalogSnapshot: an empty search finds nothing here, and coupons are the golds' as recorded.
class ProductCatalog:
    def __init__(
        self,
        products: Iterable[Mapping[str, Any]],
        coupons: Sequence[Mapping[str, Any]] = (),
        currency: str = "USD",
    ) -> None:
        self._products = {str(p["sku"]): dict(p) for p in products}
        self._coupons = [dict(c) for c in coupons]
        self.currency = currency

    @classmethod
    def from_csv(
        cls, path: Path, coupons: Sequence[Mapping[str, Any]] = (), currency: str = "USD"
    ) -> ProductCatalog:
        rows = []
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                rows.append(
                    {
                        "sku": row["sku"],
                        "title": row["title"],
                        "price": Decimal(row["price"]),
                        "stock": int(row["stock"]),
                        "attributes": json.loads(row.get("attributes") or "{}"),
                    }
                )
        if not rows:
            raise SimulatorError(f"catalog {path} has no products")
        return cls(rows, coupons, currency)

    def _missing(self, sku: str) -> dict[str, Any]:
        return {"error": f"no product with SKU {sku!r} in this room's catalog"}

    def get_product(self, sku: str) -> dict[str, Any]:
        product = self._products.get(sku)
        if product is None:
            return self._missing(sku)
        attributes = dict(product["attributes"])
        attributes.pop("stock_by_size", None)
        return {
            "sku": product["sku"],
            "title": product["title"],
            "price": f"{product['price']:.2f}",
            "currency": self.currency,
            "in_stock": product["stock"] > 0,
            "on_sale": True,
            **attributes,
        }

    def check_stock(self, sku: str, size: str | None = None) -> dict[str, Any]:
        product = self._products.get(sku)
        if product is None:
            return self._missing(sku)
        by_size = product["attributes"].get("stock_by_size") or {}
        if size:
            if size not in by_size:
                sizes = ", ".join(by_size) or "none (this product has no sizes)"
                return {"error": f"{sku} has no size {size!r}; sizes: {sizes}"}
            return {"sku": sku, "size": size, "units": int(by_size[size])}
        return {"sku": sku, "units": product["stock"], "by_size": by_size or None}

    def list_coupons(self, sku: str | None = None) -> dict[str, Any]:
        coupons = [c for c in self._coupons if not sku or not c.get("sku") or c.get("sku") == sku]
        return {
            "currency": self.currency,
            "coupons": sorted(coupons, key=lambda c: str(c.get("code"))),
        }

    def get_shipping(self, sku: str, region: str) -> dict[str, Any]:
        product = self._products.get(sku)
        if product is None:
            return self._missing(sku)
        if not region.strip():
            return {"error": "region is required (a province or city)"}
        rules = product["attributes"].get("shipping") or {}
        cost = Decimal("0.00") if product["price"] >= FREE_SHIPPING_FROM else STANDARD_SHIPPING
        return {
            "sku": sku,
            "region": region,
            "carrier": rules.get("carrier", "SF Express"),
            "delivery_days": rules.get("delivery_days", "2-4"),
            "shipping_cost": f"{Decimal(str(rules.get('cost', cost))):.2f}",
            "currency": self.currency,
        }

    def search_products(self, query: str) -> dict[str, Any]:
        needle = query.strip().lower()
        matches = [p for p in self._products.values() if needle and needle in p["title"].lower()]
        return {
            "results": [
                {"sku": p["sku"], "title": p["title"], "price": f"{p['price']:.2f}"}
                for p in matches[:SEARCH_LIMIT]
            ]
        }


def coupons_from_tasks(tasks: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every coupon the golds' ``list_coupons`` results name, once per code."""
    found: dict[str, dict[str, Any]] = {}
    for task in tasks:
        for call in task.get("gold", {}).get("tool_calls", ()):
            result = call.get("result") or {}
            for coupon in result.get("coupons", ()) if isinstance(result, Mapping) else ():
                if isinstance(coupon, Mapping) and coupon.get("code"):
                    found.setdefault(str(coupon["code"]), dict(coupon))
    return list(found.values())


# --- episodes --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Episode:
    """One task under one harness variant; ``gold`` is rewritten to the variant."""

    task: Task
    harness: Harness
    gold: GoldTrajectory
    variant: Mapping[str, Any]
    prompt_layout: PromptLayout = "markdown"
    # variant tool -> {variant parameter: the name the catalog operation reads}
    argument_names: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    @property
    def gold_dict(self) -> dict[str, Any]:
        return trajectory_to_dict(self.gold)


class LiveStreamSimulator:
    def __init__(
        self,
        *,
        harnesses: Mapping[str, Mapping[str, Any]],
        tasks: Sequence[Mapping[str, Any]],
        catalog: ProductCatalog,
        policy: AugmentationPolicy | None,
        agent_config: AgentConfig,
        max_augment_tries: int = 4,
    ) -> None:
        if agent_config.tool_mode != "text":
            raise SimulatorError("the simulator runs the agent in text tool mode")
        self.harnesses = {key: harness_from_dict(value) for key, value in harnesses.items()}
        for key, harness in self.harnesses.items():
            webhooks = webhook_tools(harness)
            if webhooks:
                raise SimulatorError(
                    f"harness {key}: webhook tools {', '.join(webhooks)} "
                    "cannot run in the simulator"
                )
        try:
            self.tasks = [Task.from_record(t) for t in tasks]
        except TaskRecordError as exc:
            raise SimulatorError(str(exc)) from None
        if not self.tasks:
            raise SimulatorError("no tasks to simulate")
        missing = sorted({t.harness_id for t in self.tasks} - set(self.harnesses))
        if missing:
            raise SimulatorError(f"tasks refer to unknown harness ids: {', '.join(missing)}")
        self.catalog = catalog
        self.policy = policy
        self.agent_config = agent_config
        self.max_augment_tries = max_augment_tries

    def episode(self, index: int, seed: int) -> Episode:
        """Task ``index`` under the variant drawn with ``seed`` (the original harness when
        there is no policy, or when no try verifies: recorded in ``variant``)."""
        task = self.tasks[index]
        harness = self.harnesses[task.harness_id]
        if self.policy is None:
            return Episode(task, harness, task.gold, {"policy": None})
        problems: list[str] = []
        for attempt in range(self.max_augment_tries):
            try:
                example = augment(harness, task.gold, self.policy, seed + attempt)
            except AugmentationError as exc:
                problems.append(str(exc))
                continue
            return Episode(
                task,
                example.harness,
                example.trajectory,
                example.provenance,
                example.prompt_layout,
                argument_names(example.mapping),
            )
        return Episode(
            task, harness, task.gold, {"policy": self.policy.name, "unaugmented": problems[-1:]}
        )

    def run(self, episode: Episode, model: ChatModel, *, deadline_s: float = 600.0) -> ReplyTrace:
        return run_harness_agent(
            harness=episode.harness,
            catalog=self.catalog,
            model=model,
            config=self.agent_config,
            comment=episode.task.comment,
            context=episode.task.context,
            prompt_layout=episode.prompt_layout,
            # catalog tools whose parameters HSA renamed get their arguments under the names
            # the catalog reads (the live ToolRunner passes them by the original names)
            offline=True,
            names=episode.argument_names,
            deadline_s=deadline_s,
        )
