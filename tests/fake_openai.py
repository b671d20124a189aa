"""A fake OpenAI-compatible Chat Completions server for the LLM examiner's tests (127.0.0.1, own thread).

Strict about the request, as real servers are: ``POST /v1/chat/completions`` only, a JSON body with a
string ``model``, ``messages`` of ``{role, content}`` with known roles, a ``response_format`` of
``json_schema`` (with a schema) or ``json_object``; a ``Bearer`` key when one is configured. Every
request is recorded. ``mode`` scripts the reply: ``ok`` (the JSON that ``reply`` returns), ``fenced``
(the JSON inside a Markdown fence with chatter), ``malformed``, ``slow`` (sleeps past the client's
timeout), ``429``, ``500``, ``no_schema`` (400 for json_schema, like servers without structured output).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

Reply = Callable[[dict[str, Any]], dict[str, Any]]


def default_reply(request: dict[str, Any]) -> dict[str, Any]:
    return {
        "key_points": [{"index": 0, "status": "covered"}, {"index": 1, "status": "partial"}],
        "misconceptions": [],
        "errors": [],
        "score": 82,
        "feedback": "Хорошо объяснили суть; добавьте цифры.",
        "follow_up": "А сколько памяти это экономит на 7B модели?",
    }


class LocalServer:
    """An HTTP server on a free local port in a thread of its own, serving ``/v1`` (the fakes of
    OpenAI-compatible endpoints build on it)."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        # shutdown() waits for the serving loop's next poll: 0.5 s by default, paid by every test
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class FakeOpenAI(LocalServer):
    def __init__(self, api_key: str | None = "sk-test-secret-key") -> None:
        self.api_key = api_key
        self.mode = "ok"
        self.reply: Reply = default_reply
        self.requests: list[dict[str, Any]] = []
        self.errors: list[str] = []  # request-shape violations (tests assert it stays empty)
        self.delay = 3.0
        super().__init__(self._handler())

    def _check(self, path: str, headers: Any, body: Any) -> str | None:
        if path != "/v1/chat/completions":
            return f"unknown path {path}"
        if "application/json" not in headers.get("Content-Type", ""):
            return "Content-Type is not application/json"
        if self.api_key and headers.get("Authorization") != f"Bearer {self.api_key}":
            return "missing or wrong Authorization"
        if not isinstance(body, dict) or not isinstance(body.get("model"), str) or not body["model"]:
            return "model must be a non-empty string"
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return "messages must be a non-empty list"
        for m in messages:
            if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant"):
                return f"bad message {m!r}"
            if not isinstance(m.get("content"), str):
                return "message content must be a string"
        fmt = body.get("response_format")
        if fmt is not None:
            if fmt.get("type") == "json_schema":
                schema = fmt.get("json_schema", {})
                if not isinstance(schema.get("schema"), dict) or not schema.get("name"):
                    return "json_schema needs a name and a schema"
            elif fmt.get("type") != "json_object":
                return f"unknown response_format {fmt!r}"
        return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, code: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                try:
                    body = json.loads(self.rfile.read(length))
                except ValueError:
                    fake.errors.append("body is not JSON")
                    self._send(400, {"error": {"message": "invalid JSON"}})
                    return
                problem = fake._check(self.path, self.headers, body)
                fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                if problem:
                    fake.errors.append(problem)
                    self._send(400, {"error": {"message": problem}})
                    return
                mode = fake.mode
                fmt = (body.get("response_format") or {}).get("type")
                if mode == "no_schema" and fmt == "json_schema":
                    self._send(400, {"error": {"message": "response_format json_schema is not supported"}})
                    return
                if mode == "429":
                    self._send(429, {"error": {"message": "Rate limit reached", "type": "rate_limit"}})
                    return
                if mode == "500":
                    self._send(500, {"error": {"message": "internal error"}})
                    return
                if mode == "slow":
                    time.sleep(fake.delay)
                content = json.dumps(fake.reply(body), ensure_ascii=False)
                if mode == "fenced":
                    content = f"```json\n{content}\n```"
                elif mode == "chatty":  # text around the JSON: rejected, never searched
                    content = f"Вот оценка:\n```json\n{content}\n```\nУдачи!"
                elif mode == "malformed":
                    content = "Оценка: 80 из 100, всё хорошо, {score: eighty"
                self._send(
                    200,
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body["model"],
                        "choices": [
                            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
                        ],
                    },
                )

        return Handler
