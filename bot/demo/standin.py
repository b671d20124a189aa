"""A local stand-in for the Telegram Bot API (aiohttp, 127.0.0.1): the server the end-to-end tests
run the real bot against, and the "Telegram" of ``interview-bot demo``.

It behaves like Telegram where the bot can tell: ``getUpdates`` long polling with ``offset``,
dates in seconds, ``is_bot`` in ``getMe``, edits that return the message, callback queries with
``chat_instance``, and it is strict: text over 4096 characters (after entity parsing, in UTF-16
units), malformed HTML (unknown or unclosed tags, bad nesting, stray ``<``/``&``), ``callback_data``
over 64 bytes, too many buttons, unknown methods, poll limits — all answered with Telegram's
errors. Users can send voice messages, video notes and audio files: their content is kept, and the
bot gets it as Telegram serves it (``getFile``, then ``/file/bot<token>/<file_path>``; over 20 MB:
"file is too big"). Faults can be injected (429 with ``retry_after``, 403 blocked, 400 ``migrate_to_chat_id``)
and Telegram's rate limits can be enforced.

Tests play the users through a synchronous API (:class:`FakeTelegram` started in a thread of its
own with :meth:`FakeTelegram.start`, :class:`FakeUser`). The demo serves the same routes from its own
web application on its own event loop (:meth:`FakeTelegram.add_routes`, :meth:`FakeTelegram.add_update`)
and follows every change through :attr:`FakeTelegram.on_change`.

Nothing of the bot imports this module: it is loaded only by the demo and the tests.
"""

from __future__ import annotations

import asyncio
import html
import itertools
import json
import re
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import BodyPartReader, web

TOKEN = "123456789:AAFakeTokenForTestsOnly_abcdefghijklmnop"  # noqa: S105 - the tests' token (the demo makes its own)
BOT_ID = 123456789
BOT_USERNAME = "interview_test_bot"

ALLOWED_TAGS = {
    "b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "span", "tg-spoiler", "a",
    "code", "pre", "blockquote", "tg-emoji",
}  # fmt: skip
_TAG_RE = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^<>]*)?)\s*(/?)>")
_ENTITY_RE = re.compile(r"&(#[0-9]{1,7}|#x[0-9a-fA-F]{1,6}|lt|gt|amp|quot);")
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


class ApiError(Exception):
    def __init__(self, code: int, description: str, parameters: dict[str, Any] | None = None):
        super().__init__(description)
        self.code, self.description, self.parameters = code, description, parameters


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


_ENTITY_TYPES = {
    "b": "bold", "strong": "bold", "i": "italic", "em": "italic", "u": "underline", "ins": "underline",
    "s": "strikethrough", "strike": "strikethrough", "del": "strikethrough", "span": "spoiler",
    "tg-spoiler": "spoiler", "a": "text_link", "code": "code", "pre": "pre", "blockquote": "blockquote",
}  # fmt: skip
_ATTR_RE = re.compile(r'([a-zA-Z-]+)\s*=\s*"([^"]*)"')


def parse_html(text: str) -> str:
    """Validate Telegram HTML; return the plain text. Raises ApiError like Telegram does."""
    return parse_html_entities(text)[0]


