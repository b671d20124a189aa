"""The inbox keeps each update as Telegram sent it (not as PTB would rebuild it), and a kill -9
replay reads it back into the same update."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from sqlalchemy import text
from telegram import Bot, Update

from bot.db.engine import Database
from bot.tg.inbox import Inbox
from bot.tg.transport import RawUpdatesRequest

UPDATE = {
    "update_id": 41,
    "message": {
        "message_id": 7,
        "date": 1_764_000_000,
        "chat": {"id": 5, "type": "private", "first_name": "Аня"},
        "from": {"id": 5, "is_bot": False, "first_name": "Аня", "language_code": "ru"},
        "text": "Градиентный спуск — это…",
        "some_future_field": {"kept": True},
    },
}


def test_the_updates_request_keeps_each_update_as_received() -> None:
    request = RawUpdatesRequest()
    payload = json.dumps({"ok": True, "result": [UPDATE, {"no_id": 1}]}, ensure_ascii=False).encode()
    assert request.parse_json_payload(payload) == {"ok": True, "result": [UPDATE, {"no_id": 1}]}
    assert request.raw == {41: UPDATE}
    request.parse_json_payload(b'{"ok": true, "result": true}')  # another method's answer
    assert request.raw == {41: UPDATE}


async def test_the_inbox_stores_the_raw_update(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'bot.db'}")
    await db.migrate()
    bot = Bot("123:abc")
    update = Update.de_json(UPDATE, bot)
    app = cast(Any, type("App", (), {"bot": bot})())
    inbox = Inbox(app, db, lambda: datetime.now(UTC), host="h")
    assert [u.update_id for u in await inbox.take([update], {41: UPDATE})] == [41]
    async with db.read() as session:
        stored = (await session.execute(text("select payload from inbox where update_id = 41"))).scalar()
    assert json.loads(str(stored)) == UPDATE  # Russian text unescaped, unknown fields kept
    again = Update.de_json(json.loads(str(stored)), bot)
    assert again.message is not None and again.message.text == "Градиентный спуск — это…"
    assert await inbox.take([update], {41: UPDATE}) == []  # a redelivery is not taken twice
    await db.close()
