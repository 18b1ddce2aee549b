"""An instant-response OpenAI-compatible endpoint for measuring the runtime's own cost.

It plays a well-behaved host deterministically from the conversation so far: load the
product-qa skill, call get_product for the SKU on screen, then answer with the exact catalog
price. Answers stream as SSE like vLLM does. Runs on 127.0.0.1 in a daemon thread.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_SKU = re.compile(r"SKU ([A-Za-z0-9_.-]+)")


def next_turn(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant's next delta: a tool call or the final text."""
    tool_results = [m for m in messages if m.get("role") == "tool"]
    if not tool_results:
        return {"tool_calls": [_call("load_skill", {"name": "product-qa"})]}
    if len(tool_results) == 1:
        match = _SKU.search(str(messages[0].get("content", "")))
        return {"tool_calls": [_call("get_product", {"sku": match.group(1) if match else ""})]}
    product = json.loads(tool_results[-1]["content"])
    return {"content": f"{product.get('title', 'It')} is ${product.get('price', '?')}."}


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "index": 0,
        "id": f"call_{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        delta = next_turn(body["messages"])
        finish = "tool_calls" if "tool_calls" in delta else "stop"
        chunks = [
            {
                "choices": [
                    {"index": 0, "delta": {"role": "assistant", **delta}, "finish_reason": None}
                ]
            },
            {
                "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
            },
        ]
        payload = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        data = payload.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        data = json.dumps({"data": [{"id": "instant", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


class InstantModelServer:
    def __enter__(self) -> InstantModelServer:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
