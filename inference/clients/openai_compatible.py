"""A synchronous chat-completions client for OpenAI-compatible servers.

One client serves every backend the console talks to: ``vllm serve`` in production, the
embedded ``transformers serve`` worker, and any hosted OpenAI-compatible API. It is built on
httpx rather than the ``openai`` SDK because the agent runtime needs things the SDK hides or
does differently: exact time-to-first-token, a hard per-call deadline that includes retries,
retries limited to failures that are safe to repeat, and errors typed by what the caller
should do next (fall back, give up, or fix the request).

Retry policy, and why:
- connection errors (refused, reset before a response, connect timeout) and HTTP 502/503/504
  are retried with exponential backoff: the request never reached a model, or a proxy /
  overloaded server said "try again";
- 4xx is never retried: the same request will be rejected again;
- a read timeout is not retried: the model was working on it and a retry would double the
  latency of a reply that is already late;
- a stream that breaks after tokens arrived is not retried: the caller may already have shown
  those tokens (``on_delta``).

Deadline: with a budget (``timeout_s`` / ``total_timeout_s``) the call ends by its deadline
whatever the server does. Every socket operation (connect, each read, each write, response
headers included) is given at most the time left (``_DeadlineBackend``), and every piece of a
body and every line of a stream (``:`` keep-alive comments, blank lines and other SSE fields
included) checks the deadline, so neither a hang nor a trickle of bytes or comments can hold
the call past it. Bodies are capped at ``max_response_bytes`` (and error bodies at 64 KiB), so
a huge answer costs neither memory nor time.

Timings: ``total_s`` and ``ttft_s`` are measured from the start of ``chat()`` (so they include
retries and backoff: the latency a viewer actually waits). In a stream, ``ttft_s`` is the
arrival of the first content / reasoning / tool-call delta (not the role-only preamble chunk
some servers send before generating). Without streaming the first token becomes visible with
the whole body, so ``ttft_s`` is the moment the body was read.
"""

from __future__ import annotations

import contextvars
import json
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpcore
import httpx

# --- results ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    """One tool call as the server parsed it; ``arguments_json`` is kept verbatim (a string)
    so that malformed arguments are the agent's to report, not a transport failure."""

    id: str
    name: str
    arguments_json: str


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


@dataclass(frozen=True)
class CallTimings:
    """Seconds since the call started; ``ttft_s`` is None when no token ever arrived."""

    ttft_s: float | None
    total_s: float


@dataclass(frozen=True)
class ChatResult:
    content: str
    tool_calls: list[ToolCall]
    finish_reason: str | None
    usage: Usage | None
    timings: CallTimings
    raw_model: str
    # Extensions beyond the brief's minimum: both are cheap to carry and needed by traces
    # (how many HTTP attempts the latency includes; a reasoning parser's separated CoT).
    attempts: int = 1
    reasoning_content: str | None = None


# --- errors ----------------------------------------------------------------------------------


class ModelCallError(Exception):
    """Base of every client failure. ``kind`` is a stable word for metrics and for adapting
    to other error vocabularies; ``attempts`` is how many HTTP attempts were made."""

    kind = "error"

    def __init__(self, message: str, *, attempts: int = 1, status_code: int | None = None):
        super().__init__(message)
        self.attempts = attempts
        self.status_code = status_code


class ModelTimeout(ModelCallError):
    """No (complete) answer within the read timeout or the call's deadline."""

    kind = "timeout"


class ModelUnavailable(ModelCallError):
    """The server could not be reached or failed: refused connection, retries exhausted,
    5xx, or a connection lost mid-stream."""

    kind = "unavailable"


class ModelProtocolError(ModelCallError):
    """The server answered 2xx with something that is not a chat completion."""

    kind = "protocol"


class ModelRequestRejected(ModelCallError):
    """4xx: the server refused this request (unknown model, context too long, bad field).
    Never retried; ``detail`` is the server's own message."""

    kind = "rejected"

    def __init__(self, message: str, *, attempts: int, status_code: int, detail: str):
        super().__init__(message, attempts=attempts, status_code=status_code)
        self.detail = detail


# --- configuration ---------------------------------------------------------------------------

RETRYABLE_STATUS = frozenset({502, 503, 504})


