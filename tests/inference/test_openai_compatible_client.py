"""The OpenAI-compatible client against a scripted local server: parsing, streaming, timings,
retries (what is retried and what never is) and timeouts, with bounds stated per test."""

from __future__ import annotations

import json
import socket
import time
import tracemalloc
from collections.abc import Iterator

import pytest

from inference.clients.openai_compatible import (
    ClientConfig,
    ModelProtocolError,
    ModelRequestRejected,
    ModelTimeout,
    ModelUnavailable,
    OpenAICompatibleClient,
    Usage,
    _sse_data,
)
from tests.inference.scripted_server import (
    Drop,
    Hang,
    JsonReply,
    ScriptedServer,
    SseReply,
    Trickle,
    chunk,
    completion,
)

USAGE = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
MESSAGES = [{"role": "user", "content": "Is A-1 in stock?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "check_stock",
            "description": "Stock count for a SKU",
            "parameters": {"type": "object", "properties": {"sku": {"type": "string"}}},
        },
    }
]


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as running:
        yield running


def make_client(server: ScriptedServer, **overrides: object) -> OpenAICompatibleClient:
    settings: dict[str, object] = {
        "base_url": server.base_url,
        "model": "scripted-model",
        "connect_timeout_s": 1.0,
        "read_timeout_s": 5.0,
        "max_retries": 2,
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.05,
        "backoff_jitter": 0.0,
    }
    settings.update(overrides)
    return OpenAICompatibleClient(ClientConfig(**settings))  # type: ignore[arg-type]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --- non-streaming ---------------------------------------------------------------------------


def test_plain_completion_is_parsed_with_usage_and_timings(server: ScriptedServer) -> None:
    server.enqueue(JsonReply(completion("Yes, 3 left.", usage=USAGE)))
    with make_client(server) as client:
        result = client.chat(MESSAGES, max_tokens=32, temperature=0.0)

    assert result.content == "Yes, 3 left."
    assert result.tool_calls == []
    assert result.finish_reason == "stop"
    assert result.usage == Usage(prompt_tokens=12, completion_tokens=3, total_tokens=15)
    assert result.raw_model == "scripted-model"
    assert result.attempts == 1
    assert result.timings.ttft_s is not None
    assert 0 < result.timings.ttft_s <= result.timings.total_s < 2.0
    sent = server.requests[0].body
    assert server.requests[0].path == "/v1/chat/completions"
    assert sent["model"] == "scripted-model"
    assert sent["messages"] == MESSAGES
    assert sent["max_tokens"] == 32
    assert sent["temperature"] == 0.0
    assert sent["stream"] is False
    assert "stream_options" not in sent  # only meaningful for streams
    assert "tools" not in sent  # absent, not null: some servers reject "tools": null


def test_tool_calls_are_parsed_and_object_arguments_become_json(server: ScriptedServer) -> None:
    calls = [
        {
            "id": "call_a",
            "type": "function",
            "function": {"name": "check_stock", "arguments": '{"sku": "A-1"}'},
        },
        {
            "id": "call_b",
            "type": "function",
            "function": {"name": "check_stock", "arguments": {"sku": "B-2"}},
        },
    ]
    server.enqueue(JsonReply(completion(None, tool_calls=calls, finish_reason="tool_calls")))
    with make_client(server) as client:
        result = client.chat(MESSAGES, tools=TOOLS, tool_choice="auto")

    assert result.content == ""
    assert result.finish_reason == "tool_calls"
    assert [(c.id, c.name) for c in result.tool_calls] == [
        ("call_a", "check_stock"),
        ("call_b", "check_stock"),
    ]
    assert json.loads(result.tool_calls[0].arguments_json) == {"sku": "A-1"}
    assert json.loads(result.tool_calls[1].arguments_json) == {"sku": "B-2"}
    assert result.usage is None  # the server sent none: None, never zeros
    assert server.requests[0].body["tools"] == TOOLS
    assert server.requests[0].body["tool_choice"] == "auto"