def parse_html_entities(text: str) -> tuple[str, list[dict[str, Any]]]:
    """Validate Telegram HTML; return the plain text and its entities (offsets and lengths in UTF-16
    code units, as Telegram gives them). Raises ApiError like Telegram does."""
    out: list[str] = []
    entities: list[dict[str, Any]] = []
    stack: list[tuple[str, str, int]] = []  # open tags: name, attributes, UTF-16 offset of the start
    size = 0  # UTF-16 length of the text so far
    pos = 0
    while pos < len(text):
        ch = text[pos]
        if ch == "<":
            m = _TAG_RE.match(text, pos)
            if not m:
                raise ApiError(400, f"Bad Request: can't parse entities: unexpected '<' at byte offset {pos}")
            closing, name, attrs, _selfclose = m.groups()
            name = name.lower()
            if name not in ALLOWED_TAGS:
                raise ApiError(
                    400, f'Bad Request: can\'t parse entities: unsupported start tag "{name}" at offset {pos}'
                )
            if closing:
                if not stack or stack[-1][0] != name:
                    raise ApiError(
                        400, f'Bad Request: can\'t parse entities: unmatched end tag "{name}" at offset {pos}'
                    )
                _, opened_attrs, begin = stack.pop()
                entity = _entity(name, opened_attrs, begin, size - begin, inside=[n for n, _, _ in stack])
                if entity is not None:
                    entities.append(entity)
            else:
                if name == "span" and 'class="tg-spoiler"' not in attrs:
                    raise ApiError(400, "Bad Request: can't parse entities: span without tg-spoiler class")
                if name == "a" and "href=" not in attrs:
                    raise ApiError(400, "Bad Request: can't parse entities: a without href")
                if any(name == n for n, _, _ in stack) and name not in ("code",):
                    raise ApiError(400, f"Bad Request: can't parse entities: nested {name}")
                stack.append((name, attrs or "", size))
            pos = m.end()
            continue
        if ch == "&":
            m = _ENTITY_RE.match(text, pos)
            if not m:
                raise ApiError(400, f"Bad Request: can't parse entities: unsupported entity at byte offset {pos}")
            ch = html.unescape(m.group(0))
            pos = m.end()
        elif ch == ">":
            raise ApiError(400, f"Bad Request: can't parse entities: unexpected '>' at offset {pos}")
        else:
            pos += 1
        out.append(ch)
        size += utf16_len(ch)
    if stack:
        raise ApiError(
            400, f"Bad Request: can't parse entities: can't find end tag corresponding to \"{stack[-1][0]}\""
        )
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return "".join(out), entities


def _entity(name: str, attrs: str, offset: int, length: int, *, inside: list[str]) -> dict[str, Any] | None:
    """The entity a closed tag makes (None for an empty one, a custom emoji, or the ``code`` of a ``pre``)."""
    kind = _ENTITY_TYPES.get(name)
    if kind is None or length <= 0:
        return None
    values = dict(_ATTR_RE.findall(attrs))
    entity: dict[str, Any] = {"type": kind, "offset": offset, "length": length}
    if kind == "text_link":
        entity["url"] = html.unescape(values.get("href", ""))
    elif kind == "code" and "pre" in inside:
        return None  # <pre><code class="language-x">: one pre entity with the language
    elif kind == "blockquote" and re.search(r"\bexpandable\b", attrs):
        entity["type"] = "expandable_blockquote"
    return entity


def check_markup(markup: Any) -> None:
    if markup is None:
        return
    if not isinstance(markup, dict):
        raise ApiError(400, "Bad Request: can't parse reply keyboard markup JSON object")
    rows = markup.get("inline_keyboard")
    if rows is None:
        return
    count = 0
    for row in rows:
        if len(row) > 8:
            raise ApiError(400, "Bad Request: too many buttons in a row")
        for button in row:
            count += 1
            if not button.get("text"):
                raise ApiError(400, "Bad Request: text buttons are unallowed in the inline keyboard")
            data = button.get("callback_data")
            if data is not None and not 1 <= len(data.encode("utf-8")) <= 64:
                raise ApiError(400, "Bad Request: BUTTON_DATA_INVALID")
    if count > 100:
        raise ApiError(400, "Bad Request: reply markup is too long")


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


