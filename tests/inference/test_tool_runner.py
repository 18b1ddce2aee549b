"""ToolRunner: schema checks before execution, catalog dispatch, signed webhooks against a
real local HTTP server (HMAC verified, hang -> timeout, 500 -> error observation), and the
address policy: loopback is reachable here only because these tests allow 127.0.0.1/32."""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpcore
import pytest

from harness_app.harness.model import Tool, ToolExecutor
from harness_app.harness.webhook_address import AddressPolicy, parse_networks
from inference.tools import webhook
from inference.tools.runner import ToolRunner
from inference.tools.webhook import NOT_ALLOWED
from tests.inference.agents.catalog_double import DictCatalog

SECRET = "s3cret-for-tests"
LOOPBACK_ALLOWED = AddressPolicy(parse_networks(["127.0.0.1/32"]))


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
        if self.path == "/trickle":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            for _ in range(20):  # one byte every 0.1 s: each read is quick, the whole is not
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.1)
            return
        if self.path == "/big":
            chunk = b"[" + b"1," * 50_000
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            for _ in range(500):  # 50 MB if anyone read it all
                self.wfile.write(chunk)
            return
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
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
    httpd.daemon_threads = True
    httpd.handle_error = lambda request, address: None  # type: ignore[method-assign]  # clients hang up on purpose
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


def runner(*tools: Tool, policy: AddressPolicy = LOOPBACK_ALLOWED) -> ToolRunner:
    return ToolRunner(
        tools, DictCatalog(), lambda ref: SECRET if ref == "ETA_SECRET" else None, policy
    )


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
    no_secret = ToolRunner(
        (webhook_tool("http://127.0.0.1:9/x"),), DictCatalog(), lambda ref: None, LOOPBACK_ALLOWED
    )
    assert no_secret.run("eta", {"region": "X"}).result["error"] == (
        "webhook secret 'ETA_SECRET' does not exist in this room"
    )


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


# ---------------------------------------------------------------------- deadline and size


def test_webhook_gives_up_when_the_reply_budget_runs_out(server):  # type: ignore[no-untyped-def]
    # given a webhook allowed 30 s, but only 0.3 s left of the reply's deadline
    started = time.perf_counter()
    outcome = runner(webhook_tool(f"{server}/hang", timeout_s=30)).run(
        "eta", {"region": "X"}, budget_s=0.3
    )
    elapsed = time.perf_counter() - started
    # then it gives up at the budget, and says so
    assert 0.3 <= elapsed < 0.45, elapsed
    assert outcome.result == {
        "error": "webhook timed out after 0.3 s (what was left of the reply deadline)"
    }


def test_no_budget_left_means_no_call(server):  # type: ignore[no-untyped-def]
    count = len(Hook.received)
    outcome = runner(webhook_tool(f"{server}/ok")).run("eta", {"region": "X"}, budget_s=-0.01)
    assert outcome.result["error"].startswith("webhook timed out")
    assert len(Hook.received) == count


def test_a_trickling_webhook_is_bounded_by_its_total_time(server):  # type: ignore[no-untyped-def]
    # each byte arrives within the read timeout; the whole answer would take 2 s
    started = time.perf_counter()
    outcome = runner(webhook_tool(f"{server}/trickle", timeout_s=0.5)).run("eta", {"region": "X"})
    assert time.perf_counter() - started < 0.65
    assert outcome.result == {"error": "webhook timed out after 0.5 s"}


def test_a_50_mb_answer_is_cut_at_the_size_limit(server):  # type: ignore[no-untyped-def]
    outcome = runner(webhook_tool(f"{server}/big", timeout_s=5)).run("eta", {"region": "X"})
    assert outcome.result == {"error": "webhook response over 65536 bytes"}


def test_redirects_are_not_followed(server):  # type: ignore[no-untyped-def]
    outcome = runner(webhook_tool(f"{server}/redirect")).run("eta", {"region": "X"})
    assert outcome.result == {"error": "webhook answered HTTP 302"}


# ---------------------------------------------------------------------- address policy


