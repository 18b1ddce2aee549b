"""Build the runtime objects a reply needs from database rows, and keep the expensive ones.

Harness versions are immutable, so their parsed content is cached by id; HTTP clients are
pooled per endpoint (and rebuilt when the endpoint is edited).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from functools import lru_cache

from harness_app.catalog_gateway import RoomCatalogGateway
from harness_app.harness.model import Harness as HarnessContent
from harness_app.harness.serialization import harness_from_dict
from harness_app.models import HarnessVersion, Room
from harness_app.webhook_secrets import address_policy, room_secret_resolver
from inference.agents.harness_agent import HarnessAgent
from inference.agents.openai_model import OpenAIChatModel
from inference.agents.react_agent import ReActAgent
from inference.agents.session import AgentConfig
from inference.clients.openai_compatible import ClientConfig, OpenAICompatibleClient
from inference.tools.runner import ToolRunner
from training_app.models import ModelEndpoint

_clients: dict[tuple[int, str], OpenAICompatibleClient] = {}
_clients_lock = threading.Lock()


@lru_cache(maxsize=256)
def _parsed(version_id: int, content_hash: str) -> HarnessContent:
    version = HarnessVersion.objects.only("content").get(pk=version_id)
    return harness_from_dict(version.content)


def harness_content(version: HarnessVersion) -> HarnessContent:
    return _parsed(
        version.pk,
        version.skills_hash + version.tools_hash + version.prompt_hash + version.hooks_hash,
    )


def endpoint_client(endpoint: ModelEndpoint) -> OpenAICompatibleClient:
    key = (endpoint.pk, endpoint.updated_at.isoformat())
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            for stale in [k for k in _clients if k[0] == endpoint.pk]:
                _clients.pop(stale).close()
            client = OpenAICompatibleClient(
                ClientConfig(
                    base_url=endpoint.base_url,
                    model=endpoint.model_name or None,
                    api_key=os.environ.get(endpoint.api_key_ref) if endpoint.api_key_ref else None,
                    read_timeout_s=endpoint.timeout_s,
                    # A live reply has a deadline; one quick retry on a dropped connection at most.
                    max_retries=1,
                )
            )
            _clients[key] = client
        return client


@dataclass(frozen=True)
class BuiltAgent:
    agent: HarnessAgent | ReActAgent
    gateway: RoomCatalogGateway


def build_agent(
    *, arm: str, room: Room, version: HarnessVersion, endpoint: ModelEndpoint
) -> BuiltAgent:
    content = harness_content(version)
    gateway = RoomCatalogGateway(room)
    # A webhook's secret_ref names a secret of this room only; never an environment variable.
    runner = ToolRunner(content.tools, gateway, room_secret_resolver(room), address_policy())
    model = OpenAIChatModel(endpoint_client(endpoint), endpoint.name)
    config = AgentConfig(
        max_tokens=endpoint.max_tokens,
        tool_mode="text" if endpoint.tool_mode == ModelEndpoint.ToolMode.TEXT else "native",
        fallback_reply=room.fallback_reply,
    )
    if arm == "react":
        baseline = room.react_baseline
        react_config = AgentConfig(
            max_steps=baseline.max_steps,
            max_tokens=endpoint.max_tokens,
            fallback_reply=room.fallback_reply,
        )
        return BuiltAgent(
            ReActAgent(
                model=model,
                system_prompt=baseline.system_prompt,
                tools=content.tools,
                runner=runner,
                config=react_config,
            ),
            gateway,
        )
    return BuiltAgent(
        HarnessAgent(model=model, harness=content, tools=runner, config=config), gateway
    )
