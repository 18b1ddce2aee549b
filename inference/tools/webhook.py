"""Webhook tools: POST the arguments as JSON, signed with HMAC-SHA256.

Headers: ``X-HAT-Timestamp`` (unix seconds) and ``X-HAT-Signature: sha256=<hex>`` over
``"<timestamp>.<body>"``, so a receiver can reject replays. Timeouts, connection errors and
non-2xx answers become error observations for the model, never exceptions.

The URL is merchant-supplied, so every call goes through a guarded connection: the host is
resolved here, every address it resolves to must pass the ``AddressPolicy`` (no loopback,
private, link-local/metadata ... unless allow-listed), and the socket connects to that checked
address while TLS (SNI, certificate) and the Host header keep the URL's name: a DNS answer
cannot change between the check and the connect. Redirects are never followed, proxies from
the environment are never used, and one absolute deadline bounds resolving, connecting,
sending and reading together (``timeout_s`` capped by what is left of the reply's deadline).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import ssl
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from functools import lru_cache
from typing import Any

import httpcore
import httpx

from harness_app.harness.webhook_address import AddressNotAllowed, AddressPolicy

SecretResolver = Callable[[str], str | None]
Resolver = Callable[[str, int], list[str]]
MAX_RESPONSE_BYTES = 64 * 1024
NOT_ALLOWED = "webhook address not allowed: it is (or resolves to) an internal or reserved address"

# getaddrinfo has no timeout of its own; it runs here so the deadline still holds.
_resolver_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="webhook-dns")


def sign(secret: str, timestamp: str, body: bytes) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


def system_resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (IPv4 and IPv6), in the resolver's order."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every read and write ends by one absolute deadline, so a receiver
    that trickles bytes cannot stretch the call past it."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: float) -> None:
        self._inner = inner
        self._deadline = deadline

    def _left(self, timeout: float | None, exc: type[Exception]) -> float:
        left = self._deadline - time.perf_counter()
        if left <= 0:
            raise exc("webhook deadline reached")
        return left if timeout is None else min(timeout, left)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        # server_hostname is the URL's host, not the IP we connected to: SNI and the
        # certificate check stay on the name.
        inner = self._inner.start_tls(
            ssl_context, server_hostname, self._left(timeout, httpcore.ConnectTimeout)
        )
        return _DeadlineStream(inner, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _GuardedBackend(httpcore.NetworkBackend):
    """Resolve, check every address against the policy, connect to a checked address."""

    def __init__(self, policy: AddressPolicy, resolve: Resolver, deadline: float) -> None:
        self._policy = policy
        self._resolve = resolve
        self._deadline = deadline
        self._tcp = httpcore.SyncBackend()

    def _left(self, timeout: float | None) -> float:
        left = self._deadline - time.perf_counter()
        if left <= 0:
            raise httpcore.ConnectTimeout("webhook deadline reached")
        return left if timeout is None else min(timeout, left)

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        future = _resolver_pool.submit(self._resolve, host, port)
        try:
            resolved = future.result(timeout=self._left(timeout))
        except FutureTimeout:
            raise httpcore.ConnectTimeout("resolving the webhook host timed out") from None
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve the webhook host: {exc}") from None
        addresses = self._policy.check_resolved(resolved)  # raises AddressNotAllowed
        last: Exception | None = None
        for address in addresses:
            try:
                stream = self._tcp.connect_tcp(
                    address, port, self._left(timeout), local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
                continue
            return _DeadlineStream(stream, self._deadline)
        raise last or httpcore.ConnectError("no address to connect to")

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("webhooks never use unix sockets")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


@lru_cache(maxsize=1)
def _ssl_context() -> ssl.SSLContext:
    # Loading the CA bundle costs milliseconds; one context serves every call.
    return httpx.create_ssl_context()


class _GuardedTransport(httpx.HTTPTransport):
    """httpx's transport (request/response mapping, exception mapping) over a connection
    pool that uses the guarded backend. httpx has no public hook for the network backend,
    hence the pool is replaced after construction."""

    def __init__(self, policy: AddressPolicy, resolve: Resolver, deadline: float) -> None:
        super().__init__(verify=_ssl_context(), trust_env=False)
        self._pool = httpcore.ConnectionPool(
            ssl_context=_ssl_context(),
            max_connections=1,
            retries=0,
            network_backend=_GuardedBackend(policy, resolve, deadline),
        )


def call_webhook(
    *,
    url: str,
    tool_name: str,
    arguments: dict[str, Any],
    timeout_s: float,
    secret_ref: str,
    resolve_secret: SecretResolver,
    policy: AddressPolicy | None = None,
    budget_s: float | None = None,
    resolve: Resolver | None = None,
) -> dict[str, Any]:
    """POST to ``url``; ``budget_s`` is what is left of the reply's deadline (None: no
    deadline), and the call gives up at ``min(timeout_s, budget_s)``."""
    limit = float(timeout_s) if budget_s is None else min(float(timeout_s), budget_s)
    if limit <= 0:
        return {"error": "webhook timed out: no time left before the reply deadline"}
    secret = resolve_secret(secret_ref)
    if not secret:
        return {"error": f"webhook secret {secret_ref!r} does not exist in this room"}
    body = json.dumps({"tool": tool_name, "arguments": arguments}, separators=(",", ":")).encode()
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        # Raw bytes only: the size cap below must bound what is held, not a compressed size.
        "Accept-Encoding": "identity",
        "X-HAT-Timestamp": timestamp,
        "X-HAT-Signature": sign(secret, timestamp, body),
    }
    deadline = time.perf_counter() + limit
    transport = _GuardedTransport(policy or AddressPolicy(), resolve or system_resolve, deadline)
    capped = budget_s is not None and budget_s < timeout_s
    try:
        with (
            httpx.Client(
                transport=transport, timeout=limit, follow_redirects=False, trust_env=False
            ) as http,
            http.stream("POST", url, content=body, headers=headers) as response,
        ):
            if not 200 <= response.status_code < 300:
                return {"error": f"webhook answered HTTP {response.status_code}"}
            content = bytearray()
            for chunk in response.iter_raw():
                content += chunk
                if len(content) > MAX_RESPONSE_BYTES:
                    return {"error": f"webhook response over {MAX_RESPONSE_BYTES} bytes"}
    except AddressNotAllowed:
        # Never the address or anything the internal service said: the trace is the
        # merchant's to read.
        return {"error": NOT_ALLOWED}
    except httpx.TimeoutException:
        why = " (what was left of the reply deadline)" if capped else ""
        return {"error": f"webhook timed out after {limit:.3g} s{why}"}
    except httpx.HTTPError as exc:
        return {"error": f"webhook unreachable: {type(exc).__name__}"}
    try:
        data = json.loads(bytes(content))
    except ValueError:
        return {"error": "webhook answered with invalid JSON"}
    return data if isinstance(data, dict) else {"result": data}
