"""ToolRunner: schema checks before execution, catalog dispatch, signed webhooks against a
real local HTTP server (HMAC verified, hang -> timeout, 500 -> error observation)."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from harness_app.harness.model import Tool, ToolExecutor
from inference.tools.runner import ToolRunner
from tests.inference.agents.catalog_double import DictCatalog

SECRET = "s3cret-for-tests"


class Hook(BaseHTTPRequestHandler):
    received: list[dict] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        ts = self.headers["X-HAT-Timestamp"]
        expected = (
            "sha256="
            + hmac.new(SECRET.encode(), f"{ts}.".encode() + body, hashlib.sha256).hexdigest()
        )
        Hook.received.append(
            {
                "path": self.path,
                "valid": hmac.compare_digest(expected, self.headers["X-HAT-Signature"]),
                "body": json.loads(body),
            }
        )
        if self.path == "/hang":
            time.sleep(2)
        status = 500 if self.path == "/fail" else 200
        payload = json.dumps({"eta_days": 3}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def webhook_tool(url: str, timeout_s: float = 1.0) -> Tool:
    return Tool(
        name="eta",
        description="Delivery ETA",
        input_schema={
            "type": "object",
            "properties": {"region": {"type": "string"}},
            "required": ["region"],
        },
        executor=ToolExecutor(
            kind="webhook", url=url, timeout_s=timeout_s, secret_ref="ETA_SECRET"
        ),
    )


def runner(*tools: Tool) -> ToolRunner:
    return ToolRunner(tools, DictCatalog(), lambda ref: SECRET if ref == "ETA_SECRET" else None)


def test_webhook_call_is_signed_and_returns_json(server):  # type: ignore[no-untyped-def]
    outcome = runner(webhook_tool(f"{server}/ok")).run("eta", {"region": "Zhejiang"})
    assert outcome.ok and outcome.result == {"eta_days": 3}
    last = Hook.received[-1]
    assert last["valid"] and last["body"] == {"tool": "eta", "arguments": {"region": "Zhejiang"}}


def test_webhook_500_is_an_error_observation(server):  # type: ignore[no-untyped-def]
    outcome = runner(webhook_tool(f"{server}/fail")).run("eta", {"region": "X"})
    assert not outcome.ok and outcome.result == {"error": "webhook answered HTTP 500"}


def test_hanging_webhook_times_out(server):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    outcome = runner(webhook_tool(f"{server}/hang", timeout_s=0.2)).run("eta", {"region": "X"})
    assert time.perf_counter() - started < 1.5
    assert not outcome.ok and "timed out after 0.2 s" in outcome.result["error"]


def test_unreachable_webhook_and_missing_secret():
    unreachable = runner(webhook_tool("http://127.0.0.1:9/x", timeout_s=0.5)).run(
        "eta", {"region": "X"}
    )
    assert "unreachable" in unreachable.result["error"]
    no_secret = ToolRunner((webhook_tool("http://127.0.0.1:9/x"),), DictCatalog(), lambda ref: None)
    assert "not configured" in no_secret.run("eta", {"region": "X"}).result["error"]


def test_arguments_are_checked_before_anything_runs(demo_harness, server):  # type: ignore[no-untyped-def]
    count = len(Hook.received)
    outcome = runner(webhook_tool(f"{server}/ok")).run("eta", {"region": 5})
    assert (
        outcome.error == "invalid_arguments"
        and "region: 5 is not of type 'string'" in outcome.result["error"]
    )
    assert len(Hook.received) == count
    unknown = runner(*demo_harness.tools).run("nope", {})
    assert unknown.error == "unknown_tool" and "get_product" in unknown.result["error"]


def test_argument_patterns_run_in_re2_not_pythons_backtracking_re() -> None:
    # Issue 9: ^(a+)+$ against "a" * 32 + "!" froze a worker past 120 s in jsonschema's re.
    from inference.tools.runner import argument_errors

    schema = {"type": "object", "properties": {"sku": {"type": "string", "pattern": r"^(a+)+$"}}}
    evil = Tool("lookup", "Look up.", schema, ToolExecutor(kind="catalog", operation="get_product"))
    started = time.perf_counter()
    problems = argument_errors(evil, {"sku": "a" * 32 + "!"})
    assert time.perf_counter() - started < 0.2
    assert problems == ["sku: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!' does not match '^(a+)+$'"]