@dataclass(frozen=True)
class ClientConfig:
    """``base_url`` ends with the API version (``http://host:8000/v1``). ``model`` is sent
    as the request's ``model`` field; None omits it (servers pinned to one model accept that).

    ``max_retries`` counts retries after the first attempt. ``stream_include_usage`` asks for
    ``stream_options.include_usage``; servers that always send usage (transformers serve)
    ignore it, and it can be turned off for strict servers that reject unknown fields.
    """

    base_url: str
    model: str | None = None
    api_key: str | None = None
    connect_timeout_s: float = 3.0
    read_timeout_s: float = 60.0
    total_timeout_s: float | None = None
    max_retries: int = 2
    backoff_base_s: float = 0.25
    backoff_max_s: float = 4.0
    backoff_jitter: float = 0.1
    stream_include_usage: bool = True
    extra_headers: Mapping[str, str] = field(default_factory=dict)
    # A chat completion for a live reply is a few KiB; anything near this is a broken or
    # hostile server, answered as a protocol error instead of being buffered.
    max_response_bytes: int = 4 * 1024 * 1024

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if self.max_response_bytes <= 0:
            raise ValueError("max_response_bytes must be positive")
        if self.connect_timeout_s <= 0 or self.read_timeout_s <= 0:
            raise ValueError("timeouts must be positive")


DeltaCallback = Callable[[str], None]
MAX_ERROR_BODY_BYTES = 64 * 1024

# --- deadline-bounded sockets ----------------------------------------------------------------

# The absolute deadline (time.perf_counter()) of the attempt running in this context; the
# network backend clamps every socket operation's timeout to what is left of it.
_IO_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "openai_compatible_io_deadline", default=None
)


def _clamped(timeout: float | None, *, connect: bool = False) -> float | None:
    deadline = _IO_DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.perf_counter()
    if left <= 0:
        if connect:
            raise httpcore.ConnectTimeout("the call's deadline passed before connecting")
        raise httpcore.ReadTimeout("the call's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose every read and write waits at most until the call's deadline:
    httpcore fixes a read timeout once per response, so without this a server that sends a
    byte just inside each read timeout could hold a call for ever."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _clamped(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _clamped(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        return _DeadlineStream(
            self._inner.start_tls(ssl_context, server_hostname, _clamped(timeout))
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(
            host, port, _clamped(timeout, connect=True), local_address, socket_options
        )
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_unix_socket(
            path, _clamped(timeout, connect=True), socket_options
        )
        return _DeadlineStream(stream)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _DeadlineTransport(httpx.HTTPTransport):
    """httpx's own transport on a connection pool whose sockets honour the deadline."""

    def __init__(self) -> None:
        super().__init__()
        limits = httpx.Limits()
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_DeadlineBackend(),
        )


# --- the client ------------------------------------------------------------------------------


