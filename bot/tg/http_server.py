"""The bot's HTTP side (aiohttp): the Telegram webhook, ``/healthz``, ``/metrics`` and the Mini App
(``/app/``, :mod:`bot.tg.miniapp_routes`).

Webhook requests must carry Telegram's ``X-Telegram-Bot-Api-Secret-Token`` header equal to
``WEBHOOK_SECRET``; an update whose ``update_id`` was already taken (by this or another instance
behind the same load balancer) is acknowledged and dropped.
"""

from __future__ import annotations

import hmac
import json
import logging
from datetime import UTC, datetime
from typing import Any

from aiohttp import web
from telegram import Update
from telegram.ext import Application

from bot.db.engine import DATABASE_ERRORS
from bot.tg.context import Services
from bot.tg.miniapp_routes import MiniApp

log = logging.getLogger(__name__)
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 - a header name, not a secret


MAX_UPDATE_ID = 2**63 - 1  # BIGINT


def update_json(body: bytes) -> dict[str, Any] | None:
    """The JSON object of a webhook body, or None when it is not an update's: not JSON, not an
    object, no integer ``update_id`` in the BIGINT range."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    update_id = data.get("update_id")
    if type(update_id) is not int or not 0 <= update_id <= MAX_UPDATE_ID:
        return None
    return data


def update_of(data: dict[str, Any], bot: Any) -> Update | None:
    """The update, or None when a field has the wrong shape."""
    try:
        return Update.de_json(data, bot)
    except Exception:  # a field of the wrong shape ("message": "str") fails anywhere inside PTB
        return None


class WebServer:
    def __init__(
        self,
        app: Application[Any, Any, Any, Any, Any, Any],
        services: Services,
        *,
        listen: str,
        port: int,
        webhook_path: str | None = None,
        secret: str | None = None,
    ) -> None:
        self.app = app
        self.services = services
        self.listen, self.port = listen, port
        self.webhook_path = webhook_path
        self.secret = secret
        self._runner: web.AppRunner | None = None
        self.accepting = True
        self.mini_app = MiniApp(app, services)

    def build(self) -> web.Application:
        web_app = web.Application(client_max_size=2 * 1024 * 1024)
        web_app.router.add_get("/healthz", self.healthz)
        web_app.router.add_get("/metrics", self.metrics)
        self.mini_app.add_routes(web_app)
        if self.webhook_path is not None:
            web_app.router.add_post(self.webhook_path, self.webhook)
        return web_app

    async def start(self) -> None:
        self._runner = web.AppRunner(self.build(), access_log=None)
        await self._runner.setup()
        listen = self.listen
        if self.services.settings.webapp_dev:  # dev mode signs logins: this machine only
            listen = "127.0.0.1"
        site = web.TCPSite(self._runner, listen, self.port)
        await site.start()
        log.info("HTTP server on %s:%s (webhook: %s)", listen, self.port, bool(self.webhook_path))
        if listen != self.listen:
            log.warning("WEBAPP_DEV=1: the HTTP server listens on 127.0.0.1 only (not %s)", self.listen)

    async def stop(self) -> None:
        self.accepting = False
        if self._runner is not None:
            await self._runner.cleanup()

    async def webhook(self, request: web.Request) -> web.Response:
        if self.secret is not None:
            given = request.headers.get(SECRET_HEADER, "")
            if not hmac.compare_digest(given.encode(), self.secret.encode()):
                log.warning("webhook request with a wrong or missing secret token from %s", request.remote)
                return web.Response(status=403)
        if not self.accepting:
            return web.Response(status=503)  # Telegram retries later (maybe at another instance)
        data = update_json(await request.read())
        update = update_of(data, self.app.bot) if data is not None else None
        if data is None or update is None:
            log.info("webhook body that is not an update (answered 400)")
            return web.Response(status=400)
        inbox = self.services.inbox
        assert inbox is not None
        try:
            # stored before the 200 (a crash loses nothing), as received
            fresh = await inbox.take([update], {update.update_id: data})
        except DATABASE_ERRORS as exc:
            log.warning("database unavailable while taking update %s (%s)", update.update_id, type(exc).__name__)
            return web.Response(status=503)  # Telegram delivers it again later
        if not fresh:
            if self.services.metrics is not None:
                self.services.metrics.duplicates.inc()
            return web.Response(status=200)
        await self.app.update_queue.put(update)
        return web.Response(status=200)

    async def healthz(self, request: web.Request) -> web.Response:
        s = self.services
        db_ok = await s.db.ping()
        push = s.push
        last = push.stats.last_tick_at if push else None
        age = (datetime.now(UTC) - last).total_seconds() if last else None
        tick_ok = push is None or (age is not None and age < max(60.0, 5 * s.settings.tick_seconds))
        body = {
            "ok": db_ok and tick_ok,
            "database": db_ok,
            "bank": {
                "questions": len(s.bank.questions),
                "loaded_at": s.catalog.loaded_at.isoformat(),
            },
            "sender": push is not None,
            "last_tick_age_seconds": None if age is None else round(age, 1),
        }
        return web.json_response(body, status=200 if body["ok"] else 503)

    async def metrics(self, request: web.Request) -> web.Response:
        if self.services.metrics is None:
            return web.Response(status=404)
        return web.Response(body=self.services.metrics.render(), content_type="text/plain")
