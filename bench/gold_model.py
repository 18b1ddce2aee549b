"""An instant OpenAI-compatible endpoint that answers QA items with their gold trajectories.

For a request it finds the item whose viewer comment appears in the conversation, counts the
assistant turns so far and returns the next gold action (load the gold skill, each gold tool
call, then the gold answer): text action blocks when the request offers no tools (text mode),
OpenAI tool calls otherwise. ``wrong_items`` answer ``WRONG_ANSWER`` instead, so a test
can tell which items a run scored. Runs on 127.0.0.1 in daemon threads; answers are not
streamed unless asked (``stream: true`` gets SSE, as vLLM sends it).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from harness_app.hsa.trajectory import trajectory_from_dict
from inference.clients.text_actions import CallToolAction, ReplyAction, render_text_action
from training_app.evals.qa_sets import QAItem

Action = tuple[str, dict[str, Any]] | str

# Longer than a reply may be on air (rewards.MAX_REPLY_CHARS), so it fails every item.
WRONG_ANSWER = "I am not sure about that one, sorry. " * 12


class GoldModelServer:
    # True: answers are plain text, never action blocks (a subclass answering IFEval prompts).
    plain = False

    def __init__(self, items: Iterable[QAItem], *, wrong_items: Iterable[str] = ()) -> None:
        wrong = set(wrong_items)
        # (comment, context values, wrong, actions): several items share a comment ("How
        # much is it?") and differ in the product on screen, which the prompt shows.
        self.entries: list[tuple[str, tuple[str, ...], bool, list[Action]]] = []
        for item in items:
            gold = trajectory_from_dict(item.gold)
            actions: list[Action] = []
            if gold.skill:
                actions.append(("load_skill", {"name": gold.skill}))
            actions.extend((call.name, dict(call.arguments)) for call in gold.tool_calls)
            actions.append(gold.final_answer)
            values = tuple(str(v) for k, v in item.context.items() if k != "recent_comments" and v)
            self.entries.append((item.comment, values, item.id in wrong, actions))
        self.requests = 0
        self._lock = threading.Lock()

    def next_action(self, messages: list[dict[str, Any]]) -> Action:
        """The gold action due next for the item this conversation is about."""
        text = "\n".join(
            str(m.get("content") or "") for m in messages if m.get("role") != "assistant"
        )
        candidates = [e for e in self.entries if e[0] in text]
        if not candidates:
            return WRONG_ANSWER
        _comment, _values, wrong, actions = max(
            candidates, key=lambda e: sum(1 for v in e[1] if v in text)
        )
        if wrong:
            return WRONG_ANSWER
        turns = sum(1 for m in messages if m.get("role") == "assistant")
        return actions[min(turns, len(actions) - 1)]

    def __enter__(self) -> GoldModelServer:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _message(action: Action, native: bool) -> dict[str, Any]:
    if isinstance(action, str):
        return {
            "role": "assistant",
            "content": action if native else render_text_action(ReplyAction(action)),
        }
    name, arguments = action
    if not native:
        return {"role": "assistant", "content": render_text_action(CallToolAction(name, arguments))}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "index": 0,
                "id": f"call_{name}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def _handler_for(server: GoldModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            with server._lock:
                server.requests += 1
            action = server.next_action(body["messages"])
            message = _message(action, server.plain or bool(body.get("tools")))
            finish = "tool_calls" if message.get("tool_calls") else "stop"
            usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
            if body.get("stream"):
                chunks = [
                    {"choices": [{"index": 0, "delta": message, "finish_reason": None}]},
                    {
                        "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
                        "usage": usage,
                    },
                ]
                text = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
                content_type = "text/event-stream"
            else:
                text = json.dumps(
                    {
                        "id": "gold",
                        "object": "chat.completion",
                        "model": "gold",
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": usage,
                    }
                )
                content_type = "application/json"
            data = text.encode()
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            data = json.dumps({"data": [{"id": "gold", "object": "model"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    return Handler
