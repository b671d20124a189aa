"""The one send policy: Telegram's answers as outcomes, and a broadcast acting on them (in process,
with a scripted channel instead of Telegram)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from telegram.error import BadRequest, ChatMigrated, Forbidden, NetworkError, RetryAfter, TimedOut

from bot.bank import Bank, Question
from bot.core.quiz import Quiz
from bot.db import chat_store
from bot.db.engine import Database
from bot.push.broadcast import BroadcastReport, Progress, audience, broadcast
from bot.push.outcome import Outcome, Status
from bot.push.pacer import Pacer
from bot.tg.delivery import classify


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (RetryAfter(dt.timedelta(seconds=7)), Outcome.wait(7.0)),
        (RetryAfter(3), Outcome.wait(3.0)),  # type: ignore[arg-type]  # older PTB: an int
        (Forbidden("bot was blocked by the user"), Outcome.blocked("forbidden: bot was blocked by the user")),
        (ChatMigrated(-100123), Outcome.migrated(-100123)),
        (TimedOut(), Outcome.failed(Status.TIMED_OUT, "timed out")),
        (BadRequest("Message is too long"), Outcome.failed(Status.TOO_LONG, "Message is too long")),
        (BadRequest("Chat not found"), Outcome.failed(Status.REJECTED, "Chat not found")),
        (NetworkError("connection reset"), Outcome.failed(Status.NETWORK, "connection reset")),
    ],
)
def test_telegram_errors_become_outcomes(error: Exception, expected: Outcome) -> None:
    assert classify(error) == expected  # type: ignore[arg-type]


class ScriptedChannel:
    """Answers each chat's sends from a script (then SENT), and records every send."""

    def __init__(self, script: dict[int, list[Outcome]]) -> None:
        self.script = script
        self.sends: list[int] = []

    async def send_text(self, chat_id: int, text: str) -> Outcome:
        self.sends.append(chat_id)
        queued = self.script.get(chat_id)
        return queued.pop(0) if queued else Outcome.sent(len(self.sends))

    async def send_question(self, chat_id: int, question: Question, bank: Bank, lang: str, *, group: bool) -> Outcome:
        raise NotImplementedError

    async def send_quiz(self, chat_id: int, quiz: Quiz) -> Outcome:
        raise NotImplementedError

    async def send_reveal(
        self, chat_id: int, question: Question, bank: Bank, lang: str, *, answered: int, reply_to: int
    ) -> Outcome:
        raise NotImplementedError


async def test_a_broadcast_retries_after_429_stops_blocked_chats_and_follows_migrations(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'b.db'}")
    await db.migrate()
    chats = [1, 2, 3, -4, -5]
    async with db.write() as s:
        for cid in chats:
            await chat_store.upsert_chat(s, chat_store.ChatInfo(cid, "private" if cid > 0 else "group"))
            await chat_store.set_chat_fields(s, cid, push_enabled=True)
    targets = await audience(db)
    assert sorted(targets) == sorted(chats)
    channel = ScriptedChannel(
        {
            1: [Outcome.wait(0.01)],  # 429: paused, then sent
            2: [Outcome.blocked("forbidden: bot was blocked by the user")],
            3: [Outcome.failed(Status.TOO_LONG, "Message is too long")],
            -4: [Outcome.migrated(-1004)],  # sent once at the new id
            -5: [Outcome.migrated(-1005)],
            -1005: [Outcome.migrated(-1006)],  # migrated twice: given up
        }
    )
    seen: list[BroadcastReport] = []

    async def progress(report: BroadcastReport) -> None:
        seen.append(report)

    report = await broadcast(
        channel, db, Pacer(1000, chat_interval=0), "hello", sorted(targets), progress=Progress(progress, every=-1)
    )
    assert (report.total, report.sent, report.blocked, report.failed) == (5, 2, 1, 2)
    assert channel.sends == [-5, -1005, -4, -1004, 1, 1, 2, 3]
    assert seen  # progress was reported along the way
    async with db.read() as s:
        assert sorted(await chat_store.subscribed_chat_ids(s)) == [-1005, -1004, 1, 3]  # 2 blocked; groups moved
        blocked = await chat_store.get_chat(s, 2)
        assert blocked is not None and blocked.push_stopped_reason == "forbidden: bot was blocked by the user"
    await db.close()
