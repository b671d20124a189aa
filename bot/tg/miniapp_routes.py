"""The Mini App over HTTP (aiohttp): the page at ``/app/`` and its JSON API under ``/app/api/``.

Every API call carries ``Authorization: tma <initData>``; the signature is checked with the bot's
token (:mod:`bot.core.initdata`) and the user is the one in the signed data, whatever the query
string says. A missing, tampered or stale signature gets 401. The handlers parse the request, call
:mod:`bot.services.webapp` and answer JSON (gzip when the client takes it). Neither the token nor
``initData`` is ever logged.
"""

from __future__ import annotations

import gzip
import ipaddress
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from aiohttp import web
from telegram.error import TelegramError
from telegram.ext import Application

from bot.core import initdata
from bot.core.initdata import WebAppUser
from bot.db.engine import DATABASE_ERRORS
from bot.db.models import AskSource
from bot.i18n import section
from bot.push.outcome import Status
from bot.services import asking, chats
from bot.services import webapp as service
from bot.services import webapp_bank as bank_service
from bot.services import webapp_progress as progress_service
from bot.services.webapp import Viewer
from bot.tg import delivery
from bot.tg.context import Services
from bot.tg.ratelimit import SlidingWindow
from bot.tg.views import question_view

log = logging.getLogger(__name__)

STATIC = {"": ("index.html", "text/html"), "app.js": ("app.js", "text/javascript"), "app.css": ("app.css", "text/css")}
MAX_QUERY = 200
MEMBER_STATUSES = ("creator", "administrator", "member", "restricted")
ASKS_PER_MINUTE = 6  # «Спросить меня в чате» per user: each sends a message
MEMBERSHIP_TTL = 60.0  # seconds a membership (or a refusal) is trusted: who left sees the board at most a minute more
# The page runs its own script and Telegram's; the bank's HTML it shows can run nothing.
CSP = (
    "default-src 'self'; script-src 'self' https://telegram.org; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'"
)


@dataclass(frozen=True, slots=True)
class Asset:
    body: bytes
    gzipped: bytes
    content_type: str


def load_assets() -> dict[str, Asset]:
    """The page's files, shipped inside the package (bot/tg/static), compressed once."""
    folder = resources.files("bot.tg").joinpath("static")
    out = {}
    for route, (name, content_type) in STATIC.items():
        body = folder.joinpath(name).read_bytes()
        out[route] = Asset(body, gzip.compress(body, 9, mtime=0), content_type)
    return out


def _accepts_gzip(request: web.Request) -> bool:
    return "gzip" in request.headers.get("Accept-Encoding", "").lower()


def _json(request: web.Request, data: Any, status: int = 200) -> web.Response:
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
    headers = {"Cache-Control": "no-store"}
    if len(body) > 1024 and _accepts_gzip(request):
        body = gzip.compress(body, 5, mtime=0)
        headers["Content-Encoding"] = "gzip"
    return web.Response(body=body, status=status, content_type="application/json", headers=headers)


def _error(request: web.Request, status: int, code: str) -> web.Response:
    return _json(request, {"error": code}, status)


Handler = Callable[[web.Request, WebAppUser, Viewer], Awaitable[web.Response]]


