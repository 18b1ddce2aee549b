"""Run a harness's tools: validate arguments against the tool's input schema first (an invalid
call becomes an error observation for the model), then dispatch to its executor."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from jsonschema.protocols import Validator

from harness_app.harness.model import Tool
from harness_app.harness.schema_validation import re2_validator
from harness_app.harness.webhook_address import AddressPolicy
from inference.tools.catalog import CatalogGateway, call_catalog
from inference.tools.webhook import SecretResolver, call_webhook


@dataclass(frozen=True)
class ToolOutcome:
    ok: bool
    result: dict[str, Any]
    error: str = ""


@lru_cache(maxsize=2048)
def _validator(schema_json: str) -> Validator:
    # RE2 for every regex keyword: the schema is a merchant's, the arguments a model's.
    return re2_validator(json.loads(schema_json))


def argument_errors(tool: Tool, arguments: Any) -> list[str]:
    """Schema violations of ``arguments`` for ``tool``, as short readable strings."""
    if not isinstance(arguments, dict):
        return [f"arguments must be a JSON object, got {type(arguments).__name__}"]
    validator = _validator(json.dumps(tool.input_schema, sort_keys=True))
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    out = []
    for error in errors[:5]:
        where = ".".join(str(p) for p in error.absolute_path) or "(arguments)"
        out.append(f"{where}: {error.message}")
    return out


class ToolRunner:
    def __init__(
        self,
        tools: tuple[Tool, ...],
        catalog: CatalogGateway,
        resolve_secret: SecretResolver,
        address_policy: AddressPolicy | None = None,
    ) -> None:
        self._tools = {t.name: t for t in tools}
        self._catalog = catalog
        self._resolve_secret = resolve_secret
        self._address_policy = address_policy or AddressPolicy()

    def run(self, name: str, arguments: Any, *, budget_s: float | None = None) -> ToolOutcome:
        """``budget_s``: what is left of the reply's deadline; a webhook gives up by then."""
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(sorted(self._tools)) or "none"
            return ToolOutcome(
                False, {"error": f"unknown tool {name!r}; tools: {known}"}, "unknown_tool"
            )
        problems = argument_errors(tool, arguments)
        if problems:
            return ToolOutcome(
                False, {"error": "invalid arguments: " + "; ".join(problems)}, "invalid_arguments"
            )
        if tool.executor.kind == "catalog":
            result = call_catalog(self._catalog, tool.executor.operation, arguments)
        else:
            result = call_webhook(
                url=tool.executor.url,
                tool_name=name,
                arguments=arguments,
                timeout_s=tool.executor.timeout_s,
                secret_ref=tool.executor.secret_ref,
                resolve_secret=self._resolve_secret,
                policy=self._address_policy,
                budget_s=budget_s,
            )
        if "error" in result:
            return ToolOutcome(False, result, "tool_error")
        return ToolOutcome(True, result)
