"""The stand-in's Bot API server side: its state (chats, updates, the messages the bot sent,
faults to inject), the HTTP routes the bot calls (``/bot<token>/<method>``, ``/file/bot<token>/…``)
and what the methods share (checking a chat, rates and texts, recording a message). The methods
themselves are in :mod:`bot.demo.bot_methods`; :mod:`bot.demo.standin` drives it all."""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import BodyPartReader, web

from bot.demo.markup import ApiError, parse_html, utf16_len

TOKEN = "123456789:AAFakeTokenForTestsOnly_abcdefghijklmnop"  # noqa: S105 - the tests' token (the demo makes its own)
BOT_ID = 123456789
BOT_USERNAME = "interview_test_bot"

INT_FIELDS = {
    "chat_id", "message_id", "offset", "limit", "timeout", "reply_to_message_id", "user_id",
    "from_chat_id", "open_period", "message_thread_id",
}  # fmt: skip
JSON_FIELDS = {
    "reply_markup", "entities", "commands", "allowed_updates", "options", "reply_parameters",
    "link_preview_options", "scope", "correct_option_ids", "caption_entities",
    "explanation_entities", "question_entities", "results", "button", "menu_button",
}  # fmt: skip
BOOL_FIELDS = {
    "disable_web_page_preview", "disable_notification", "is_anonymous", "show_alert",
    "allow_paid_broadcast", "drop_pending_updates", "protect_content",
    "allow_sending_without_reply", "allows_multiple_answers",
}  # fmt: skip


@dataclass
class Chat:
    id: int
    type: str
    title: str | None = None
    admins: set[int] = field(default_factory=set)
    left: set[int] = field(default_factory=set)  # users who are not (or no longer) members
    blocked: bool = False
    migrated_to: int | None = None
    next_message_id: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "type": self.type}
        if self.title:
            data["title"] = self.title
        return data


@dataclass
class Sent:
    """A message the bot sent (or a user message, in the chat log)."""

    chat_id: int
    message_id: int
    text: str  # plain text after parsing
    raw: str
    reply_markup: Any
    method: str
    params: dict[str, Any]
    at: float
    seq: int = 0  # the stand-in's change counter when this message was sent or last changed
    edited: bool = False

    def buttons(self) -> list[tuple[str, str]]:
        rows = (self.reply_markup or {}).get("inline_keyboard") or []
        return [(b["text"], b.get("callback_data", "")) for row in rows for b in row]

    def button(self, label: str) -> str:
        for text, data in self.buttons():
            if label in text:
                return data
        raise AssertionError(f"no button {label!r} in {self.buttons()}")


@dataclass
class Fault:
    method: str | None
    chat_id: int | None
    code: int
    description: str
    parameters: dict[str, Any] | None
    times: int
    predicate: Callable[[dict[str, Any]], bool] | None = None