class OpenAICompatibleClient:
    """Thread-safe for concurrent ``chat()`` calls (one pooled ``httpx.Client``).

    Use as a context manager, or call ``close()``, to release pooled connections.
    ``transport`` and ``sleep`` exist for tests (an httpx mock transport, a fake clock).
    """

    def __init__(
        self,
        config: ClientConfig,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.config = config
        self._sleep = sleep
        headers = {"Accept": "application/json", **config.extra_headers}
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        self._http = httpx.Client(
            base_url=config.base_url.rstrip("/"),
            headers=headers,
            timeout=self._timeout(config.read_timeout_s),
            transport=transport if transport is not None else _DeadlineTransport(),
        )

    def __enter__(self) -> OpenAICompatibleClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # --- public API --------------------------------------------------------------------------

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: str | Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
        stream: bool = False,
        timeout_s: float | None = None,
        on_delta: DeltaCallback | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ) -> ChatResult:
        """One chat completion. ``timeout_s`` is this call's whole budget (attempts, backoff
        and reading) and overrides ``total_timeout_s``; ``on_delta`` receives content text as
        it streams. Raises ``ModelTimeout``, ``ModelUnavailable``, ``ModelProtocolError`` or
        ``ModelRequestRejected``."""
        body: dict[str, Any] = {"messages": [dict(m) for m in messages], "stream": stream}
        if self.config.model is not None:
            body["model"] = self.config.model
        optional = {
            "tools": list(tools) if tools else None,
            "tool_choice": tool_choice,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "top_p": top_p,
            "stop": list(stop) if stop else None,
            "seed": seed,
        }
        body.update({k: v for k, v in optional.items() if v is not None})
        if stream and self.config.stream_include_usage:
            body["stream_options"] = {"include_usage": True}
        if extra_body:
            body.update(extra_body)

        started = time.perf_counter()
        budget = timeout_s if timeout_s is not None else self.config.total_timeout_s
        deadline = started + budget if budget is not None else None
        return self._with_retries(body, stream, started, deadline, on_delta)

    def list_models(self, *, timeout_s: float = 5.0) -> list[str]:
        """Ids from ``GET /models``: a cheap readiness probe that works on vLLM and
        transformers serve alike. Raises ``ModelUnavailable`` when the server is down."""
        try:
            response = self._http.get("/models", timeout=self._timeout(timeout_s))
        except httpx.TimeoutException as exc:
            raise ModelTimeout(f"GET /models timed out: {exc}") from exc
        except httpx.TransportError as exc:
            raise ModelUnavailable(f"GET /models failed: {_describe_transport(exc)}") from exc
        if response.status_code >= 400:
            raise ModelUnavailable(
                f"GET /models answered HTTP {response.status_code}",
                status_code=response.status_code,
            )
        data = _json_object(response.content, "GET /models")
        entries = data.get("data")
        if not isinstance(entries, list):
            raise ModelProtocolError('GET /models: no "data" list in the response')
        return [str(e["id"]) for e in entries if isinstance(e, dict) and "id" in e]

    # --- attempts ----------------------------------------------------------------------------

    def _with_retries(
        self,
        body: dict[str, Any],
        stream: bool,
        started: float,
        deadline: float | None,
        on_delta: DeltaCallback | None,
    ) -> ChatResult:
        attempts = 0
        while True:
            attempts += 1
            try:
                return self._attempt(body, stream, started, deadline, on_delta, attempts)
            except ModelCallError as exc:
                exc.attempts = attempts  # parsing helpers raise without knowing the count
                raise
            except _Retryable as exc:
                retries_used = attempts - 1
                if retries_used >= self.config.max_retries:
                    raise ModelUnavailable(
                        f"{exc.reason}; gave up after {attempts} attempt(s)",
                        attempts=attempts,
                        status_code=exc.status_code,
                    ) from exc.__cause__
                delay = self._backoff(attempts, exc.retry_after_s)
                if deadline is not None and time.perf_counter() + delay >= deadline:
                    raise ModelTimeout(
                        f"{exc.reason}; no time left in the call's budget to retry",
                        attempts=attempts,
                        status_code=exc.status_code,
                    ) from exc.__cause__
                self._sleep(delay)

    def _backoff(self, attempts: int, retry_after_s: float | None) -> float:
        delay = min(self.config.backoff_max_s, self.config.backoff_base_s * 2 ** (attempts - 1))
        if retry_after_s is not None:
            delay = min(self.config.backoff_max_s, max(delay, retry_after_s))
        jitter = self.config.backoff_jitter
        return delay * (1 + random.uniform(-jitter, jitter)) if jitter else delay

    def _timeout(self, read_s: float) -> httpx.Timeout:
        return httpx.Timeout(
            connect=self.config.connect_timeout_s, read=read_s, write=read_s, pool=read_s
        )

    def _attempt_timeout(self, deadline: float | None) -> httpx.Timeout:
        """The per-socket-operation timeout, never longer than what is left of the budget."""
        read = self.config.read_timeout_s
        connect = self.config.connect_timeout_s
        if deadline is not None:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise ModelTimeout("the call's time budget was used up before an attempt")
            read, connect = min(read, left), min(connect, left)
        return httpx.Timeout(connect=connect, read=read, write=read, pool=read)

    def _attempt(
        self,
        body: dict[str, Any],
        stream: bool,
        started: float,
        deadline: float | None,
        on_delta: DeltaCallback | None,
        attempts: int,
    ) -> ChatResult:
        try:
            timeout = self._attempt_timeout(deadline)
        except ModelTimeout as exc:
            exc.attempts = attempts
            raise
        request = self._http.build_request("POST", "/chat/completions", json=body, timeout=timeout)
        token = _IO_DEADLINE.set(deadline)
        try:
            return self._send_and_read(
                request, timeout, stream, started, deadline, on_delta, attempts
            )
        finally:
            _IO_DEADLINE.reset(token)

    def _send_and_read(
        self,
        request: httpx.Request,
        timeout: httpx.Timeout,
        stream: bool,
        started: float,
        deadline: float | None,
        on_delta: DeltaCallback | None,
        attempts: int,
    ) -> ChatResult:
        try:
            response = self._http.send(request, stream=True)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise _Retryable(_describe_transport(exc)) from exc
        except httpx.RemoteProtocolError as exc:
            # The server closed the connection before any status line: nothing was generated.
            raise _Retryable(_describe_transport(exc)) from exc
        except httpx.TimeoutException as exc:
            raise ModelTimeout(
                f"no response within {timeout.read:.2f} s", attempts=attempts
            ) from exc
        except httpx.TransportError as exc:
            raise ModelUnavailable(_describe_transport(exc), attempts=attempts) from exc

        try:
            self._check_status(response, attempts)
            if stream:
                return self._read_stream(response, started, deadline, on_delta, attempts)
            return self._read_body(response, started, deadline, attempts)
        finally:
            response.close()

    def _check_status(self, response: httpx.Response, attempts: int) -> None:
        status = response.status_code
        if status < 400:
            return
        detail = _error_detail(_read_quietly(response, MAX_ERROR_BODY_BYTES))
        if status in RETRYABLE_STATUS:
            raise _Retryable(
                f"HTTP {status}: {detail}",
                status_code=status,
                retry_after_s=_retry_after(response.headers.get("retry-after")),
            )
        if status >= 500:
            raise ModelUnavailable(
                f"HTTP {status}: {detail}", attempts=attempts, status_code=status
            )
        raise ModelRequestRejected(
            f"HTTP {status}: {detail}", attempts=attempts, status_code=status, detail=detail
        )

    # --- non-streaming -----------------------------------------------------------------------

    def _read_body(
        self, response: httpx.Response, started: float, deadline: float | None, attempts: int
    ) -> ChatResult:
        raw = bytearray()
        limit = self.config.max_response_bytes
        try:
            for piece in response.iter_bytes():
                _check_deadline(deadline, attempts)
                raw += piece
                if len(raw) > limit:
                    raise ModelProtocolError(
                        f"chat completion: the response is larger than {limit} bytes",
                        attempts=attempts,
                    )
        except httpx.TimeoutException as exc:
            raise ModelTimeout(
                "the response body stalled past the read timeout", attempts=attempts
            ) from exc
        except httpx.TransportError as exc:
            raise ModelUnavailable(
                f"connection lost while reading the response: {_describe_transport(exc)}",
                attempts=attempts,
            ) from exc
        received = time.perf_counter()
        data = _json_object(bytes(raw), "chat completion")
        choice = _first_choice(data)
        message = choice.get("message")
        if not isinstance(message, dict):
            raise ModelProtocolError(
                'chat completion: choices[0] has no "message" object', attempts=attempts
            )
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise ModelProtocolError(
                "chat completion: message.content is not a string", attempts=attempts
            )
        tool_calls = [_tool_call(tc, i) for i, tc in enumerate(message.get("tool_calls") or [])]
        return ChatResult(
            content=content or "",
            tool_calls=tool_calls,
            finish_reason=_optional_str(choice.get("finish_reason")),
            usage=_usage(data.get("usage")),
            timings=CallTimings(ttft_s=received - started, total_s=time.perf_counter() - started),
            raw_model=str(data.get("model") or ""),
            attempts=attempts,
            reasoning_content=_reasoning(message),
        )

    # --- streaming ---------------------------------------------------------------------------

    def _read_stream(
        self,
        response: httpx.Response,
        started: float,
        deadline: float | None,
        on_delta: DeltaCallback | None,
        attempts: int,
    ) -> ChatResult:
        acc = _StreamAccumulator()
        limit = self.config.max_response_bytes
        try:
            lines = _bounded_lines(response.iter_bytes(), limit, deadline, attempts)
            for data in _sse_data(lines, deadline, attempts):
                if data == "[DONE]":
                    acc.done = True
                    break
                chunk = _json_object(data.encode(), "stream chunk")
                text = acc.add(chunk, attempts)
                if acc.ttft is None and acc.has_output:
                    acc.ttft = time.perf_counter() - started
                if text and on_delta is not None:
                    on_delta(text)
        except httpx.TimeoutException as exc:
            raise ModelTimeout(
                "the stream stalled past the read timeout"
                + (" after tokens arrived" if acc.has_output else ""),
                attempts=attempts,
            ) from exc
        except httpx.TransportError as exc:
            raise ModelUnavailable(
                f"connection lost mid-stream: {_describe_transport(exc)}", attempts=attempts
            ) from exc
        if not acc.done and acc.finish_reason is None:
            raise ModelUnavailable(
                "the stream ended without a finish_reason or [DONE]", attempts=attempts
            )
        return acc.result(started, attempts)