class FakeTelegram:
    """The fake server. Start with :meth:`start`; its methods are safe to call from tests."""

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

    # -- lifecycle ------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeTelegram:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            loop.run_until_complete(self._start_server())
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._stop_server())
            pending = asyncio.all_tasks(loop)  # a long poll still open when the grace ran out
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()

        self._thread = threading.Thread(target=run, name="fake-telegram", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def add_routes(self, app: web.Application) -> None:
        """The Bot API's routes (``/bot<token>/<method>``, ``/file/bot<token>/<path>``); the updates
        wait on the loop that serves them."""
        self._cond = asyncio.Condition()
        self.polled = asyncio.Event()  # set at the bot's first getUpdates
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_route("*", "/file/bot{token}/{path:.*}", self._file)

    async def _start_server(self) -> None:
        app = web.Application(client_max_size=60 * 1024 * 1024)
        self.add_routes(app)
        # a stop need not wait for idle keep-alive connections (aiohttp's default grace: ~1 s per stop)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])

    async def _stop_server(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def _call(self, coro: Any, timeout: float = 30) -> Any:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    # -- the users' side ------------------------------------------------------------------------
    def private_chat(self, user_id: int) -> Chat:
        with self._lock:
            return self.chats.setdefault(user_id, Chat(user_id, "private"))

    def group(self, chat_id: int, title: str = "Study group", *, admins: set[int] | None = None,
              supergroup: bool = False) -> Chat:  # fmt: skip
        with self._lock:
            chat = self.chats.setdefault(chat_id, Chat(chat_id, "supergroup" if supergroup else "group", title))
            chat.admins |= admins or set()
            return chat

    def user(self, user_id: int, first_name: str = "Anna", language_code: str | None = "ru",
             chat: Chat | None = None) -> FakeUser:  # fmt: skip
        return FakeUser(self, user_id, first_name, language_code, chat or self.private_chat(user_id))

    def push_update(self, update: dict[str, Any]) -> int:
        """Add an update for the bot's next ``getUpdates`` (from another thread than the server's)."""
        result: int = self._call(self.add_update(update))
        return result

    async def add_update(self, update: dict[str, Any]) -> int:
        """Add an update (on the serving loop); returns its update_id."""
        update_id = next(self.update_ids)
        assert self._cond is not None
        async with self._cond:
            self.updates.append({"update_id": update_id, **update})
            self._cond.notify_all()
        return update_id

    def changed(self, sent: Sent | None = None) -> None:
        """Note a change (of ``sent``, which takes the next change number) and tell :attr:`on_change`."""
        if sent is not None:
            sent.seq = next(self.changes)
        if self.on_change is not None:
            self.on_change()

    def new_message_id(self, chat_id: int) -> int:
        return next(self.chats[chat_id].next_message_id)

    # -- fault injection ------------------------------------------------------------------------
    def inject(self, method: str | None, code: int, description: str, *, chat_id: int | None = None,
               parameters: dict[str, Any] | None = None, times: int = 1,
               predicate: Callable[[dict[str, Any]], bool] | None = None) -> None:  # fmt: skip
        with self._lock:
            self.faults.append(Fault(method, chat_id, code, description, parameters, times, predicate))

    def retry_after(self, seconds: int, *, method: str | None = "sendMessage", times: int = 1,
                    chat_id: int | None = None) -> None:  # fmt: skip
        self.inject(method, 429, f"Too Many Requests: retry after {seconds}", chat_id=chat_id,
                    parameters={"retry_after": seconds}, times=times)  # fmt: skip

    def storm_429(self, every: int = 10, *, method: str = "sendMessage") -> None:
        """Answer every ``every``-th call of ``method`` with 429 and retry_after 1..3 s."""
        calls = itertools.count(1)

        def hit(params: dict[str, Any]) -> bool:
            n = next(calls)
            if n % every:
                return False
            seconds = 1 + (n // every) % 3
            self.faults.append(Fault(method, None, 429, f"Too Many Requests: retry after {seconds}",
                                     {"retry_after": seconds}, 1))  # fmt: skip
            return False

        self.inject(method, 429, "unused", times=10**9, predicate=hit)

    def sends_during_pauses(self, method: str = "sendMessage", slack: float = 0.1) -> list[float]:
        """Times of ``method`` calls that arrived while a 429's retry_after was still running."""
        with self._lock:
            calls = [at for m, _, at in self.calls if m == method]
            pauses = list(self.pauses)
        return [at for at in calls for start, length in pauses if start + slack < at < start + length - slack]

    def block(self, chat_id: int) -> None:
        with self._lock:
            self.chats[chat_id].blocked = True

    def migrate(self, chat_id: int, new_id: int) -> None:
        with self._lock:
            old = self.chats[chat_id]
            old.migrated_to = new_id
            self.chats[new_id] = Chat(new_id, "supergroup", old.title, set(old.admins))

    # -- observing the bot ----------------------------------------------------------------------
    def messages(self, chat_id: int | None = None) -> list[Sent]:
        with self._lock:
            return [m for m in self.sent if chat_id is None or m.chat_id == chat_id]

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.02)
        raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")

    def wait_messages(self, chat_id: int, count: int, *, after: int = 0, timeout: float = 10.0) -> list[Sent]:
        self.wait_for(lambda: len(self.messages(chat_id)) >= after + count, timeout,
                      f"{count} message(s) in chat {chat_id} after {after}")  # fmt: skip
        return self.messages(chat_id)[after:]

    def calls_of(self, method: str) -> list[dict[str, Any]]:
        with self._lock:
            return [p for m, p, _ in self.calls if m == method]

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

    # -- methods --------------------------------------------------------------------------------
    async def m_getMe(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**self._bot_user(), "can_join_groups": True, "can_read_all_group_messages": False,
                "supports_inline_queries": True, "can_connect_to_business": False,
                "has_main_web_app": False}  # fmt: skip

    async def m_getUpdates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(params.get("offset") or 0)
        timeout = float(params.get("timeout") or 0)
        limit = int(params.get("limit") or 100)
        self.polled.set()
        assert self._cond is not None
        async with self._cond:
            if offset:
                self.updates = [u for u in self.updates if u["update_id"] >= offset]
                self._last_offset = offset
            if not self.updates and timeout:
                try:
                    await asyncio.wait_for(self._cond.wait_for(lambda: bool(self.updates)), timeout)
                except TimeoutError:
                    pass
            return self.updates[:limit]

    async def m_deleteWebhook(self, params: dict[str, Any]) -> bool:
        self.webhook_url = None
        return True

    async def m_setWebhook(self, params: dict[str, Any]) -> bool:
        self.webhook_url = params.get("url")
        return True

    async def m_getWebhookInfo(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"url": self.webhook_url or "", "has_custom_certificate": False, "pending_update_count": 0}

    async def m_setMyCommands(self, params: dict[str, Any]) -> bool:
        commands = params.get("commands") or []
        for c in commands:
            if not re.fullmatch(r"[a-z0-9_]{1,32}", c["command"]) or not 1 <= len(c["description"]) <= 256:
                raise ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
        self.commands[self._command_key(params)] = commands
        return True

    @staticmethod
    def _command_key(params: dict[str, Any]) -> tuple[str, str]:
        scope = params.get("scope") or {"type": "default"}
        if scope.get("type") not in ("default", "all_private_chats", "all_group_chats", "all_chat_administrators",
                                     "chat", "chat_administrators", "chat_member"):  # fmt: skip
            raise ApiError(400, "Bad Request: BOT_COMMAND_SCOPE_INVALID")
        return str(scope["type"]), params.get("language_code") or ""

    async def m_getMyCommands(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        return self.commands.get(self._command_key(params), [])

    async def m_deleteMyCommands(self, params: dict[str, Any]) -> bool:
        self.commands.pop(self._command_key(params), None)
        return True

    async def m_setChatMenuButton(self, params: dict[str, Any]) -> bool:
        button = params.get("menu_button") or {"type": "default"}
        if button.get("type") == "web_app":
            url = (button.get("web_app") or {}).get("url", "")
            if not url.startswith("https://") or not button.get("text"):
                raise ApiError(400, "Bad Request: BUTTON_URL_INVALID")
        self.menu_buttons[int(params.get("chat_id") or 0)] = button
        return True

    async def m_getChatMenuButton(self, params: dict[str, Any]) -> dict[str, Any]:
        return self.menu_buttons.get(int(params.get("chat_id") or 0), {"type": "default"})

    async def m_sendMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params)
        text, raw = self._text(params)
        check_markup(params.get("reply_markup"))
        rows = (params.get("reply_markup") or {}).get("inline_keyboard") or []
        if chat.type != "private" and any("web_app" in b for row in rows for b in row):
            raise ApiError(400, "Bad Request: BUTTON_TYPE_INVALID")  # web_app buttons: private chats only
        self._rate_check(chat)
        message = self._record(chat, "sendMessage", params, text, raw)
        reply = params.get("reply_parameters") or {}
        reply_id = reply.get("message_id") or params.get("reply_to_message_id")
        if reply_id:
            message["reply_to_message"] = {
                "message_id": reply_id,
                "date": int(time.time()),
                "chat": chat.as_dict(),
            }
        return message

    async def m_sendChatAction(self, params: dict[str, Any]) -> bool:
        self._chat(params)
        return True

    async def m_editMessageText(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params)
        text, raw = self._text(params)
        check_markup(params.get("reply_markup"))
        message_id = params.get("message_id")
        with self._lock:
            for sent in self.sent:
                if sent.chat_id == chat.id and sent.message_id == message_id:
                    if sent.raw == raw and sent.reply_markup == params.get("reply_markup"):
                        raise ApiError(400, "Bad Request: message is not modified")
                    sent.text, sent.raw = text, raw
                    sent.reply_markup = params.get("reply_markup")
                    sent.params = {**sent.params, **{k: v for k, v in params.items() if k != "message_id"}}
                    sent.edited = True
                    break
            else:
                raise ApiError(400, "Bad Request: message to edit not found")
        self.changed(sent)
        return {"message_id": message_id, "date": int(time.time()), "edit_date": int(time.time()),
                "chat": chat.as_dict(), "from": self._bot_user(), "text": text}  # fmt: skip

    async def m_editMessageReplyMarkup(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params)
        check_markup(params.get("reply_markup"))
        message_id = params.get("message_id")
        with self._lock:
            for sent in self.sent:
                if sent.chat_id == chat.id and sent.message_id == message_id:
                    sent.reply_markup = params.get("reply_markup")
                    self.changed(sent)
                    return {"message_id": message_id, "date": int(time.time()),
                            "chat": chat.as_dict(), "from": self._bot_user(), "text": sent.text}  # fmt: skip
        raise ApiError(400, "Bad Request: message to edit not found")

    async def m_deleteMessage(self, params: dict[str, Any]) -> bool:
        self._chat(params)
        return True

    async def m_answerCallbackQuery(self, params: dict[str, Any]) -> bool:
        if len(params.get("text") or "") > 200:
            raise ApiError(400, "Bad Request: MESSAGE_TOO_LONG")
        with self._lock:
            if any(a.get("callback_query_id") == params.get("callback_query_id") for a in self.callback_answers):
                raise ApiError(400, "Bad Request: query is too old and response timeout expired or query ID is invalid")
            self.callback_answers.append(params)
        self.changed()
        return True

    async def m_answerInlineQuery(self, params: dict[str, Any]) -> bool:
        """Checked as Telegram does: at most 50 results, unique ids of 1-64 bytes, an article's title
        and message text (entities parsed, <= 4096), URL buttons, next_offset <= 64 bytes."""
        query_id = str(params.get("inline_query_id") or "")
        if query_id not in self.inline_queries or query_id in self.inline_answers:
            raise ApiError(400, "Bad Request: query is too old and response timeout expired or query ID is invalid")
        results = params.get("results") or []
        if len(results) > 50:
            raise ApiError(400, "Bad Request: RESULTS_TOO_MUCH")
        ids = [str(r.get("id", "")) for r in results]
        if len(set(ids)) != len(ids) or not all(1 <= len(i.encode()) <= 64 for i in ids):
            raise ApiError(400, "Bad Request: RESULT_ID_INVALID")
        for r in results:
            if r.get("type") != "article" or not str(r.get("title", "")).strip():
                raise ApiError(400, "Bad Request: RESULT_TITLE_EMPTY")
            self._text(r.get("input_message_content") or {}, "message_text")
            for row in (r.get("reply_markup") or {}).get("inline_keyboard") or []:
                for button in row:
                    if not str(button.get("url", "")).startswith(("https://", "tg://")):
                        raise ApiError(400, "Bad Request: BUTTON_URL_INVALID")
        if len(str(params.get("next_offset") or "").encode()) > 64:
            raise ApiError(400, "Bad Request: NEXT_OFFSET_INVALID")
        self.inline_answers[query_id] = params
        return True

    async def m_getChatMember(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params)
        user_id = int(params["user_id"])
        status = "administrator" if user_id in chat.admins else "left" if user_id in chat.left else "member"
        user = {"id": user_id, "is_bot": False, "first_name": f"User{user_id}"}
        if status == "administrator":
            return {"status": status, "user": user, "can_be_edited": False, "is_anonymous": False,
                    "can_manage_chat": True, "can_delete_messages": True,
                    "can_manage_video_chats": True, "can_restrict_members": True,
                    "can_promote_members": False, "can_change_info": True,
                    "can_invite_users": True, "can_post_stories": False, "can_edit_stories": False,
                    "can_delete_stories": False}  # fmt: skip
        return {"status": status, "user": user}

    async def m_sendPoll(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(params)
        question = params.get("question") or ""
        options = params.get("options") or []
        if not 1 <= len(question) <= 300:
            raise ApiError(400, "Bad Request: poll question length must be 1-300")
        if not 2 <= len(options) <= 12:
            raise ApiError(400, "Bad Request: poll must have 2-12 options")
        texts = [o["text"] if isinstance(o, dict) else str(o) for o in options]
        if any(not 1 <= len(o) <= 100 for o in texts):
            raise ApiError(400, "Bad Request: poll options length must not exceed 100")
        explanation = params.get("explanation") or ""
        if len(explanation) > 200 or explanation.count("\n") > 2:
            raise ApiError(400, "Bad Request: explanation is too long")
        self._rate_check(chat)
        message = self._record(chat, "sendPoll", params, question, question)
        poll_id = f"poll{message['message_id']}_{chat.id}"
        correct = params.get("correct_option_ids") or (
            [int(params["correct_option_id"])] if params.get("correct_option_id") is not None else []
        )
        poll = {
            "id": poll_id, "question": question,
            "options": [{"text": o, "voter_count": 0, "persistent_id": str(i)} for i, o in enumerate(texts)],
            "total_voter_count": 0, "is_closed": False,
            "is_anonymous": bool(params.get("is_anonymous", True)),
            "type": params.get("type") or "regular", "allows_multiple_answers": False,
            "allows_revoting": False, "members_only": False,
        }  # fmt: skip
        if poll["type"] == "quiz" and correct:
            poll["correct_option_id"] = correct[0]
        self.polls[poll_id] = {**poll, "chat_id": chat.id, "message_id": message["message_id"]}
        message["poll"] = poll
        return message

    async def _send_file(self, params: dict[str, Any], field_name: str, method: str) -> dict[str, Any]:
        chat = self._chat(params)
        document = params.get(field_name)
        if not document:
            raise ApiError(400, f"Bad Request: there is no {field_name} in the request")
        caption = params.get("caption")
        text = ""
        if caption:
            text, _ = self._text(params, "caption", 1024)
        self._rate_check(chat)
        message = self._record(chat, method, params, text, caption or "")
        if isinstance(document, dict):
            info = {"file_id": f"file{message['message_id']}", "file_unique_id": f"u{message['message_id']}"}
            if field_name == "photo":
                message["photo"] = [{**info, "width": 100, "height": 100}]
            else:
                message["document"] = {**info, "file_name": document.get("filename")}
        return message

    async def m_sendDocument(self, params: dict[str, Any]) -> dict[str, Any]:
        return await self._send_file(params, "document", "sendDocument")

    async def m_sendPhoto(self, params: dict[str, Any]) -> dict[str, Any]:
        return await self._send_file(params, "photo", "sendPhoto")


class FakeUser:
    """A person in a chat: sends messages, replies, presses buttons, edits, answers polls."""

    def __init__(self, fake: FakeTelegram, user_id: int, first_name: str, language_code: str | None,
                 chat: Chat) -> None:  # fmt: skip
        self.fake, self.id, self.first_name, self.language_code = fake, user_id, first_name, language_code
        self.chat = chat

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "is_bot": False, "first_name": self.first_name}
        if self.language_code:
            data["language_code"] = self.language_code
        return data

    def in_chat(self, chat: Chat) -> FakeUser:
        return FakeUser(self.fake, self.id, self.first_name, self.language_code, chat)

    def _message(self, text: str, reply_to: int | None = None, message_id: int | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {
            "message_id": message_id or self.fake.new_message_id(self.chat.id),
            "date": int(time.time()),
            "chat": self.chat.as_dict(),
            "from": self.as_dict(),
            "text": text,
        }
        if text.startswith("/"):
            command = text.split()[0]
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": utf16_len(command)}]
        if reply_to is not None:
            original = next((m for m in self.fake.messages(self.chat.id) if m.message_id == reply_to), None)
            message["reply_to_message"] = {
                "message_id": reply_to, "date": int(time.time()), "chat": self.chat.as_dict(),
                "from": self.fake._bot_user(), "text": original.text if original else "…",
            }  # fmt: skip
        return message

    def mark(self) -> None:
        """The next :meth:`expect` waits for bot messages sent after this point."""
        self._seen = len(self.fake.messages(self.chat.id))

    def send(self, text: str, *, reply_to: int | None = None) -> int:
        """Send a message; returns its message id."""
        self.mark()
        message = self._message(text, reply_to)
        self.fake.push_update({"message": message})
        return int(message["message_id"])

    def message_update(self, text: str, *, reply_to: int | None = None) -> dict[str, Any]:
        """The update of a message from this user (for :meth:`FakeTelegram.add_update`)."""
        return {"message": self._message(text, reply_to)}

    def edit(self, message_id: int, text: str) -> None:
        self.mark()
        message = self._message(text, message_id=message_id)
        message["edit_date"] = int(time.time())
        self.fake.push_update({"edited_message": message})

    def send_voice(self, content: bytes, duration: int, *, kind: str = "voice", reply_to: int | None = None,
                   file_size: int | None = None) -> int:  # fmt: skip
        """Send a voice message (``kind``: voice, video_note or audio) with this audio; ``file_size``
        overrides the size Telegram reports. Returns the message id."""
        self.mark()
        update = self.voice_update(content, duration, kind=kind, reply_to=reply_to, file_size=file_size)
        self.fake.push_update(update)
        return int(update["message"]["message_id"])

    def voice_update(self, content: bytes, duration: int, *, kind: str = "voice", reply_to: int | None = None,
                     file_size: int | None = None) -> dict[str, Any]:  # fmt: skip
        """The update of a voice message (see :meth:`send_voice`); the file is kept for ``getFile``."""
        extension, folder = {"voice": ("oga", "voice"), "video_note": ("mp4", "video_notes"),
                             "audio": ("mp3", "music")}[kind]  # fmt: skip
        file_id, unique_id = self.fake.add_file(content, extension, folder)
        media: dict[str, Any] = {"file_id": file_id, "file_unique_id": unique_id, "duration": duration,
                                 "file_size": len(content) if file_size is None else file_size}  # fmt: skip
        if kind == "voice":
            media["mime_type"] = "audio/ogg"
        elif kind == "video_note":
            media["length"] = 240
        else:
            media.update(mime_type="audio/mpeg", file_name="answer.mp3")
        message = self._message("", reply_to)
        del message["text"]
        message[kind] = media
        return {"message": message}

    def send_sticker(self) -> None:
        self.mark()
        message = {
            "message_id": self.fake.new_message_id(self.chat.id), "date": int(time.time()),
            "chat": self.chat.as_dict(), "from": self.as_dict(),
            "sticker": {"file_id": "s1", "file_unique_id": "s1u", "width": 512, "height": 512,
                        "is_animated": False, "is_video": False, "type": "regular"},
        }  # fmt: skip
        self.fake.push_update({"message": message})

    def press(self, message: Sent, data: str) -> str:
        self.mark()
        query_id = f"cq{time.monotonic_ns()}"
        self.fake.push_update(self.press_update(message, data, query_id))
        return query_id

    def press_update(self, message: Sent, data: str, query_id: str) -> dict[str, Any]:
        """The update of a press on a button of ``message`` (a callback query with ``query_id``)."""
        return {
            "callback_query": {
                "id": query_id, "from": self.as_dict(), "chat_instance": f"ci{self.chat.id}",
                "data": data,
                "message": {"message_id": message.message_id, "date": int(message.at),
                            "chat": self.chat.as_dict(), "from": self.fake._bot_user(),
                            "text": message.text,
                            # as Telegram does: the message carries its current inline keyboard
                            **({"reply_markup": message.reply_markup} if message.reply_markup else {})},
            }
        }  # fmt: skip

    def inline_query(self, text: str, offset: str = "") -> str:
        """Type ``@bot text`` in some chat: an inline query; returns its id (see inline_answers)."""
        query_id = f"iq{time.monotonic_ns()}"
        self.fake.inline_queries.add(query_id)
        self.fake.push_update(
            {"inline_query": {"id": query_id, "from": self.as_dict(), "query": text, "offset": offset,
                              "chat_type": "sender"}}
        )  # fmt: skip
        return query_id

    def answer_poll(self, poll_id: str, option: int | None) -> None:
        """Tap an option of a poll (None: retract the vote)."""
        self.fake.push_update(self.poll_answer_update(poll_id, option))

    def poll_answer_update(self, poll_id: str, option: int | None) -> dict[str, Any]:
        options = [] if option is None else [option]
        return {
            "poll_answer": {
                "poll_id": poll_id,
                "user": self.as_dict(),
                "option_ids": options,
                "option_persistent_ids": [str(o) for o in options],
            }
        }

    _seen = 0

    def expect(self, count: int = 1, timeout: float = 10.0) -> list[Sent]:
        """Wait for the bot's next ``count`` messages in this chat since the last action."""
        before = self._seen
        got = self.fake.wait_messages(self.chat.id, count, after=before, timeout=timeout)[:count]
        self._seen = before + count
        return got

    def quiet(self, seconds: float = 0.5) -> list[Sent]:
        """Messages the bot sent since the last action, after waiting a little (for "no reply")."""
        time.sleep(seconds)
        return self.fake.messages(self.chat.id)[self._seen :]
