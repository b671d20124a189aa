"""The Bot API transport (bot/tg/transport.py, aiohttp under PTB's BaseRequest): what PTB sends
arrives as Telegram expects it, and failures become PTB's error types."""

from __future__ import annotations

import asyncio
import socket
from io import BytesIO
from typing import Any

import pytest
from aiohttp import web
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, InputFile
from telegram.error import NetworkError, TimedOut

from bot.tg.transport import AiohttpRequest

TOKEN = "123456:" + "A" * 35


async def _server(handler: Any) -> tuple[web.AppRunner, str]:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"


async def test_json_bodies_and_uploads_reach_the_server() -> None:
    """A call without files is one JSON object with native values (the Bot API's
    ``application/json``); an upload is multipart form data."""
    seen: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.Response:
        fields: dict[str, Any] = {"type": request.content_type}
        if request.content_type == "application/json":
            fields.update(await request.json())
        else:
            for name, value in (await request.post()).items():
                fields[name] = (value.filename, value.file.read()) if isinstance(value, web.FileField) else value
        seen.append({"path": request.path, "agent": request.headers.get("User-Agent", ""), **fields})
        result: Any = {"message_id": 5, "date": 0, "chat": {"id": 7, "type": "private"}, "text": "Привет, мир"}
        if "reply_markup" in fields:  # Telegram echoes the keyboard and the formatting back
            result |= {"reply_markup": fields["reply_markup"], "entities": [{"type": "bold", "offset": 8, "length": 3}]}
        return web.json_response({"ok": True, "result": result})

    runner, url = await _server(handler)
    request = AiohttpRequest()
    bot = Bot(TOKEN, base_url=f"{url}/bot", request=request, get_updates_request=AiohttpRequest())
    try:
        await request.initialize()
        keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Показать ответ", callback_data="a:q463")]])
        sent = await bot.send_message(7, "Привет, <b>мир</b>", parse_mode="HTML", reply_markup=keyboard)
        assert (sent.message_id, sent.text) == (5, "Привет, мир")
        assert sent.reply_markup == keyboard and [e.type for e in sent.entities] == ["bold"]  # what Telegram says
        await bot.send_document(7, InputFile(BytesIO(b"# answers\n"), filename="answers.md"), caption="Экспорт")
    finally:
        await request.shutdown()
        await runner.cleanup()
    text, document = seen
    assert text["path"].endswith("/sendMessage") and text["type"] == "application/json"
    assert (text["chat_id"], text["text"], text["parse_mode"]) == (7, "Привет, <b>мир</b>", "HTML")
    assert text["reply_markup"] == {"inline_keyboard": [[{"text": "Показать ответ", "callback_data": "a:q463"}]]}
    assert "python-telegram-bot" in text["agent"]
    assert document["path"].endswith("/sendDocument") and document["type"] == "multipart/form-data"
    assert document["caption"] == "Экспорт" and document["chat_id"] == "7"
    assert document["document"] == ("answers.md", b"# answers\n")


async def test_a_server_that_does_not_answer_is_a_timeout() -> None:
    async def handler(request: web.Request) -> web.Response:
        await asyncio.sleep(1)  # past the 0.2 s read timeout; the server's cleanup waits for it
        return web.json_response({"ok": True, "result": True})

    runner, url = await _server(handler)
    request = AiohttpRequest(read_timeout=0.2)
    try:
        await request.initialize()
        with pytest.raises(TimedOut):
            await request.post(f"{url}/bot{TOKEN}/getMe")
    finally:
        await request.shutdown()
        await runner.cleanup()


async def test_a_closed_port_is_a_network_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    request = AiohttpRequest()
    try:
        await request.initialize()
        with pytest.raises(NetworkError) as caught:
            await request.post(f"http://127.0.0.1:{port}/bot{TOKEN}/getMe")
        assert not isinstance(caught.value, TimedOut)
    finally:
        await request.shutdown()


async def test_it_must_be_initialized_and_closes_twice_quietly() -> None:
    request = AiohttpRequest()
    with pytest.raises(RuntimeError):
        await request.do_request("http://127.0.0.1:9/", "GET")
    await request.initialize()
    await request.shutdown()
    await request.shutdown()
