"""The demo's web chat over HTTP: the page (``/``) and the JSON API behind it (``/demo/api/…``,
documented in the README). The demo users' messages, presses and votes become updates of the
stand-in (:mod:`bot.demo.standin`), as a Telegram client's would; the bot's messages are read back
as the page shows them."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import mimetypes
import time
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from aiohttp import BodyPartReader, web

from bot.config import Settings
from bot.core import initdata
from bot.demo.standin import Chat, FakeTelegram, FakeUser, Sent, parse_html_entities

log = logging.getLogger(__name__)

USERNAME = "interview_demo_bot"
GROUP_ID = -1_000_500
USERS = {1: 700_001, 2: 700_002}  # demo user number -> Telegram user id (also the private chat's id)
NAMES = {"ru": ("Анна", "Борис", "Демо-группа"), "en": ("Anna", "Boris", "Demo group")}
MAX_WAIT = 60.0  # seconds a /demo/api/messages call may wait
PRESS_WAIT = 15.0  # seconds /demo/api/press waits for the bot's answer to the callback
MAX_UPLOAD = 20 * 1024 * 1024  # Telegram's download limit for bots
THEME = {"bg_color": "#ffffff", "text_color": "#000000", "hint_color": "#707579", "link_color": "#3390ec",
         "button_color": "#3390ec", "button_text_color": "#ffffff", "secondary_bg_color": "#f4f4f5"}  # fmt: skip
STATIC = {"/": ("index.html", "text/html"), "/demo/chat.js": ("chat.js", "text/javascript")}
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "frame-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'"
)


class BadRequest(Exception):
    """A request the API refuses: a 400 with this one line."""


class Demo:
    """The web chat's side of the stand-in: the demo users, their messages and the JSON API."""

    def __init__(self, standin: FakeTelegram, settings: Settings) -> None:
        self.standin = standin
        self.settings = settings
        self.language = settings.default_language
        first, second, title = NAMES.get(self.language, NAMES["en"])
        self.names = {1: first, 2: second}
        self.group = standin.group(GROUP_ID, title, admins={USERS[1]})
        self.own: list[Sent] = []  # the demo users' messages (the stand-in keeps only the bot's)
        self.votes: dict[str, dict[int, int]] = {}  # poll id -> demo user -> option
        self._changed = asyncio.Event()
        standin.on_change = self._wake

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def _until(self, ready: Callable[[], bool], seconds: float) -> bool:
        """Wait (at most ``seconds``) until ``ready()``, waking at every change of the stand-in."""
        deadline = time.monotonic() + seconds
        while True:
            changed = self._changed
            if ready():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), left)

    # -- who and where ---------------------------------------------------------------------------
    def chat(self, name: object, user: int) -> Chat:
        if name in (None, "private"):
            return self.standin.private_chat(USERS[user])
        if name == "group":
            return self.group
        raise BadRequest('chat: expected "private" or "group"')

    def user(self, chat: Chat, number: int) -> FakeUser:
        return self.standin.user(USERS[number], self.names[number], language_code=self.language, chat=chat)

    # -- the chat as a person sees it ------------------------------------------------------------
    def history(self, chat: Chat) -> list[Sent]:
        own = [m for m in self.own if m.chat_id == chat.id]
        return sorted([*self.standin.messages(chat.id), *own], key=lambda m: m.message_id)

    def view(self, sent: Sent) -> dict[str, Any]:
        """A message as the web chat shows it: ``text`` is what a person reads."""
        params = sent.params
        out: dict[str, Any] = {"id": sent.message_id, "from": "bot" if sent.method != "user" else "user"}
        if sent.method == "user":
            number = int(params["user"])
            out.update(user=number, name=self.names[number])
        out["text"] = sent.text
        entities = _entities(sent)
        if entities:
            out["entities"] = entities
        reply = (params.get("reply_parameters") or {}).get("message_id") or params.get("reply_to_message_id")
        if reply:
            out["reply_to"] = int(reply)
        markup = sent.reply_markup or {}
        if markup.get("inline_keyboard"):
            out["buttons"] = [[_button(b) for b in row] for row in markup["inline_keyboard"]]
        if markup.get("keyboard"):
            out["keyboard"] = [
                [b["text"] if isinstance(b, dict) else str(b) for b in row] for row in markup["keyboard"]
            ]
        if markup.get("remove_keyboard"):
            out["keyboard"] = []
        if sent.method == "sendPoll":
            out["poll"] = self._poll(sent)
        for kind in ("document", "photo"):
            if sent.method == f"send{kind.title()}":
                item = params.get(kind)
                url = f"/demo/file/{sent.chat_id}/{sent.message_id}"
                name = item.get("filename") if isinstance(item, dict) else None
                out[kind] = {"name": name or kind, **({"url": url} if isinstance(item, dict) else {})}
        if params.get("voice"):
            out["voice"] = True
        if sent.edited:
            out["edited"] = True
        return out

    def _poll(self, sent: Sent) -> dict[str, Any]:
        poll_id = f"poll{sent.message_id}_{sent.chat_id}"
        poll = self.standin.polls.get(poll_id, {})
        votes = self.votes.get(poll_id, {})
        options = [o["text"] for o in poll.get("options", [])]
        out: dict[str, Any] = {
            "id": poll_id,
            "question": poll.get("question", sent.text),
            "options": options,
            "counts": [sum(1 for v in votes.values() if v == i) for i in range(len(options))],
            "type": poll.get("type", "regular"),
            "votes": {str(user): option for user, option in votes.items()},
        }
        if "correct_option_id" in poll:
            out["correct"] = poll["correct_option_id"]
        if sent.params.get("explanation"):
            out["explanation"] = sent.params["explanation"]
        return out

    # -- the API ---------------------------------------------------------------------------------
    async def info(self, request: web.Request) -> web.Response:
        menu = self.standin.menu_buttons.get(0) or {}
        return _ok(
            {
                "bot": {"name": "Interview", "username": self.standin.username},
                "language": self.language,
                "users": [{"n": n, "name": name} for n, name in self.names.items()],
                "group": {"title": self.group.title},
                "voice": self.settings.stt != "off",
                "menu": {"text": menu.get("text"), "url": (menu.get("web_app") or {}).get("url")}
                if menu.get("type") == "web_app"
                else None,
            }
        )

    async def send(self, request: web.Request) -> web.Response:
        body = await _body(request)
        text = body.get("text")
        if not isinstance(text, str) or not text.strip():
            raise BadRequest("text: expected a non-empty string")
        if len(text) > 4096:
            raise BadRequest("text: at most 4096 characters (as Telegram)")
        number = _user(body)
        chat = self.chat(body.get("chat"), number)
        reply_to = _optional_int(body, "reply_to")
        user = self.user(chat, number)
        update = user.message_update(text, reply_to=reply_to)
        self._remember(chat, update["message"]["message_id"], text, number, reply_to)
        await self.standin.add_update(update)
        return _ok({"ok": True, "id": update["message"]["message_id"]})

    def _remember(
        self, chat: Chat, message_id: int, text: str, number: int, reply_to: int | None, *, voice: bool = False
    ) -> None:
        params: dict[str, Any] = {"user": number, **({"reply_to_message_id": reply_to} if reply_to else {})}
        if voice:
            params["voice"] = True
        sent = Sent(chat.id, message_id, text, text, None, "user", params, time.time())
        self.own.append(sent)
        self.standin.changed(sent)

    async def messages(self, request: web.Request) -> web.Response:
        query = request.query
        number = _user(dict(query))
        chat = self.chat(query.get("chat"), number)
        after = _query_number(query, "after", 0)
        wait = min(max(_query_number(query, "wait", 0), 0), MAX_WAIT)
        await self._until(lambda: any(m.seq > after for m in self.history(chat)), wait)
        changed = [m for m in self.history(chat) if m.seq > after]
        cursor = max([after, *(m.seq for m in changed)])
        return _ok({"messages": [self.view(m) for m in changed], "next": cursor})

    async def press(self, request: web.Request) -> web.Response:
        body = await _body(request)
        number = _user(body)
        chat = self.chat(body.get("chat"), number)
        message_id = _optional_int(body, "message_id")
        data = body.get("data")
        if message_id is None or not isinstance(data, str):
            raise BadRequest("message_id and data: the message and the button's data to press")
        message = next((m for m in self.standin.messages(chat.id) if m.message_id == message_id), None)
        if message is None:
            raise BadRequest(f"message_id: no message {message_id} of the bot in this chat")
        if data not in (d for _, d in message.buttons()):
            raise BadRequest("data: that message has no button with this data")
        query_id = f"cq{time.monotonic_ns()}"
        await self.standin.add_update(self.user(chat, number).press_update(message, data, query_id))

        def answer() -> dict[str, Any] | None:
            found = (a for a in self.standin.callback_answers if a.get("callback_query_id") == query_id)
            return next(found, None)

        await self._until(lambda: answer() is not None, PRESS_WAIT)
        out: dict[str, Any] = {"ok": True}
        given = answer()
        if given and given.get("text"):
            out["notice"] = given["text"]
            if given.get("show_alert"):
                out["alert"] = True
        return _ok(out)

    async def vote(self, request: web.Request) -> web.Response:
        body = await _body(request)
        number = _user(body)
        chat = self.chat(body.get("chat"), number)
        poll_id = body.get("poll_id")
        poll = self.standin.polls.get(poll_id) if isinstance(poll_id, str) else None
        if poll is None or poll["chat_id"] != chat.id:
            raise BadRequest("poll_id: no such poll in this chat")
        option = _optional_int(body, "option")
        if option is None or not 0 <= option < len(poll["options"]):
            raise BadRequest(f"option: expected 0..{len(poll['options']) - 1}")
        votes = self.votes.setdefault(poll["id"], {})
        if number in votes:
            raise BadRequest("this user has already voted in this poll")
        votes[number] = option
        await self.standin.add_update(self.user(chat, number).poll_answer_update(poll["id"], option))
        message = next((m for m in self.standin.messages(chat.id) if m.message_id == poll["message_id"]), None)
        if message is not None:
            self.standin.changed(message)
        return _ok({"ok": True})

    async def voice(self, request: web.Request) -> web.Response:
        """A file sent as a voice message (multipart: ``file``, ``chat``, ``user``, ``reply_to``)."""
        if self.settings.stt == "off":
            raise BadRequest("voice answers are off in this demo: set STT (see the README) and start it again")
        if not request.content_type.startswith("multipart/"):
            raise BadRequest("expected multipart/form-data with a file")
        fields: dict[str, Any] = {}
        content, filename = b"", ""
        reader = await request.multipart()
        async for part in reader:
            if not isinstance(part, BodyPartReader) or part.name is None:
                continue
            if part.name == "file":
                content, filename = bytes(await part.read()), part.filename or ""
            else:
                fields[part.name] = await part.text()
        if not content:
            raise BadRequest("file: empty or missing")
        number = _user(fields)
        chat = self.chat(fields.get("chat"), number)
        reply_to = _optional_int(fields, "reply_to")
        kind = "voice" if filename.lower().endswith((".ogg", ".oga", ".opus")) else "audio"
        update = self.user(chat, number).voice_update(content, 0, kind=kind, reply_to=reply_to)
        self._remember(chat, update["message"]["message_id"], "🎤 " + (filename or kind), number, reply_to, voice=True)
        await self.standin.add_update(update)
        return _ok({"ok": True})

    async def webapp(self, request: web.Request) -> web.Response:
        """The address that opens the Mini App as a Telegram client would: the app's page with the
        launch parameters (``initData`` signed with the bot's token) in the fragment."""
        body = await _body(request)
        number = _user(body)
        url = body.get("url")
        if not isinstance(url, str):
            raise BadRequest("url: the Mini App's address (a web_app button's or the menu button's)")
        webapp_url = self.settings.webapp_url or ""
        extra: dict[str, str] = {}
        if webapp_url and url.startswith(webapp_url):
            page = "/app/" + url.removeprefix(webapp_url)
        else:
            parts = urlsplit(url)
            start = parse_qs(parts.query).get("startapp")
            if parts.netloc != "t.me" or not parts.path.startswith(f"/{self.standin.username}") or not start:
                raise BadRequest("url: not a Mini App of this bot")
            page, extra = "/app/", {"start_param": start[0]}
        user = {"id": USERS[number], "first_name": self.names[number], "language_code": self.language}
        signed = initdata.sign_user(user, self.standin.token, auth_date=int(time.time()), **extra)
        theme = json.dumps(THEME, separators=(",", ":"))
        return _ok({"ok": True, "url": f"{page}#tgWebAppData={quote(signed)}&tgWebAppThemeParams={quote(theme)}"})

    async def file(self, request: web.Request) -> web.Response:
        """A photo or document the bot sent, as Telegram would let a person save it."""
        try:
            chat_id, message_id = int(request.match_info["chat"]), int(request.match_info["message"])
        except ValueError:
            raise web.HTTPNotFound() from None
        sent = next((m for m in self.standin.messages(chat_id) if m.message_id == message_id), None)
        item = None
        if sent is not None:
            item = sent.params.get("document") or sent.params.get("photo")
        if not isinstance(item, dict):
            raise web.HTTPNotFound()
        name = str(item.get("filename") or "file")
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        disposition = "inline" if sent is not None and sent.method == "sendPhoto" else "attachment"
        headers = {"Content-Disposition": f"{disposition}; filename*=UTF-8''{quote(name)}", "Cache-Control": "no-store"}
        charset = "utf-8" if kind.startswith("text/") else None
        return web.Response(body=item["content"], content_type=kind, charset=charset, headers=headers)

    async def page(self, request: web.Request) -> web.Response:
        name, kind = STATIC[request.path]
        body = resources.files("bot.demo").joinpath("static", name).read_bytes()
        headers = {"Content-Security-Policy": CSP, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
        return web.Response(body=body, content_type=kind, charset="utf-8", headers=headers)

    def add_routes(self, app: web.Application) -> None:
        r = app.router
        for path in STATIC:
            r.add_get(path, self.page)
        r.add_get("/demo/api/info", self.info)
        r.add_get("/demo/api/messages", self.messages)
        r.add_post("/demo/api/send", self.send)
        r.add_post("/demo/api/press", self.press)
        r.add_post("/demo/api/vote", self.vote)
        r.add_post("/demo/api/voice", self.voice)
        r.add_post("/demo/api/webapp", self.webapp)
        r.add_get("/demo/file/{chat}/{message}", self.file)


def _entities(sent: Sent) -> list[dict[str, Any]]:
    key = "caption" if sent.method in ("sendPhoto", "sendDocument") else "text"
    given = sent.params.get(f"{key}_entities" if key == "caption" else "entities")
    if isinstance(given, list):
        return given
    if (sent.params.get("parse_mode") or "").upper() == "HTML" and isinstance(sent.params.get(key), str):
        return parse_html_entities(sent.params[key])[1]
    return []


def _button(button: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"text": button.get("text", "")}
    if "callback_data" in button:
        out["data"] = button["callback_data"]
    if "url" in button:
        out["url"] = button["url"]
    if "web_app" in button:
        out["web_app"] = (button["web_app"] or {}).get("url")
    return out


async def _body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise BadRequest("expected a JSON object as the request body") from None
    if not isinstance(body, dict):
        raise BadRequest("expected a JSON object as the request body")
    return body


def _optional_int(body: dict[str, Any], key: str) -> int | None:
    value = body.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise BadRequest(f"{key}: expected a whole number")
    try:
        return int(value)
    except ValueError:
        raise BadRequest(f"{key}: expected a whole number") from None


def _user(body: dict[str, Any]) -> int:
    number = _optional_int(body, "user")
    if number is None:
        return 1
    if number not in USERS:
        raise BadRequest("user: expected 1 or 2 (the demo's two users)")
    return number


def _query_number(query: Any, key: str, default: float) -> float:
    value = query.get(key)
    if value in (None, ""):
        return default
    try:
        number = float(value)
    except ValueError:
        raise BadRequest(f"{key}: expected a number") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise BadRequest(f"{key}: expected a number")
    return number


def _ok(data: dict[str, Any]) -> web.Response:
    return web.json_response(
        data, dumps=lambda d: json.dumps(d, ensure_ascii=False), headers={"Cache-Control": "no-store"}
    )


@web.middleware
async def api_errors(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """A refused API request is a 400 with one line of JSON; an unexpected failure a 500 (logged)."""
    if not request.path.startswith("/demo/api/"):
        return await handler(request)
    try:
        return await handler(request)
    except BadRequest as exc:
        return web.json_response({"ok": False, "error": str(exc)}, status=400, dumps=_dumps)
    except web.HTTPException:
        raise
    except Exception:
        log.exception("demo API request %s failed", request.path)
        return web.json_response({"ok": False, "error": "internal error (see the demo's log)"}, status=500)


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)
