"""Webhook tools: POST the arguments as JSON, signed with HMAC-SHA256.

Headers: ``X-HAT-Timestamp`` (unix seconds) and ``X-HAT-Signature: sha256=<hex>`` over
``"<timestamp>.<body>"``, so a receiver can reject replays. Timeouts, connection errors and
non-2xx answers become error observations for the model, never exceptions.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable
from typing import Any

import httpx

SecretResolver = Callable[[str], str | None]
MAX_RESPONSE_BYTES = 64 * 1024


def sign(secret: str, timestamp: str, body: bytes) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


def call_webhook(
    *,
    url: str,
    tool_name: str,
    arguments: dict[str, Any],
    timeout_s: float,
    secret_ref: str,
    resolve_secret: SecretResolver,
    client: httpx.Client | None = None,
) -> dict[str, Any]:
    secret = resolve_secret(secret_ref)
    if not secret:
        return {"error": f"webhook secret {secret_ref!r} is not configured on this worker"}
    body = json.dumps({"tool": tool_name, "arguments": arguments}, separators=(",", ":")).encode()
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "X-HAT-Timestamp": timestamp,
        "X-HAT-Signature": sign(secret, timestamp, body),
    }
    owns_client = client is None
    http = client or httpx.Client()
    try:
        response = http.post(url, content=body, headers=headers, timeout=timeout_s)
    except httpx.TimeoutException:
        return {"error": f"webhook timed out after {timeout_s:g} s"}
    except httpx.HTTPError as exc:
        return {"error": f"webhook unreachable: {type(exc).__name__}"}
    finally:
        if owns_client:
            http.close()
    if not 200 <= response.status_code < 300:
        return {"error": f"webhook answered HTTP {response.status_code}"}
    if len(response.content) > MAX_RESPONSE_BYTES:
        return {"error": f"webhook response over {MAX_RESPONSE_BYTES} bytes"}
    try:
        data = response.json()
    except ValueError:
        return {"error": "webhook answered with invalid JSON"}
    return data if isinstance(data, dict) else {"result": data}
