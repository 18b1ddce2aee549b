"""A tiny scripted OpenAI-compatible server for deterministic client tests (never a demo).

Each POST to ``/v1/chat/completions`` consumes the next step of the script: a JSON reply, an
error status, an SSE stream with delays, a hang, a dropped connection. It speaks HTTP/1.1
with chunked streaming like uvicorn does, so a connection dropped mid-stream looks to the
client exactly as it would in production. Runs on 127.0.0.1 in a daemon thread.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# --- script steps ----------------------------------------------------------------------------


@dataclass
class JsonReply:
    body: dict[str, Any] | bytes
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class SseReply:
    """``chunks`` are dicts (sent as ``data: <json>``) or raw strings (sent as ``data: <s>``).
    ``first_delay_s`` passes before the first chunk, ``delay_s`` between chunks;
    ``drop_after`` closes the socket abruptly after that many chunks."""

    chunks: list[dict[str, Any] | str]
    delay_s: float = 0.0
    first_delay_s: float = 0.0
    done: bool = True
    drop_after: int | None = None


@dataclass
class Hang:
    """Accept the request and send nothing for ``seconds`` (then close)."""

    seconds: float = 5.0


@dataclass
class Drop:
    """Read the request, then close the connection without any response."""


@dataclass
class Trickle:
    """A 200 whose body is ``piece`` sent ``count`` times, ``delay_s`` apart, as chunked
    transfer: SSE keep-alive comments (``b": ping\\n"``), single bytes without a newline, or
    a huge body (a 1 MiB piece 50 times). Stops early when the client goes away."""

    piece: bytes
    count: int
    delay_s: float = 0.0
    content_type: str = "text/event-stream"


Step = JsonReply | SseReply | Hang | Drop | Trickle


# --- canned payloads -------------------------------------------------------------------------


def completion(
    content: str | None = "Hello!",
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str = "stop",
    usage: dict[str, int] | None = None,
    model: str = "scripted-model",
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }
    if usage is not None:
        body["usage"] = usage
    return body


def chunk(
    *,
    content: str | None = None,
    role: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str | None = None,
    usage: dict[str, int] | None = None,
    no_choices: bool = False,
    model: str = "scripted-model",
) -> dict[str, Any]:
    delta: dict[str, Any] = {}
    if role is not None:
        delta["role"] = role
    if content is not None:
        delta["content"] = content
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    choices = [] if no_choices else [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
    body: dict[str, Any] = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": model,
        "choices": choices,
    }
    if usage is not None:
        body["usage"] = usage
    return body


# --- the server ------------------------------------------------------------------------------


@dataclass
class RecordedRequest:
    path: str
    body: dict[str, Any]
    at: float


class ScriptedServer:
    """Use as a context manager; ``base_url`` ends in ``/v1``. ``requests`` records every
    chat request in order; ``enqueue`` appends steps."""

    def __init__(self, *steps: Step, models: list[str] | None = None) -> None:
        self.steps: list[Step] = list(steps)
        self.models = models or ["scripted-model"]
        self.requests: list[RecordedRequest] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._httpd = _QuietServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        # A short poll interval keeps shutdown (once per test) at ~50 ms instead of 0.5 s.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def enqueue(self, *steps: Step) -> None:
        with self._lock:
            self.steps.extend(steps)

    def next_step(self, path: str, body: dict[str, Any]) -> Step | None:
        with self._lock:
            self.requests.append(RecordedRequest(path, body, time.perf_counter()))
            return self.steps.pop(0) if self.steps else None

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that give up (timeouts are the point of several tests) make the handler's
        # next write fail; that is expected, not worth a traceback in the test output.
        pass


def _handler_for(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                data = [{"id": m, "object": "model"} for m in server.models]
                self._send_json(200, {"object": "list", "data": data})
            else:
                self._send_json(404, {"detail": "not found"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {"_unparsed": raw.decode("utf-8", "replace")}
            step = server.next_step(self.path, body)
            if step is None:
                self._send_json(500, {"error": {"message": "scripted server: script exhausted"}})
            elif isinstance(step, JsonReply):
                self._send_json(step.status, step.body, step.headers)
            elif isinstance(step, SseReply):
                self._send_sse(step)
            elif isinstance(step, Trickle):
                self._send_trickle(step)
            elif isinstance(step, Hang):
                server.stopping.wait(step.seconds)
                self._abort()
            else:
                self._abort()

        def _send_json(
            self, status: int, body: dict[str, Any] | bytes, headers: dict[str, str] | None = None
        ) -> None:
            payload = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("Connection", "close")
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(payload)
            self.close_connection = True

        def _send_sse(self, step: SseReply) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            if step.first_delay_s:
                time.sleep(step.first_delay_s)
            for i, item in enumerate(step.chunks):
                if step.drop_after is not None and i >= step.drop_after:
                    self._abort()
                    return
                if i and step.delay_s:
                    time.sleep(step.delay_s)
                data = item if isinstance(item, str) else json.dumps(item)
                self._write_chunk(f"data: {data}\n\n".encode())
            if step.done:
                self._write_chunk(b"data: [DONE]\n\n")
            self._write_chunk(b"")

        def _send_trickle(self, step: Trickle) -> None:
            self.send_response(200)
            self.send_header("Content-Type", step.content_type)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            for i in range(step.count):
                if i and step.delay_s and server.stopping.wait(step.delay_s):
                    return
                try:
                    self._write_chunk(step.piece)
                except OSError:
                    return  # the client gave up: the point of these steps
            self._write_chunk(b"")

        def _write_chunk(self, payload: bytes) -> None:
            self.wfile.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
            self.wfile.flush()

        def _abort(self) -> None:
            # Linger 0: closing sends RST, so the client sees a broken connection, not an
            # orderly end of the response.
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )

    return Handler