def test_malformed_tool_call_arguments_are_kept_verbatim(server: ScriptedServer) -> None:
    # Broken JSON in arguments is the agent's to report back to the model, not a transport
    # failure: the client hands it over as it came.
    calls = [
        {
            "id": "c",
            "type": "function",
            "function": {"name": "check_stock", "arguments": '{"sku": '},
        }
    ]
    server.enqueue(JsonReply(completion(None, tool_calls=calls, finish_reason="tool_calls")))
    with make_client(server) as client:
        result = client.chat(MESSAGES, tools=TOOLS)
    assert result.tool_calls[0].arguments_json == '{"sku": '


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<html>oops</html>", "not JSON"),
        ({"object": "chat.completion"}, 'no "choices"'),
        ({"choices": [{"index": 0}]}, 'no "message"'),
        ({"choices": [{"message": {"content": 7}}]}, "not a string"),
        ({"choices": [{"message": {"tool_calls": [{"function": {}}]}}]}, "has no name"),
    ],
)
def test_malformed_responses_raise_protocol_errors(
    server: ScriptedServer, body: dict[str, object] | bytes, message: str
) -> None:
    server.enqueue(JsonReply(body))  # type: ignore[arg-type]
    with make_client(server) as client, pytest.raises(ModelProtocolError, match=message):
        client.chat(MESSAGES)
    assert len(server.requests) == 1  # a malformed 200 is never retried


def test_model_none_is_omitted_and_api_key_is_sent(server: ScriptedServer) -> None:
    seen: dict[str, str] = {}

    server.enqueue(JsonReply(completion("ok")))
    with make_client(server, model=None, api_key="sk-test") as client:
        original = client._http.send

        def spy(request, **kwargs):  # type: ignore[no-untyped-def]
            seen["auth"] = request.headers.get("authorization", "")
            return original(request, **kwargs)

        client._http.send = spy  # type: ignore[method-assign]
        client.chat(MESSAGES)
    assert "model" not in server.requests[0].body
    assert seen["auth"] == "Bearer sk-test"


# --- streaming -------------------------------------------------------------------------------


def test_stream_collects_text_ttft_and_final_usage_chunk(server: ScriptedServer) -> None:
    server.enqueue(
        SseReply(
            [
                chunk(role="assistant"),  # the role-only preamble does not count as a token
                chunk(content="Yes"),
                chunk(content=", 3"),
                chunk(content=" left."),
                chunk(finish_reason="stop"),
                chunk(no_choices=True, usage=USAGE),  # include_usage: a chunk with no choices
            ],
            first_delay_s=0.0,
            delay_s=0.15,
        )
    )
    deltas: list[str] = []
    with make_client(server) as client:
        result = client.chat(MESSAGES, stream=True, on_delta=deltas.append)

    assert result.content == "Yes, 3 left."
    assert deltas == ["Yes", ", 3", " left."]
    assert result.finish_reason == "stop"
    assert result.usage == Usage(12, 3, 15)
    ttft = result.timings.ttft_s
    assert ttft is not None
    # First content arrives one inter-chunk delay (0.15 s) after the preamble; the whole
    # stream takes five delays (0.75 s). Upper bounds leave room for a slow CI machine.
    assert 0.12 <= ttft < 0.6
    assert ttft < result.timings.total_s
    assert 0.7 <= result.timings.total_s < 2.5
    assert server.requests[0].body["stream"] is True
    assert server.requests[0].body["stream_options"] == {"include_usage": True}


def test_stream_usage_on_the_finish_chunk_like_transformers_serve(
    server: ScriptedServer,
) -> None:
    # transformers serve sends usage on the finish chunk and no [DONE] line.
    server.enqueue(
        SseReply(
            [
                chunk(role="assistant"),
                chunk(content="Hi"),
                chunk(finish_reason="length", usage=USAGE),
            ],
            done=False,
        )
    )
    with make_client(server, stream_include_usage=False) as client:
        result = client.chat(MESSAGES, stream=True)
    assert (result.content, result.finish_reason, result.usage) == (
        "Hi",
        "length",
        Usage(12, 3, 15),
    )
    assert "stream_options" not in server.requests[0].body


def test_stream_without_usage_gives_none(server: ScriptedServer) -> None:
    server.enqueue(SseReply([chunk(content="Hi"), chunk(finish_reason="stop")]))
    with make_client(server) as client:
        result = client.chat(MESSAGES, stream=True)
    assert result.usage is None
    assert result.content == "Hi"