@pytest.fixture
def listener() -> Iterator[tuple[int, list[object]]]:
    """A bare local socket that records every connection it is offered."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.settimeout(0.05)
    accepted: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            accepted.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield sock.getsockname()[1], accepted
    stop.set()
    thread.join(1)
    sock.close()


def test_by_default_loopback_names_and_addresses_are_refused_before_connecting(listener):  # type: ignore[no-untyped-def]
    # given the default policy (no allow-list) and a local socket that would accept
    port, accepted = listener
    for host in ("127.0.0.1", "localhost", "[::ffff:127.0.0.1]", "127.1", "2130706433"):
        outcome = runner(webhook_tool(f"http://{host}:{port}/x"), policy=AddressPolicy()).run(
            "eta", {"region": "X"}
        )
        # then each is refused with the generic error, and nothing connected
        assert outcome.result == {"error": NOT_ALLOWED}, host
    time.sleep(0.1)
    assert accepted == []


def test_a_name_resolving_to_loopback_is_refused_at_connect_time(listener, monkeypatch):  # type: ignore[no-untyped-def]
    # given a harmless-looking public name whose DNS answer is 127.0.0.1 (rebinding)
    port, accepted = listener
    lookups: list[str] = []

    def rebinding(host: str, port: int) -> list[str]:
        lookups.append(host)
        return ["93.184.215.14", "127.0.0.1"]

    monkeypatch.setattr(webhook, "system_resolve", rebinding)
    outcome = runner(webhook_tool(f"http://shop.example.com:{port}/x"), policy=AddressPolicy()).run(
        "eta", {"region": "X"}
    )
    # then one bad address among the answers is enough to refuse, before any connect
    assert lookups == ["shop.example.com"]
    assert outcome.result == {"error": NOT_ALLOWED}
    time.sleep(0.1)
    assert accepted == []


@pytest.mark.parametrize(
    "answer",
    [
        ["10.1.2.3"],
        ["172.16.5.4"],
        ["192.168.0.10"],
        ["100.64.0.7"],
        ["169.254.169.254"],
        ["0.0.0.0"],
        ["224.0.0.251"],
        ["::1"],
        ["fd12:3456::1"],
        ["fe80::1%eth0"],
        ["::ffff:10.0.0.1"],
        ["::"],
    ],
)
def test_internal_answers_are_refused_and_nothing_is_connected(answer, monkeypatch):  # type: ignore[no-untyped-def]
    # The connect itself is replaced: these tests never send a packet off this machine.
    connects: list[tuple[str, int]] = []

    def no_connect(self, host, port, *args, **kwargs):  # type: ignore[no-untyped-def]
        connects.append((host, port))
        raise AssertionError("must not connect")

    monkeypatch.setattr(webhook, "system_resolve", lambda host, port: answer)
    monkeypatch.setattr(httpcore.SyncBackend, "connect_tcp", no_connect)
    outcome = runner(webhook_tool("https://hooks.shop.example/eta"), policy=AddressPolicy()).run(
        "eta", {"region": "X"}
    )
    assert outcome.result == {"error": NOT_ALLOWED}
    assert connects == []


def test_the_connection_goes_to_the_checked_address_with_the_urls_host(server, monkeypatch):  # type: ignore[no-untyped-def]
    # given a name that resolves (once, here) to the allowed local receiver
    port = server.rsplit(":", 1)[1]
    answers = iter([["127.0.0.1"], ["10.0.0.1"]])  # a second lookup would rebind
    monkeypatch.setattr(webhook, "system_resolve", lambda host, port: next(answers))
    hosts: list[str] = []
    original = Hook.do_POST

    def recording(self):  # type: ignore[no-untyped-def]
        hosts.append(self.headers["Host"])
        original(self)

    monkeypatch.setattr(Hook, "do_POST", recording)
    outcome = runner(webhook_tool(f"http://eta.shop.example:{port}/ok")).run("eta", {"region": "X"})
    # then it connected to the address it checked, and the Host header kept the name
    assert outcome.ok and outcome.result == {"eta_days": 3}
    assert hosts == [f"eta.shop.example:{port}"]


def test_a_refused_call_never_shows_the_internal_answer(server):  # type: ignore[no-untyped-def]
    # the receiver is up and would answer {"eta_days": 3}; without the allow-list it is internal
    count = len(Hook.received)
    outcome = runner(webhook_tool(f"{server}/ok"), policy=AddressPolicy()).run(
        "eta", {"region": "X"}
    )
    assert outcome.result == {"error": NOT_ALLOWED}
    assert "eta_days" not in json.dumps(outcome.result)
    assert len(Hook.received) == count


def test_argument_patterns_run_in_re2_not_pythons_backtracking_re() -> None:
    # Issue 9: ^(a+)+$ against "a" * 32 + "!" froze a worker past 120 s in jsonschema's re.
    from inference.tools.runner import argument_errors

    schema = {"type": "object", "properties": {"sku": {"type": "string", "pattern": r"^(a+)+$"}}}
    evil = Tool("lookup", "Look up.", schema, ToolExecutor(kind="catalog", operation="get_product"))
    started = time.perf_counter()
    problems = argument_errors(evil, {"sku": "a" * 32 + "!"})
    assert time.perf_counter() - started < 0.2
    assert problems == ["sku: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!' does not match '^(a+)+$'"]