def is_loopback(address: str | None) -> bool:
    """Whether a peer address is this machine (127.0.0.0/8, ::1)."""
    try:
        return address is not None and ipaddress.ip_address(address.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


class MiniApp:
    """Routes of the Mini App, added to the bot's HTTP server (:class:`bot.tg.http_server.WebServer`)."""

    def __init__(self, app: Application[Any, Any, Any, Any, Any, Any], services: Services) -> None:
        self.app = app
        self.services = services
        self.assets = load_assets()
        self._members: dict[tuple[int, int], tuple[bool, float]] = {}
        self._asks: dict[int, SlidingWindow] = {}  # per user: the Mini App's sends to their chat
        self.progress_cache = progress_service.ProgressCache()

    def add_routes(self, web_app: web.Application) -> None:
        r = web_app.router
        r.add_get("/app", self.redirect)
        r.add_get("/app/", self.page)
        r.add_get("/app/app.js", self.page)
        r.add_get("/app/app.css", self.page)
        r.add_get("/app/api/dev-init", self.dev_init)
        api: dict[str, Handler] = {
            "me": self.me,
            "progress": self.progress,
            "topics": self.topics,
            "topics/{topic}": self.topic,
            "search": self.search,
            "questions/{question}": self.question,
            "glossary": self.glossary,
            "glossary/{term}": self.term,
            "answers": self.answers,
            "board": self.board,
        }
        for path, handler in api.items():
            r.add_get(f"/app/api/{path}", self._authed(handler))
        r.add_post("/app/api/ask", self._authed(self.ask))

    # The page -----------------------------------------------------------------------------------

    async def redirect(self, request: web.Request) -> web.Response:
        raise web.HTTPPermanentRedirect("/app/" + (f"?{request.query_string}" if request.query_string else ""))

    async def page(self, request: web.Request) -> web.Response:
        asset = self.assets[request.path.removeprefix("/app/")]
        headers = {
            "Cache-Control": "no-cache",
            "X-Content-Type-Options": "nosniff",
            "Vary": "Accept-Encoding",
            "Content-Security-Policy": CSP,
            "Referrer-Policy": "no-referrer",
        }
        body = asset.body
        if _accepts_gzip(request):
            body, headers["Content-Encoding"] = asset.gzipped, "gzip"
        return web.Response(body=body, content_type=asset.content_type, charset="utf-8", headers=headers)

    async def dev_init(self, request: web.Request) -> web.Response:
        """WEBAPP_DEV=1 only (local development without Telegram), and only to a peer on this machine:
        initData signed here for a test user (the first of ADMIN_IDS, else user 1). Otherwise there is
        no such page."""
        settings = self.services.settings
        if not settings.webapp_dev or not is_loopback(request.remote):  # the peer, never a forwarded header
            raise web.HTTPNotFound()
        user_id = min(settings.admin_ids) if settings.admin_ids else 1
        user = {"id": user_id, "first_name": "Dev", "language_code": settings.default_language}
        signed = initdata.sign_user(user, self.app.bot.token, auth_date=int(self._now()))
        return _json(request, {"init_data": signed})

    # Authentication -----------------------------------------------------------------------------

    def _now(self) -> float:
        return self.services.clock().timestamp()

    def authenticate(self, request: web.Request) -> WebAppUser | None:
        scheme, _, data = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "tma":
            return None
        max_age = self.services.settings.webapp_auth_max_age
        return initdata.verify(data.strip(), self.app.bot.token, now=self._now(), max_age=max_age)

    def _authed(self, handler: Handler) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def run(request: web.Request) -> web.Response:
            user = self.authenticate(request)
            if user is None:
                log.info("Mini App request without a valid signature (answered 401)")
                return _error(request, 401, "unauthorized")
            s = self.services
            try:
                viewer = await service.viewer(
                    s.db, user_id=user.id, tg_language=user.language_code,
                    default_lang=s.settings.default_language, default_zone=s.settings.default_timezone,
                )  # fmt: skip
                return await handler(request, user, viewer)
            except DATABASE_ERRORS as exc:
                log.warning("database unavailable for a Mini App request (%s)", type(exc).__name__)
                return _error(request, 503, "database")

        return run

    # The API ------------------------------------------------------------------------------------

    async def me(self, request: web.Request, user: WebAppUser, viewer: Viewer) -> web.Response:
        group = await self._group(user)
        return _json(
            request,
            {
                "first_name": user.first_name,
                "lang": viewer.lang,
                "known": viewer.known,
                "bot": self.app.bot.username,
                "group": {"title": group["title"]} if group else None,
                "strings": section(viewer.lang, "webapp"),
            },
        )

    async def progress(self, request: web.Request, user: WebAppUser, viewer: Viewer) -> web.Response:
        s = self.services
        data = await progress_service.progress(s.db, s.catalog, viewer, now=s.clock(), cache=self.progress_cache)
        return _json(request, data)

    async def topics(self, request: web.Request, user: WebAppUser, viewer: Viewer) -> web.Response:
        done = await bank_service.answered(self.services.db, user_id=user.id)
        return _json(request, {"topics": bank_service.topics(self.services.catalog, viewer.lang, done)})

    async def topic(self, request: web.Request, user: WebAppUser, viewer: Viewer) -> web.Response:
        done = await bank_service.answered(self.services.db, user_id=user.id)
        found = bank_service.topic(self.services.catalog, request.match_info["topic"], viewer.lang, done)
        return _json(request, found) if found else _error(request, 404, "not_found")

    async def search(self, request: web.Request, user: WebAppUser, viewer: Viewer) -> web.Response:
        query = request.query.get("q", "").strip()[:MAX_QUERY]
        done = await bank_service.answered(self.services.db, user_id=user.id)
        found = bank_service.search(self.services.catalog, query, viewer.lang, done) if query else []
        return _json(request, {"query": query, "questions": found})

    async def question(self, request: web.Request, user: WebAppUser, viewer: Viewer) -> web.Response:
        done = await bank_service.answered(self.services.db, user_id=user.id)
        found = bank_service.question(self.services.catalog, request.match_info["question"], viewer.lang, done)
        return _json(request, found) if found else _error(request, 404, "not_found")

    async def glossary(self, request: web.Request, user: WebAppUser, viewer: Viewer) -> web.Response:
        return _json(request, bank_service.glossary(self.services.catalog, viewer.lang))

    async def term(self, request: web.Request, user: WebAppUser, viewer: Viewer) -> web.Response:
        done = await bank_service.answered(self.services.db, user_id=user.id)
        found = bank_service.term(self.services.catalog, request.match_info["term"], viewer.lang, done)
        return _json(request, found) if found else _error(request, 404, "not_found")

    async def answers(self, request: web.Request, user: WebAppUser, viewer: Viewer) -> web.Response:
        q = request.query
        before = q.get("before", "")
        topic = q.get("topic") or None
        if topic is not None and self.services.bank.topic(topic) is None:
            return _error(request, 400, "bad_topic")
        grade = q.get("grade") or None
        if grade is not None and grade not in (*service.VERDICTS, "1", "2", "3"):
            return _error(request, 400, "bad_grade")
        if before and not (before.isascii() and before.isdigit() and len(before) < 19):
            return _error(request, 400, "bad_cursor")
        s = self.services
        data = await service.my_answers(
            s.db, s.catalog, viewer, topic_id=topic, grade=grade, before=int(before) if before else None
        )
        return _json(request, data)

    async def board(self, request: web.Request, user: WebAppUser, viewer: Viewer) -> web.Response:
        group = await self._group(user)
        if group is None:
            return _error(request, 404, "no_group")
        s = self.services
        zone = group["zone"] or s.settings.default_timezone
        data = await service.board(s.db, chat_id=group["id"], user_id=user.id, zone=zone, now=s.clock())
        return _json(request, {"title": group["title"], **data})

    async def ask(self, request: web.Request, user: WebAppUser, viewer: Viewer) -> web.Response:
        """«Спросить меня в чате»: the bot asks the question in the user's private chat, as /q would
        (recorded first, so the reply there is taken as the answer)."""
        try:
            body = await request.json()
        except (ValueError, UnicodeDecodeError):
            return _error(request, 400, "bad_body")
        qid = body.get("question") if isinstance(body, dict) else None
        s = self.services
        if not self._ask_window(user.id).take():  # each /ask sends a message: a flood is refused here
            return _error(request, 429, "too_many")
        q = s.bank.question(qid) if isinstance(qid, str) else None
        if q is None:
            return _error(request, 404, "not_found")
        chat_row, _ = await chats.load(s.db, chat_id=user.id, user_id=None)
        if chat_row is None:  # never talked to the bot: Telegram would refuse the message
            return _error(request, 409, "start_bot")
        view = question_view(q, s.bank, viewer.lang, group=False)
        ask = await asking.record_ask(s.db, chat_id=user.id, question_id=q.id, user_id=user.id, source=AskSource.WEBAPP)
        outcome = await delivery.send(self.app.bot, user.id, view.text, style=delivery.HTML, keyboard=view.keyboard)
        if outcome.message_id is None:
            await asking.cancel_ask(s.db, ask, previous_pending=chat_row.pending_ask_id)
            log.info("Mini App could not ask in chat %s: %s", user.id, outcome.status)
            return _error(request, 409, "start_bot" if outcome.status is Status.BLOCKED else "send_failed")
        await asking.note_message(s.db, ask, outcome.message_id)
        return _json(request, {"ok": True})

    # Groups -------------------------------------------------------------------------------------

    async def _group(self, user: WebAppUser) -> dict[str, Any] | None:
        """The group the app was opened from (``startapp=g<chat id>`` in the signed data), if the
        bot is in it and the user is a member: a link to another group shows nothing."""
        param = user.start_param or ""
        if not param.startswith("g") or not param[1:].lstrip("-").isdigit() or len(param) > 24:
            return None
        chat_id = int(param[1:])
        group = await service.group_of(self.services.db, chat_id)
        if group is None or not await self._is_member(chat_id, user.id):
            return None
        return group

    def _ask_window(self, user_id: int) -> SlidingWindow:
        window = self._asks.get(user_id)
        if window is None:
            if len(self._asks) > 10_000:
                self._asks = {u: w for u, w in self._asks.items() if not w.has_capacity(w.max_rate)}
            window = self._asks[user_id] = SlidingWindow(ASKS_PER_MINUTE, 60.0)
        return window

    async def _is_member(self, chat_id: int, user_id: int) -> bool:
        key, now = (chat_id, user_id), time.monotonic()
        cached = self._members.get(key)
        if cached is not None and now - cached[1] < MEMBERSHIP_TTL:
            return cached[0]
        try:
            member = await self.app.bot.get_chat_member(chat_id, user_id)
            ok = member.status in MEMBER_STATUSES
        except TelegramError as exc:
            log.info("membership of a Mini App user in chat %s unknown: %s", chat_id, type(exc).__name__)
            return False
        if len(self._members) > 10_000:
            self._members.clear()
        self._members[key] = (ok, now)
        return ok
