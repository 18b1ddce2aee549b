"""One viewer comment answered by the production ``HarnessAgent`` over an in-memory catalog:
the piece the HSA-RL simulator and the offline QA evaluation share.

- ``Task``: a task record (``task_set`` format) as typed values: the comment, the live
  context the agent is given, the gold trajectory.
- ``webhook_tools``: the tools of a harness that would call a merchant's endpoint; neither
  training nor evaluation may call them.
- ``OfflineToolRunner``: the runtime ``ToolRunner`` for evaluation on HSA variants. A catalog
  tool whose parameters were renamed (``sku`` -> ``article_number``) is validated against the
  variant's schema, exactly as in serving, and the catalog operation then gets the names it
  reads; without this a model calling a renamed tool correctly would get "no product with SKU
  ''" back, because catalog executors read fixed argument names
  (``inference.tools.catalog.call_catalog``). Webhook tools (HSA's distractor tools are
  webhooks) are answered with an error and never called.
- ``run_harness_agent``: build the tool runner and the agent (text or native tool mode,
  hooks, ``load_skill``, the variant's prompt layout) and answer one comment.

Pure Python: no Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness_app.harness.model import Harness, Tool
from harness_app.harness.prompt import PromptLayout
from harness_app.hsa.mapping import RenameMapping
from harness_app.hsa.trajectory import GoldTrajectory, trajectory_from_dict
from inference.agents.harness_agent import HarnessAgent
from inference.agents.model_port import ChatModel
from inference.agents.session import AgentConfig, LiveContext
from inference.tools.catalog import CatalogGateway, call_catalog
from inference.tools.runner import ToolOutcome, ToolRunner, argument_errors
from inference.trace import ReplyTrace

# Catalog argument names per tool: {variant tool name: {variant parameter: catalog parameter}}.
ArgumentNames = Mapping[str, Mapping[str, str]]


class TaskRecordError(ValueError):
    """A task record with the wrong shape; the message names the task and the problem."""


@dataclass(frozen=True)
class Task:
    id: str
    harness_id: str
    comment: str
    context: LiveContext
    gold: GoldTrajectory

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Task:
        try:
            return cls(
                id=str(record["id"]),
                harness_id=str(record["harness_id"]),
                comment=str(record["comment"]),
                context=live_context(record.get("context") or {}),
                gold=trajectory_from_dict(record["gold"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise TaskRecordError(f"task {record.get('id', '?')}: {exc}") from None


def live_context(context: Mapping[str, Any]) -> LiveContext:
    """A task record's ``context`` as the agent's ``LiveContext`` (values as strings,
    ``recent_comments`` a list of strings). Raises ``TypeError`` for an unknown key."""
    fields = dict(context)
    recent = tuple(str(c) for c in fields.pop("recent_comments", ()) or ())
    return LiveContext(**{k: str(v) for k, v in fields.items()}, recent_comments=recent)


def webhook_tools(harness: Harness) -> list[str]:
    """Names of the tools that are not catalog lookups (they would call a merchant)."""
    return [t.name for t in harness.tools if t.executor.kind != "catalog"]


def argument_names(mapping: RenameMapping) -> dict[str, dict[str, str]]:
    """For the harness ``mapping`` produced: variant tool -> {variant param: original param},
    the names a catalog operation reads."""
    return {tool: dict(renames) for tool, renames in mapping.inverse().param_renames.items()}


class OfflineToolRunner(ToolRunner):
    """``ToolRunner`` for runs that must stay offline (evaluation) on HSA variants.

    - Catalog tools whose parameters HSA renamed (``names``) receive their arguments under
      the names the catalog operation reads. Validation, and its error messages, which the
      model reads, use the variant's schema, so the model never sees an original name.
    - Webhook tools (an HSA distractor, a merchant endpoint) are never called: a valid call
      gets an error observation, as an unavailable endpoint would give.

    Everything else runs exactly as in ``ToolRunner``.
    """

    def __init__(
        self,
        tools: tuple[Tool, ...],
        catalog: CatalogGateway,
        *,
        names: ArgumentNames | None = None,
    ) -> None:
        super().__init__(tools, catalog, resolve_secret=no_secrets)
        self._by_name = {t.name: t for t in tools}
        self._gateway = catalog
        self._names = {tool: dict(renames) for tool, renames in (names or {}).items() if renames}

    def run(self, name: str, arguments: Any, *, budget_s: float | None = None) -> ToolOutcome:
        tool = self._by_name.get(name)
        renames = self._names.get(name)
        offline = tool is not None and tool.executor.kind != "catalog"
        if tool is None or not (renames or offline):
            return super().run(name, arguments, budget_s=budget_s)
        problems = argument_errors(tool, arguments)
        if problems:
            return ToolOutcome(
                False, {"error": "invalid arguments: " + "; ".join(problems)}, "invalid_arguments"
            )
        if offline:
            return ToolOutcome(False, {"error": f"tool {name!r} is unavailable"}, "tool_error")
        catalog_arguments = {(renames or {}).get(k, k): v for k, v in arguments.items()}
        result = call_catalog(self._gateway, tool.executor.operation, catalog_arguments)
        if "error" in result:
            return ToolOutcome(False, result, "tool_error")
        return ToolOutcome(True, result)


def run_harness_agent(
    *,
    harness: Harness,
    catalog: CatalogGateway,
    model: ChatModel,
    config: AgentConfig,
    comment: str,
    context: LiveContext,
    prompt_layout: PromptLayout = "markdown",
    offline: bool = False,
    names: ArgumentNames | None = None,
    deadline_s: float = 600.0,
) -> ReplyTrace:
    """The production ``HarnessAgent`` answering ``comment``, its tools run over ``catalog``
    (by ``OfflineToolRunner`` with ``names`` when ``offline``, else by the runtime's
    ``ToolRunner`` with no webhook secrets). Never raises for model or tool failures (they end
    in the trace's fallback)."""
    tools: ToolRunner
    if offline:
        tools = OfflineToolRunner(harness.tools, catalog, names=names)
    else:
        tools = ToolRunner(harness.tools, catalog, resolve_secret=no_secrets)
    agent = HarnessAgent(
        model=model, harness=harness, tools=tools, config=config, prompt_layout=prompt_layout
    )
    return agent.reply(comment, context, deadline_s=deadline_s)


def no_secrets(reference: str) -> str | None:
    """Secret resolver for runs that never call webhooks."""
    return None