class _StreamAccumulator:
    """Folds ``chat.completion.chunk`` deltas into one result. Tool-call fragments are
    keyed by ``index``: vLLM sends the id and name once and the arguments in pieces."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, str]] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.model = ""
        self.ttft: float | None = None
        self.has_output = False
        self.done = False

    def add(self, chunk: dict[str, Any], attempts: int) -> str:
        """Fold one chunk in; returns the content text it added."""
        if "error" in chunk and "choices" not in chunk:
            raise ModelUnavailable(
                f"the server reported an error mid-stream: {_error_detail(chunk)}",
                attempts=attempts,
            )
        self.model = self.model or str(chunk.get("model") or "")
        if chunk.get("usage") is not None:
            self.usage = _usage(chunk["usage"])
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            raise ModelProtocolError('stream chunk: "choices" is not a list', attempts=attempts)
        added = ""
        for choice in choices:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            if choice.get("finish_reason") is not None:
                self.finish_reason = str(choice["finish_reason"])
            delta = choice.get("delta") or {}
            if not isinstance(delta, dict):
                raise ModelProtocolError("stream chunk: delta is not an object", attempts=attempts)
            text = delta.get("content")
            if isinstance(text, str) and text:
                self.content.append(text)
                added += text
                self.has_output = True
            thought = _reasoning(delta)
            if thought:
                self.reasoning.append(thought)
                self.has_output = True
            for fragment in delta.get("tool_calls") or []:
                self._add_tool_fragment(fragment, attempts)
        return added

    def _add_tool_fragment(self, fragment: Any, attempts: int) -> None:
        if not isinstance(fragment, dict):
            raise ModelProtocolError(
                "stream chunk: a tool_calls entry is not an object", attempts=attempts
            )
        index = fragment.get("index", len(self.calls))
        if not isinstance(index, int):
            raise ModelProtocolError(
                "stream chunk: tool call index is not an integer", attempts=attempts
            )
        call = self.calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        self.has_output = True
        if fragment.get("id"):
            call["id"] = str(fragment["id"])
        function = fragment.get("function") or {}
        if function.get("name") and not call["name"]:
            call["name"] = str(function["name"])
        arguments = function.get("arguments")
        if arguments is not None:
            call["arguments"] += arguments if isinstance(arguments, str) else json.dumps(arguments)

    def result(self, started: float, attempts: int) -> ChatResult:
        calls = [
            ToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments_json=c["arguments"])
            for i, c in sorted(self.calls.items())
        ]
        if any(not c.name for c in calls):
            raise ModelProtocolError(
                "stream: a tool call arrived without a function name", attempts=attempts
            )
        return ChatResult(
            content="".join(self.content),
            tool_calls=calls,
            finish_reason=self.finish_reason,
            usage=self.usage,
            timings=CallTimings(ttft_s=self.ttft, total_s=time.perf_counter() - started),
            raw_model=self.model,
            attempts=attempts,
            reasoning_content="".join(self.reasoning) or None,
        )


# --- parsing helpers -------------------------------------------------------------------------


class _Retryable(Exception):
    """Internal: this attempt failed in a way that is safe to repeat."""

    def __init__(
        self, reason: str, *, status_code: int | None = None, retry_after_s: float | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status_code = status_code
        self.retry_after_s = retry_after_s


def _bounded_lines(
    pieces: Iterable[bytes], limit: int, deadline: float | None, attempts: int
) -> Iterator[str]:
    """Lines of a byte stream (``\n`` or ``\r\n`` endings), checking the deadline on every
    piece received and refusing more than ``limit`` bytes in all, so a server that trickles
    bytes without a newline, or sends a huge body, is cut off. Only a piece that holds a
    newline is split, so a long trickle costs linear time."""
    total = 0
    pending = bytearray()
    for piece in pieces:
        _check_deadline(deadline, attempts)
        total += len(piece)
        if total > limit:
            raise ModelProtocolError(
                f"stream: the response is larger than {limit} bytes", attempts=attempts
            )
        if b"\n" not in piece:
            pending += piece
            continue
        *complete, rest = piece.split(b"\n")
        complete[0] = bytes(pending) + complete[0]
        pending = bytearray(rest)
        for raw in complete:
            yield raw.removesuffix(b"\r").decode("utf-8", "replace")
    if pending:
        yield bytes(pending).removesuffix(b"\r").decode("utf-8", "replace")


def _sse_data(
    lines: Iterable[str], deadline: float | None = None, attempts: int = 1
) -> Iterator[str]:
    """The ``data:`` payloads of a server-sent-event stream; multi-line data is joined per
    the SSE spec, comments (``:``) and other fields are skipped. Every line, skipped or not,
    checks the deadline: a server trickling keep-alive comments must not hold the call."""
    buffer: list[str] = []
    for line in lines:
        _check_deadline(deadline, attempts)
        if line == "":
            if buffer:
                yield "\n".join(buffer)
                buffer = []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if name == "data":
            buffer.append(value[1:] if value.startswith(" ") else value)
    if buffer:
        yield "\n".join(buffer)


def _check_deadline(deadline: float | None, attempts: int) -> None:
    if deadline is not None and time.perf_counter() > deadline:
        raise ModelTimeout("the call's time budget ran out while reading", attempts=attempts)


def _json_object(raw: bytes, what: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ModelProtocolError(f"{what}: not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ModelProtocolError(f"{what}: expected a JSON object")
    return value


def _first_choice(data: dict[str, Any]) -> dict[str, Any]:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ModelProtocolError('chat completion: no "choices"')
    return choices[0]


def _tool_call(raw: Any, index: int) -> ToolCall:
    if not isinstance(raw, dict) or not isinstance(raw.get("function"), dict):
        raise ModelProtocolError(f"chat completion: tool_calls[{index}] has no function object")
    function = raw["function"]
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise ModelProtocolError(f"chat completion: tool_calls[{index}] has no name")
    arguments = function.get("arguments")
    if arguments is None:
        arguments_json = "{}"
    elif isinstance(arguments, str):
        arguments_json = arguments
    else:  # some servers send an object; the agent expects the OpenAI string form
        arguments_json = json.dumps(arguments, ensure_ascii=False)
    return ToolCall(
        id=str(raw.get("id") or f"call_{index}"), name=name, arguments_json=arguments_json
    )


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    try:
        prompt = int(raw["prompt_tokens"])
        completion = int(raw.get("completion_tokens") or 0)
        total = int(raw.get("total_tokens") or prompt + completion)
    except (KeyError, TypeError, ValueError):
        return None
    return Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=total)


def _reasoning(message: Mapping[str, Any]) -> str | None:
    # vLLM has used both names across versions; transformers serve uses reasoning_content.
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _read_quietly(response: httpx.Response, limit: int) -> bytes:
    """At most ``limit`` bytes of an error body (enough for the server's message)."""
    raw = bytearray()
    try:
        for piece in response.iter_bytes():
            raw += piece
            if len(raw) >= limit:
                break
    except httpx.HTTPError:
        pass
    return bytes(raw[:limit])


def _error_detail(raw: bytes | Mapping[str, Any]) -> str:
    """The server's own error message from the common shapes: OpenAI/vLLM
    ``{"error": {"message"}}``, FastAPI ``{"detail"}``, or the raw text."""
    payload: Any = raw
    if isinstance(raw, bytes):
        try:
            payload = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return raw[:300].decode("utf-8", "replace").strip() or "(empty body)"
    if isinstance(payload, Mapping):
        error = payload.get("error")
        if isinstance(error, Mapping) and error.get("message"):
            return str(error["message"])[:300]
        if error:
            return str(error)[:300]
        if payload.get("detail"):
            return str(payload["detail"])[:300]
    return json.dumps(payload)[:300]


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP-date; the exponential backoff is used instead


def _describe_transport(exc: httpx.TransportError) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
