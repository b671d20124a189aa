"""The Mini App's use cases: who opened it, their own answers and the group board.

The progress screen is in :mod:`bot.services.webapp_progress`, the bank and glossary pages in
:mod:`bot.services.webapp_bank`. Telegram-free; each function takes the Database and/or the catalog,
the user id taken from the Telegram-signed ``initData`` (never one from the request), a clock value
and the user's zone and language, and returns plain JSON-ready dicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from bot.bank.markdown import to_html
from bot.catalog import Catalog
from bot.core.grading import GOOD, PARTIAL
from bot.db import chat_store as chats_db
from bot.db import miniapp_queries as webapp_db
from bot.db.engine import Database
from bot.i18n import language_from_telegram
from bot.services import quizzes
from bot.services.user_data import user_zone
from bot.services.webapp_bank import question_item

PAGE = 10  # answers per page: each comes with its reference answer
VERDICTS = ("good", "partial", "weak")


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who opened the app, as stored: the interface language and the time zone."""

    user_id: int
    lang: str
    zone: str
    tz: tzinfo
    known: bool  # the bot has a row for this user (they talked to it)


async def viewer(
    db: Database, *, user_id: int, tg_language: str | None, default_lang: str, default_zone: str
) -> Viewer:
    async with db.read() as session:
        user = await chats_db.get_user(session, user_id)
    lang = (user.language if user else None) or language_from_telegram(tg_language, default_lang)
    zone, tz = user_zone(user.timezone if user else None, default_zone)
    return Viewer(user_id, lang, zone, tz, user is not None)


def _covered(text: str | None) -> set[int] | None:
    if text is None:
        return None
    out = set()
    for part in text.split(","):
        if part.strip().isdigit():
            out.add(int(part))
    return out


def verdict(coverage: float | None) -> str | None:
    if coverage is None:
        return None
    return "good" if coverage >= GOOD else "partial" if coverage >= PARTIAL else "weak"


# My answers -------------------------------------------------------------------------------------


async def my_answers(
    db: Database,
    catalog: Catalog,
    viewer: Viewer,
    *,
    topic_id: str | None = None,
    grade: str | None = None,
    before: int | None = None,
) -> dict[str, Any]:
    """The viewer's answers (in private chats and groups alike, only theirs), newest first, each with
    the reference answer, the key points covered and missed and the self-assessment. ``grade``:
    ``good``/``partial``/``weak`` (the grader's verdict) or ``1``..``3`` (the self-assessment)."""
    bank, user_id, tz, lang = catalog.bank, viewer.user_id, viewer.tz, viewer.lang
    ids = list(bank.topic_question_ids(topic_id)) if topic_id else None
    self_grade = int(grade) if grade in ("1", "2", "3") else None
    async with db.read() as session:
        rows = await webapp_db.answers_page(
            session, user_id, question_ids=ids, self_grade=self_grade,
            verdict=grade if grade in VERDICTS else None, before_id=before, limit=PAGE + 1,
        )  # fmt: skip
    more = len(rows) > PAGE
    rows = rows[:PAGE]
    items = []
    references: dict[str, Any] = {}
    for row in rows:
        q = bank.question(row.question_id)
        covered = _covered(row.covered)
        item: dict[str, Any] = {
            "id": row.id,
            "question_id": row.question_id,
            "question": question_item(q, bank, lang) if q else None,
            "text": row.text,
            "at": row.created_at.astimezone(tz).strftime("%Y-%m-%d %H:%M"),
            "edited": row.edited,
            "score": None if row.coverage is None else round(row.coverage * 100),
            "verdict": verdict(row.coverage),
            "self_grade": row.self_grade,
            "group": row.chat_title if row.chat_id != user_id else None,
            "covered": [],
            "missed": [],
        }
        if q is not None:
            if covered is not None:
                item["covered"] = [kp.text for i, kp in enumerate(q.key_points) if i in covered]
                item["missed"] = [kp.text for i, kp in enumerate(q.key_points) if i not in covered]
            if q.id not in references:
                references[q.id] = to_html(q.answer)
        items.append(item)
    return {"items": items, "references": references, "next": rows[-1].id if more and rows else None}


# The group board --------------------------------------------------------------------------------


async def board(db: Database, *, chat_id: int, user_id: int, zone: str, now: datetime) -> dict[str, Any]:
    """The group's board this week and of all time, as /top shows it (members who said /top off
    are not listed). Ids are not sent: only names, points and whether a row is the viewer's."""
    out: dict[str, Any] = {}
    for period in ("week", "all"):
        found = await quizzes.board(db, chat_id=chat_id, period=period, zone=zone, now=now)
        out[period] = [
            {"name": r.name, "points": round(r.points, 1), "questions": r.questions, "quiz": r.quiz_correct,
             "me": r.user_id == user_id}
            for r in found.rows
        ]  # fmt: skip
        if found.since is not None:
            out["since"] = found.since.isoformat()
    return out


async def group_of(db: Database, chat_id: int) -> dict[str, Any] | None:
    """A group the bot knows: its title and zone (None: not a group the bot is in)."""
    async with db.read() as session:
        chat = await chats_db.get_chat(session, chat_id)
    if chat is None or chat.type not in ("group", "supergroup"):
        return None
    return {"id": chat.id, "title": chat.title or "", "zone": chat.timezone}