def test_stream_assembles_tool_call_fragments_by_index(server: ScriptedServer) -> None:
    # vLLM's shape: id and name once, arguments in pieces, two calls interleaved by index.
    def frag(
        index: int, *, id: str | None = None, name: str | None = None, args: str | None = None
    ) -> dict[str, object]:
        function: dict[str, str] = {}
        if name is not None:
            function["name"] = name
        if args is not None:
            function["arguments"] = args
        out: dict[str, object] = {"index": index, "function": function}
        if id is not None:
            out.update(id=id, type="function")
        return out

    server.enqueue(
        SseReply(
            [
                chunk(role="assistant"),
                chunk(tool_calls=[frag(0, id="call_0", name="check_stock", args="")]),
                chunk(tool_calls=[frag(0, args='{"sku": ')]),
                chunk(tool_calls=[frag(1, id="call_1", name="get_product", args='{"sku": "B"}')]),
                chunk(tool_calls=[frag(0, args='"A-1"}')]),
                chunk(finish_reason="tool_calls", usage=USAGE),
            ]
        )
    )
    with make_client(server) as client:
        result = client.chat(MESSAGES, tools=TOOLS, stream=True)

    assert [(c.id, c.name, json.loads(c.arguments_json)) for c in result.tool_calls] == [
        ("call_0", "check_stock", {"sku": "A-1"}),
        ("call_1", "get_product", {"sku": "B"}),
    ]
    assert result.finish_reason == "tool_calls"
    assert result.timings.ttft_s is not None  # a tool-call delta counts as the first token


def test_stream_reasoning_content_is_kept_apart(server: ScriptedServer) -> None:
    server.enqueue(
        SseReply(
            [
                {"choices": [{"index": 0, "delta": {"reasoning_content": "The user asks..."}}]},
                chunk(content="Yes."),
                chunk(finish_reason="stop"),
            ]
        )
    )
    with make_client(server) as client:
        result = client.chat(MESSAGES, stream=True)
    assert result.content == "Yes."
    assert result.reasoning_content == "The user asks..."


def test_stream_error_event_is_unavailable(server: ScriptedServer) -> None:
    server.enqueue(SseReply([chunk(content="Hi"), {"error": "CUDA out of memory"}], done=False))
    with make_client(server) as client, pytest.raises(ModelUnavailable, match="out of memory"):
        client.chat(MESSAGES, stream=True)


def test_stream_with_malformed_chunk_is_protocol_error(server: ScriptedServer) -> None:
    server.enqueue(SseReply(["{not json"]))
    with make_client(server) as client, pytest.raises(ModelProtocolError, match="not JSON"):
        client.chat(MESSAGES, stream=True)


def test_stream_dropped_mid_way_is_unavailable_and_not_retried(server: ScriptedServer) -> None:
    server.enqueue(
        SseReply(
            [chunk(content="Hel"), chunk(content="lo"), chunk(finish_reason="stop")], drop_after=2
        ),
        JsonReply(completion("should not be requested")),
    )
    with make_client(server) as client, pytest.raises(ModelUnavailable) as caught:
        client.chat(MESSAGES, stream=True)
    # Tokens may already have reached the viewer through on_delta: never replay the call.
    assert len(server.requests) == 1
    assert caught.value.attempts == 1


def test_sse_parser_joins_multiline_data_and_skips_comments() -> None:
    lines = iter(
        [": keep-alive", "", "event: message", 'data: {"a":', "data: 1}", "", "data:[DONE]", ""]
    )
    assert list(_sse_data(lines)) == ['{"a":\n1}', "[DONE]"]


# --- retries ---------------------------------------------------------------------------------


def test_503_then_200_is_retried_once(server: ScriptedServer) -> None:
    server.enqueue(
        JsonReply({"error": {"message": "overloaded"}}, status=503),
        JsonReply(completion("ok", usage=USAGE)),
    )
    with make_client(server) as client:
        result = client.chat(MESSAGES)
    assert result.content == "ok"
    assert result.attempts == 2
    assert len(server.requests) == 2


@pytest.mark.parametrize("status", [502, 503, 504])
def test_gateway_errors_exhaust_retries_then_unavailable(
    server: ScriptedServer, status: int
) -> None:
    server.enqueue(*[JsonReply({"detail": "busy"}, status=status) for _ in range(5)])
    with make_client(server, max_retries=2) as client, pytest.raises(ModelUnavailable) as caught:
        client.chat(MESSAGES)
    assert len(server.requests) == 3  # 1 attempt + 2 retries
    assert caught.value.attempts == 3
    assert caught.value.status_code == status
    assert "busy" in str(caught.value)


