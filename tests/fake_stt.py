"""A fake OpenAI-compatible speech-to-text server (``POST /v1/audio/transcriptions``; 127.0.0.1,
own thread) for the voice answer tests.

Strict about the request, as real servers are: multipart/form-data with a ``file`` part (a file
name and audio bytes: OGG/Opus must start with ``OggS`` and carry an ``OpusHead``), a non-empty
``model``, a ``language`` (ISO 639-1), and the ``Bearer`` key when one is configured. Every request
is recorded (without the audio bytes: their length and first bytes). ``mode`` scripts the reply:
``ok`` (``{"text": transcript}``), ``slow`` (sleeps ``delay`` seconds first), ``500``, ``empty``
(``{"text": ""}``), ``garbage`` (not JSON).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fake_openai import LocalServer

Transcript = Callable[[dict[str, Any]], str]


def parse_multipart(content_type: str, body: bytes) -> dict[str, Any]:
    """The form's fields: text values as str, files as {"filename", "content", "content_type"}."""
    message = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
    if not message.is_multipart():
        raise ValueError("not multipart")
    fields: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        filename = part.get_filename()
        payload = part.get_payload(decode=True) or b""
        if filename:
            fields[str(name)] = {"filename": filename, "content": payload, "content_type": part.get_content_type()}
        else:
            fields[str(name)] = payload.decode()
    return fields


class FakeSTT(LocalServer):
    def __init__(self, api_key: str | None = "sk-stt-test-secret") -> None:
        self.api_key = api_key
        self.mode = "ok"
        self.transcript = "Тестовая расшифровка ответа."
        self.reply: Transcript | None = None  # overrides ``transcript``
        self.delay = 3.0
        self.requests: list[dict[str, Any]] = []
        self.errors: list[str] = []  # request-shape violations (tests assert it stays empty)
        super().__init__(self._handler())

    def _check(self, path: str, headers: Any, fields: dict[str, Any]) -> str | None:
        if path != "/v1/audio/transcriptions":
            return f"unknown path {path}"
        if self.api_key and headers.get("Authorization") != f"Bearer {self.api_key}":
            return "missing or wrong Authorization"
        file = fields.get("file")
        if not isinstance(file, dict) or not file["filename"] or not file["content"]:
            return "file must be a non-empty file part with a file name"
        ogg = file["filename"].endswith((".ogg", ".oga"))
        if ogg and (not file["content"].startswith(b"OggS") or b"OpusHead" not in file["content"][:200]):
            return "the .ogg file is not OGG/Opus"
        if not isinstance(fields.get("model"), str) or not fields["model"]:
            return "model must be a non-empty string"
        language = fields.get("language")
        if language is not None and (not isinstance(language, str) or len(language) != 2):
            return f"language must be ISO 639-1, got {language!r}"
        return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, code: int, payload: Any, *, raw: bytes | None = None) -> None:
                data = raw if raw is not None else json.dumps(payload, ensure_ascii=False).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except OSError:  # the client gave up (its timeout)
                    pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length)
                content_type = self.headers.get("Content-Type", "")
                try:
                    if not content_type.startswith("multipart/form-data"):
                        raise ValueError(f"Content-Type is {content_type!r}, not multipart/form-data")
                    fields = parse_multipart(content_type, body)
                except ValueError as exc:
                    fake.errors.append(str(exc))
                    self._send(400, {"error": {"message": str(exc)}})
                    return
                problem = fake._check(self.path, self.headers, fields)
                summary = {
                    k: ({"filename": v["filename"], "size": len(v["content"]), "head": v["content"][:4]}
                        if isinstance(v, dict) else v)
                    for k, v in fields.items()
                }  # fmt: skip
                fake.requests.append({"path": self.path, "headers": dict(self.headers), "fields": summary})
                if problem:
                    fake.errors.append(problem)
                    status = 401 if "Authorization" in problem else 400  # as OpenAI answers a wrong key
                    self._send(status, {"error": {"message": problem}})
                    return
                if fake.mode == "500":
                    self._send(500, {"error": {"message": "internal error"}})
                    return
                if fake.mode == "garbage":
                    self._send(200, None, raw=b"<html>oops</html>")
                    return
                if fake.mode == "slow":
                    time.sleep(fake.delay)
                text = "" if fake.mode == "empty" else (fake.reply(fields) if fake.reply else fake.transcript)
                self._send(200, {"text": text})

        return Handler
