"""``interview-bot demo``: the bot, unmodified, against the local Telegram stand-in, and a web chat.

One aiohttp application on 127.0.0.1 serves, on one event loop with the bot:

- the stand-in Bot API (``/bot<token>/…``, :mod:`bot.demo.standin`), which the bot reaches through
  its normal client (``TELEGRAM_API_URL`` points here);
- the Mini App (``/app/``: the bot's own routes, checking ``initData`` signed with the demo's token);
- the web chat (``/``) and the JSON API behind it (``/demo/api/…``, documented in the README):
  the demo users' messages, presses and votes become updates, as a Telegram client's would
  (:mod:`bot.demo.webchat`).

Two demo users (1 and 2) have a private chat each with the bot and share a demo group. The token is
made at start, so the Mini App is signed for real; the database is a throwaway SQLite file unless
``DATABASE_URL`` is set.
"""

from __future__ import annotations

import asyncio
import errno
import secrets
import signal
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.bank import Bank
from bot.config import Settings, SettingsError, load_settings
from bot.demo.standin import FakeTelegram
from bot.demo.webchat import MAX_UPLOAD, USERNAME, Demo, api_errors


def make_token() -> str:
    """A token of the shape @BotFather gives (digits:secret), new for every run."""
    return f"{secrets.randbelow(9 * 10**9) + 10**9}:{secrets.token_urlsafe(27)}"


# -- the command ---------------------------------------------------------------------------------


def listen(port: int) -> socket.socket:
    """The web chat's socket on 127.0.0.1 (port 0: any free one); one line when it cannot be had."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        reason = "already in use" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
        raise SettingsError(
            f"--port {port}: cannot listen on 127.0.0.1:{port} ({reason}); try another --port"
        ) from None
    sock.setblocking(False)
    return sock


def demo_settings(*, port: int, token: str, workdir: Path, **environment: Any) -> Settings:
    """The user's settings (grader, STT, language, ``DATABASE_URL``…) with the demo's Telegram: the
    stand-in's address and token, polling, the Mini App at the demo's address, a throwaway SQLite
    database unless ``DATABASE_URL`` is set, and quiet logs unless ``LOG_LEVEL`` is set.
    ``environment``: settings that stand in for the environment (the tests')."""
    given = load_settings(**environment).model_fields_set
    overrides: dict[str, Any] = {
        "bot_token": token,
        "telegram_api_url": f"http://127.0.0.1:{port}",
        # Telegram opens Mini Apps over https only; the web chat, as the client, opens this
        # address's path on its own http origin
        "webapp_url": f"https://127.0.0.1:{port}/app/",
        "webapp_short_name": None,
        "webapp_dev": False,
        "webhook_url": None,
        "metrics_port": None,
        "heartbeat_file": workdir / "alive",
    }
    if "database_url" not in given:
        overrides["database_url"] = f"sqlite:///{workdir / 'demo.db'}"
    if "log_level" not in given:
        overrides["log_level"] = "WARNING"
    return load_settings(**{**environment, **overrides})


async def serve_demo(
    settings: Settings, bank: Bank, sock: socket.socket, *, stop: asyncio.Event, on_ready: Callable[[str], None]
) -> None:
    """Serve the stand-in, the Mini App and the web chat on ``sock`` and run the bot until ``stop``."""
    from bot.tg.app import build_application, serve
    from bot.tg.miniapp_routes import MiniApp

    token = settings.require_token()
    port = int(sock.getsockname()[1])
    standin = FakeTelegram(token=token, username=USERNAME)
    app = build_application(settings, bank, token)
    web_app = web.Application(client_max_size=MAX_UPLOAD + 1024 * 1024, middlewares=[api_errors])
    standin.add_routes(web_app)
    MiniApp(app, app.bot_data["services"]).add_routes(web_app)
    Demo(standin, settings).add_routes(web_app)
    # at exit the stand-in's long polls still wait; they are not worth waiting for
    runner = web.AppRunner(web_app, access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    try:
        await web.SockSite(runner, sock).start()
        bot = asyncio.create_task(serve(app, settings, webhook=False, stop=stop), name="bot")
        polling = asyncio.create_task(standin.polled.wait())  # the bot's first getUpdates: it is ready
        await asyncio.wait({bot, polling}, return_when=asyncio.FIRST_COMPLETED)
        polling.cancel()
        if not bot.done():
            on_ready(f"http://127.0.0.1:{port}/")
        await bot
    finally:
        await runner.cleanup()


def run_command(port: int, load_bank: Callable[[Settings], Bank]) -> int:
    """``interview-bot demo``: serve until Ctrl-C or SIGTERM; the temporary folder goes at exit."""
    from bot.logs import setup_logging

    load_settings()  # a bad setting is one line before anything starts
    with tempfile.TemporaryDirectory(prefix="interview-bot-demo-") as folder:
        sock = listen(port)
        try:
            token = make_token()
            settings = demo_settings(port=int(sock.getsockname()[1]), token=token, workdir=Path(folder))
            settings.require_llm()
            settings.require_stt()
            keys = [key.get_secret_value() for key in (settings.llm_api_key, settings.stt_api_key) if key]
            setup_logging(settings.log_level, settings.log_format, token, keys)
            bank = load_bank(settings)

            async def main() -> None:
                stop = asyncio.Event()
                loop = asyncio.get_running_loop()
                for sig in (signal.SIGTERM, signal.SIGINT):
                    loop.add_signal_handler(sig, stop.set)
                await serve_demo(settings, bank, sock, stop=stop, on_ready=lambda url: print(url, flush=True))

            asyncio.run(main())
        finally:
            sock.close()
    return 0