@pytest.mark.parametrize("status", [400, 401, 404, 422, 429])
def test_4xx_is_rejected_and_never_retried(server: ScriptedServer, status: int) -> None:
    server.enqueue(
        JsonReply({"error": {"message": "maximum context length exceeded"}}, status=status),
        JsonReply(completion("unused")),
    )
    with make_client(server) as client, pytest.raises(ModelRequestRejected) as caught:
        client.chat(MESSAGES)
    assert len(server.requests) == 1
    assert caught.value.status_code == status
    assert caught.value.detail == "maximum context length exceeded"


def test_500_is_unavailable_and_not_retried(server: ScriptedServer) -> None:
    server.enqueue(JsonReply({"detail": "boom"}, status=500), JsonReply(completion("unused")))
    with make_client(server) as client, pytest.raises(ModelUnavailable, match="HTTP 500: boom"):
        client.chat(MESSAGES)
    assert len(server.requests) == 1


def test_dropped_connection_before_response_is_retried(server: ScriptedServer) -> None:
    server.enqueue(Drop(), JsonReply(completion("ok")))
    with make_client(server) as client:
        result = client.chat(MESSAGES)
    assert (result.content, result.attempts, len(server.requests)) == ("ok", 2, 2)


def test_connection_refused_exhausts_retries_quickly() -> None:
    config = ClientConfig(
        base_url=f"http://127.0.0.1:{free_port()}/v1",
        max_retries=3,
        backoff_base_s=0.01,
        backoff_max_s=0.02,
        backoff_jitter=0.0,
    )
    started = time.perf_counter()
    with OpenAICompatibleClient(config) as client, pytest.raises(ModelUnavailable) as caught:
        client.chat(MESSAGES)
    assert caught.value.attempts == 4
    assert "ConnectError" in str(caught.value)
    assert time.perf_counter() - started < 2.0


def test_backoff_is_exponential_capped_and_honours_retry_after(server: ScriptedServer) -> None:
    server.enqueue(
        JsonReply({}, status=503),
        JsonReply({}, status=503),
        JsonReply({}, status=503, headers={"Retry-After": "0.3"}),
        JsonReply({}, status=503),
        JsonReply(completion("ok")),
    )
    slept: list[float] = []
    config = ClientConfig(
        base_url=server.base_url,
        max_retries=4,
        backoff_base_s=0.1,
        backoff_max_s=0.35,
        backoff_jitter=0.0,
    )
    with OpenAICompatibleClient(config, sleep=slept.append) as client:
        result = client.chat(MESSAGES)
    assert result.attempts == 5
    # 0.1, 0.2, max(0.4 capped to 0.35, retry-after 0.3) = 0.35, then the cap again.
    assert slept == pytest.approx([0.1, 0.2, 0.35, 0.35])


# --- timeouts --------------------------------------------------------------------------------


def test_hanging_server_times_out_within_bounds_without_retry(server: ScriptedServer) -> None:
    server.enqueue(Hang(5.0), JsonReply(completion("unused")))
    started = time.perf_counter()
    with make_client(server, read_timeout_s=0.4) as client, pytest.raises(ModelTimeout):
        client.chat(MESSAGES)
    elapsed = time.perf_counter() - started
    assert 0.35 <= elapsed < 1.5
    assert len(server.requests) == 1  # the model may be working on it: no second request


def test_stream_that_stalls_after_a_token_times_out(server: ScriptedServer) -> None:
    server.enqueue(SseReply([chunk(content="Hi"), chunk(content=" there")], delay_s=2.0))
    started = time.perf_counter()
    with (
        make_client(server, read_timeout_s=0.3) as client,
        pytest.raises(ModelTimeout, match="after tokens arrived"),
    ):
        client.chat(MESSAGES, stream=True)
    assert time.perf_counter() - started < 1.5


def test_call_budget_bounds_a_trickling_stream(server: ScriptedServer) -> None:
    # Every chunk arrives within the read timeout, yet the whole reply would take 2 s:
    # the per-call budget (the live reply's deadline) still stops it at ~0.5 s.
    server.enqueue(SseReply([chunk(content=f"t{i} ") for i in range(10)], delay_s=0.2))
    started = time.perf_counter()
    with make_client(server, read_timeout_s=1.0) as client, pytest.raises(ModelTimeout):
        client.chat(MESSAGES, stream=True, timeout_s=0.5)
    assert 0.45 <= time.perf_counter() - started < 1.2