class BotApiServer:
    """The server's state and its HTTP side; the methods (``m_<method>``) come with subclasses."""

    def __init__(
        self, *, strict_rates: bool = False, overall_rate: int = 30, token: str = TOKEN, username: str = BOT_USERNAME
    ) -> None:
        self.token = token
        self.bot_id = int(token.partition(":")[0])  # as Telegram's: the token's number
        self.username = username
        self.strict_rates = strict_rates
        self.overall_rate = overall_rate
        self.chats: dict[int, Chat] = {}
        self.updates: list[dict[str, Any]] = []
        self.update_ids = itertools.count(1)
        self.sent: list[Sent] = []
        self.calls: list[tuple[str, dict[str, Any], float]] = []
        self.faults: list[Fault] = []
        self.commands: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.callback_answers: list[dict[str, Any]] = []
        self.inline_answers: dict[str, dict[str, Any]] = {}  # inline query id -> answerInlineQuery params
        self.inline_queries: set[str] = set()
        self.polls: dict[str, dict[str, Any]] = {}
        self.rate_violations: list[str] = []
        self.pauses: list[tuple[float, float]] = []  # (when a 429 was returned, retry_after)
        self.webhook_url: str | None = None
        self.menu_buttons: dict[int, dict[str, Any]] = {}  # chat id (0: the default) -> menu button
        self._send_times: deque[float] = deque()
        self._chat_times: dict[int, deque[float]] = defaultdict(deque)
        self._cond: asyncio.Condition | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._lock = threading.Lock()
        self._last_offset = 0
        self.port = 0
        self.bot_delay = 0.0  # seconds to sleep inside each bot API call (simulate latency)
        self.method_delay: dict[str, float] = {}  # per method, instead of bot_delay
        self.files: dict[str, tuple[str, bytes]] = {}  # file_id -> (file_path, content) sent by users
        self.file_ids = itertools.count(1)
        self.downloads: list[str] = []  # file paths the bot downloaded
        self.changes = itertools.count(1)  # every sent or changed message takes the next number (Sent.seq)
        # called on the serving loop after a message is sent or changed or a callback is answered (the demo)
        self.on_change: Callable[[], None] | None = None
        self.polled = asyncio.Event()

    def changed(self, sent: Sent | None = None) -> None:
        """Note a change (of ``sent``, which takes the next change number) and tell :attr:`on_change`."""
        if sent is not None:
            sent.seq = next(self.changes)
        if self.on_change is not None:
            self.on_change()

    def new_message_id(self, chat_id: int) -> int:
        return next(self.chats[chat_id].next_message_id)

    # -- HTTP -----------------------------------------------------------------------------------
    async def _params(self, request: web.Request) -> dict[str, Any]:
        params: dict[str, Any] = dict(request.query)
        if request.content_type == "application/json":  # native JSON values, or strings as in a form
            try:
                body = await request.json()
            except ValueError as exc:
                raise ApiError(400, "Bad Request: can't parse JSON body") from exc
            if not isinstance(body, dict):
                raise ApiError(400, "Bad Request: JSON body must be an object")
            params.update(body)
        elif request.can_read_body:
            if request.content_type.startswith("multipart/"):
                reader = await request.multipart()
                async for part in reader:
                    if not isinstance(part, BodyPartReader) or part.name is None:
                        continue
                    if part.filename:
                        params[part.name] = {"filename": part.filename, "content": bytes(await part.read())}
                    else:
                        params[part.name] = await part.text()
            else:
                params.update(await request.post())
        for key, value in list(params.items()):
            if not isinstance(value, str):
                continue
            if key in INT_FIELDS:
                try:
                    params[key] = int(value)
                except ValueError:
                    pass
            elif key in JSON_FIELDS:
                try:
                    params[key] = json.loads(value)
                except ValueError as exc:
                    raise ApiError(400, f"Bad Request: can't parse {key} JSON") from exc
            elif key in BOOL_FIELDS:
                params[key] = value.lower() == "true"
        return params

    async def _handle(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return web.json_response({"ok": False, "error_code": 401, "description": "Unauthorized"}, status=401)
        method = request.match_info["method"]
        try:
            params = await self._params(request)
            with self._lock:
                self.calls.append((method, params, time.monotonic()))
            delay = self.method_delay.get(method, self.bot_delay if method != "getUpdates" else 0.0)
            if delay:
                await asyncio.sleep(delay)
            handler = getattr(self, f"m_{method}", None)
            if handler is None:
                raise ApiError(404, "Not Found: method not found")
            self._fault(method, params)
            result = await handler(params)
        except ApiError as err:
            body: dict[str, Any] = {"ok": False, "error_code": err.code, "description": err.description}
            if err.parameters:
                body["parameters"] = err.parameters
            return web.json_response(body, status=err.code)
        return web.json_response({"ok": True, "result": result})

    async def _file(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return web.Response(status=401)
        path = request.match_info["path"]
        with self._lock:
            found = next((content for file_path, content in self.files.values() if file_path == path), None)
            if found is not None:
                self.downloads.append(path)
        if found is None:
            return web.json_response({"ok": False, "error_code": 404, "description": "Not Found"}, status=404)
        return web.Response(body=found, content_type="application/octet-stream")

    def add_file(self, content: bytes, extension: str = "oga", folder: str = "voice") -> tuple[str, str]:
        """Keep a file a user sent; returns its (file_id, file_unique_id)."""
        n = next(self.file_ids)
        file_id = f"AwACAgIAAxkBAAI{n:06d}voice"
        with self._lock:
            self.files[file_id] = (f"{folder}/file_{n}.{extension}", content)
        return file_id, f"AgAD{n:06d}"

    async def m_getFile(self, params: dict[str, Any]) -> dict[str, Any]:
        file_id = str(params.get("file_id") or "")
        with self._lock:
            found = self.files.get(file_id)
        if found is None:
            raise ApiError(400, "Bad Request: invalid file_id")
        path, content = found
        if len(content) > 20 * 1024 * 1024:
            raise ApiError(400, "Bad Request: file is too big")
        return {"file_id": file_id, "file_unique_id": f"u{file_id[-12:]}", "file_size": len(content),
                "file_path": path}  # fmt: skip

    def _fault(self, method: str, params: dict[str, Any]) -> None:
        chat_id = params.get("chat_id")
        with self._lock:
            for fault in self.faults:
                if fault.times <= 0:
                    continue
                if fault.method not in (None, method):
                    continue
                if fault.chat_id is not None and fault.chat_id != chat_id:
                    continue
                if fault.predicate is not None and not fault.predicate(params):
                    continue
                fault.times -= 1
                if fault.code == 429 and fault.parameters:
                    self.pauses.append((time.monotonic(), float(fault.parameters["retry_after"])))
                raise ApiError(fault.code, fault.description, fault.parameters)

    def _chat(self, params: dict[str, Any]) -> Chat:
        chat_id = params.get("chat_id")
        if not isinstance(chat_id, int):
            raise ApiError(400, "Bad Request: chat_id is empty")
        with self._lock:
            chat = self.chats.get(chat_id)
        if chat is None:
            raise ApiError(400, "Bad Request: chat not found")
        if chat.migrated_to is not None:
            raise ApiError(
                400,
                "Bad Request: group chat was upgraded to a supergroup chat",
                {"migrate_to_chat_id": chat.migrated_to},
            )
        if chat.blocked:
            if chat.type == "private":
                raise ApiError(403, "Forbidden: bot was blocked by the user")
            raise ApiError(403, "Forbidden: bot was kicked from the group chat")
        return chat

    def _rate_check(self, chat: Chat) -> None:
        if not self.strict_rates:
            return
        now = time.monotonic()
        window = self._send_times
        while window and now - window[0] > 1.0:
            window.popleft()
        if len(window) >= self.overall_rate:
            self.rate_violations.append(f"overall>{self.overall_rate}/s")
            raise ApiError(429, "Too Many Requests: retry after 1", {"retry_after": 1})
        per_chat = self._chat_times[chat.id]
        span = 60.0 if chat.type != "private" else 1.0
        limit = 20 if chat.type != "private" else 3
        while per_chat and now - per_chat[0] > span:
            per_chat.popleft()
        if len(per_chat) >= limit:
            self.rate_violations.append(f"chat {chat.id}")
            raise ApiError(429, "Too Many Requests: retry after 3", {"retry_after": 3})
        window.append(now)
        per_chat.append(now)

    def _bot_user(self) -> dict[str, Any]:
        return {"id": self.bot_id, "is_bot": True, "first_name": "Interview", "username": self.username}

    def _record(self, chat: Chat, method: str, params: dict[str, Any], text: str, raw: str) -> dict[str, Any]:
        message_id = next(chat.next_message_id)
        sent = Sent(chat.id, message_id, text, raw, params.get("reply_markup"), method, params, time.time())
        with self._lock:
            self.sent.append(sent)
        self.changed(sent)
        message: dict[str, Any] = {
            "message_id": message_id,
            "date": int(time.time()),
            "chat": chat.as_dict(),
            "from": self._bot_user(),
        }
        if text:
            message["text"] = text
        if params.get("reply_markup") and "inline_keyboard" in params["reply_markup"]:
            message["reply_markup"] = params["reply_markup"]
        return message

    def _text(self, params: dict[str, Any], key: str = "text", limit: int = 4096) -> tuple[str, str]:
        raw = params.get(key)
        if not isinstance(raw, str) or not raw:
            raise ApiError(400, f"Bad Request: message {key} is empty")
        mode = (params.get("parse_mode") or "").upper()
        if mode == "HTML":
            text = parse_html(raw)
        elif mode:
            text = raw  # MarkdownV2 is not used by this bot; accept without checking
        else:
            text = raw
        if not text.strip():
            raise ApiError(400, f"Bad Request: message {key} is empty")
        if utf16_len(text) > limit:
            raise ApiError(
                400,
                "Bad Request: message is too long" if key == "text" else "Bad Request: caption is too long",
            )
        return text, raw