@pytest.mark.parametrize(
    "trickle",
    [
        Trickle(b": keep-alive\n", count=200, delay_s=0.05),  # SSE comments: skipped lines
        Trickle(b"\n", count=200, delay_s=0.05),  # blank lines
        Trickle(b"event: ping\n", count=200, delay_s=0.05),  # non-data fields
        Trickle(b"d", count=200, delay_s=0.05),  # bytes without any newline
    ],
    ids=["comments", "blank-lines", "other-fields", "bytes-without-newline"],
)
def test_trickled_lines_and_bytes_cannot_hold_a_stream_past_its_budget(
    server: ScriptedServer, trickle: Trickle
) -> None:
    # Every line or byte arrives well within the read timeout and none is a data line, so only
    # a deadline check on every line / piece read stops the call (it used to run 10 s).
    server.enqueue(trickle)
    with make_client(server, read_timeout_s=2.0) as client:
        started = time.perf_counter()
        with pytest.raises(ModelTimeout):
            client.chat(MESSAGES, stream=True, timeout_s=0.5)
        elapsed = time.perf_counter() - started
    assert 0.45 <= elapsed < 0.6


def test_each_socket_read_waits_at_most_until_the_budget_ends(server: ScriptedServer) -> None:
    # A comment every 0.6 s with a 5 s read timeout: after the first one at 0.6 s, the next
    # read must give up at the 1.0 s budget, not wait for the next comment at 1.2 s.
    server.enqueue(Trickle(b": keep-alive\n", count=10, delay_s=0.6))
    with make_client(server, read_timeout_s=5.0) as client:
        started = time.perf_counter()
        with pytest.raises(ModelTimeout):
            client.chat(MESSAGES, stream=True, timeout_s=1.0)
        elapsed = time.perf_counter() - started
    assert 0.95 <= elapsed < 1.1


@pytest.mark.parametrize("stream", [True, False])
def test_a_50_mb_body_is_refused_quickly_without_buffering_it(
    server: ScriptedServer, stream: bool
) -> None:
    megabyte = b"x" * (1024 * 1024)
    server.enqueue(Trickle(megabyte, count=50, content_type="application/json"))
    started = time.perf_counter()
    tracemalloc.start()
    try:
        with make_client(server) as client, pytest.raises(ModelProtocolError) as caught:
            client.chat(MESSAGES, stream=stream, timeout_s=10.0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "larger than 4194304 bytes" in str(caught.value)
    assert time.perf_counter() - started < 2.0
    assert peak < 16 * 1024 * 1024  # the 4 MiB cap plus decoding overhead, not 50 MB


def test_a_huge_error_body_is_read_only_as_far_as_the_message_needs(
    server: ScriptedServer,
) -> None:
    server.enqueue(JsonReply(b"overloaded " + b"x" * (50 * 1024 * 1024), status=500))
    started = time.perf_counter()
    with make_client(server) as client:
        tracemalloc.start()
        try:
            with pytest.raises(ModelUnavailable) as caught:
                client.chat(MESSAGES, timeout_s=10.0)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert "HTTP 500: overloaded" in str(caught.value)
    assert time.perf_counter() - started < 2.0
    assert peak < 4 * 1024 * 1024  # 64 KiB of it is read, not 50 MB


def test_budget_too_small_for_backoff_raises_timeout(server: ScriptedServer) -> None:
    server.enqueue(JsonReply({}, status=503), JsonReply(completion("unused")))
    with (
        make_client(server, backoff_base_s=1.0, backoff_max_s=1.0) as client,
        pytest.raises(ModelTimeout, match="no time left") as caught,
    ):
        client.chat(MESSAGES, timeout_s=0.5)
    assert caught.value.attempts == 1
    assert len(server.requests) == 1


# --- models ----------------------------------------------------------------------------------


def test_list_models_and_unreachable_server() -> None:
    with ScriptedServer(models=["a", "b"]) as running, make_client(running) as client:
        assert client.list_models() == ["a", "b"]
    config = ClientConfig(base_url=f"http://127.0.0.1:{free_port()}/v1")
    with OpenAICompatibleClient(config) as client, pytest.raises(ModelUnavailable):
        client.list_models(timeout_s=1.0)


def test_invalid_config_is_rejected() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        ClientConfig(base_url="http://x/v1", max_retries=-1)
    with pytest.raises(ValueError, match="timeouts"):
        ClientConfig(base_url="http://x/v1", read_timeout_s=0)
