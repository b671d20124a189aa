"""The Mini App's progress screen (bot/services/webapp.py) on a database of its own: the cached
digest, extended with new answers and late grades, says what a digest made from scratch says."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import text

from bot.bank import default_bank_path, load_bank
from bot.catalog import Catalog
from bot.db import answers as answers_db
from bot.db import cards as cards_db
from bot.db import chats as chats_db
from bot.db.engine import Database
from bot.services import webapp

UID = 5_001
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.build(load_bank(default_bank_path()))


async def add(db: Database, catalog: Catalog, rng: random.Random, n: int, *, graded: bool = True) -> list[int]:
    ids = []
    questions = list(catalog.bank.questions.values())[:12]
    async with db.write() as session:
        for _ in range(n):
            q = rng.choice(questions)
            covered = [i for i in range(len(q.key_points)) if rng.random() < 0.5]
            answer = await answers_db.add_answer(
                session, ask=None, question_id=q.id, user_id=UID, chat_id=UID, message_id=None, text="x",
                coverage=rng.random() if graded else None, covered=covered,
                at=NOW - timedelta(days=rng.randint(0, 60), hours=rng.randint(0, 23)),
            )  # fmt: skip
            ids.append(answer.id)
    return ids


async def test_extended_digest_equals_a_fresh_one(db_url: str, catalog: Catalog) -> None:
    """On SQLite and on PostgreSQL (the answers' hours are counted with each one's SQL)."""
    from bot.config import async_database_url

    db = Database(async_database_url(db_url))
    await db.migrate()
    rng = random.Random(3)
    async with db.write() as session:
        await chats_db.upsert_user(session, chats_db.UserInfo(UID, "Anna"))
    tz = ZoneInfo("Asia/Kolkata")  # +5:30: answers counted per quarter hour
    cache = webapp.ProgressCache()

    async def both() -> tuple[dict[str, Any], dict[str, Any]]:
        kwargs: dict[str, Any] = {"user_id": UID, "now": NOW, "tz": tz, "lang": "ru"}
        return (
            await webapp.progress(db, catalog, cache=cache, **kwargs),
            await webapp.progress(db, catalog, **kwargs),
        )

    await add(db, catalog, rng, 40)
    cached, fresh = await both()
    assert cached == fresh and cached["totals"]["answers"] == 40
    # new answers, two of them not graded yet
    await add(db, catalog, rng, 7)
    late = await add(db, catalog, rng, 2, graded=False)
    cached, fresh = await both()
    assert cached == fresh and cached["totals"]["answers"] == 49
    # the late grades arrive (as the LLM examiner attaches them: the grade, then the card's review)
    async with db.write() as session:
        for answer_id in late:
            await answers_db.set_grade(session, answer_id, 0.2, [0])
            qid = (
                await session.execute(text("select question_id from answers where id = :id"), {"id": answer_id})
            ).scalar()
            await cards_db.review_card(session, UID, str(qid), self_grade=None, coverage=0.2, now=NOW)
    cached, fresh = await both()
    assert cached == fresh
    assert sum(w["of"] for w in cached["weakest"]) > 0
    # a deletion (/forget of an answer): made again, still equal
    async with db.write() as session:
        await session.execute(text("delete from answers where id = :id"), {"id": late[0]})
    cached, fresh = await both()
    assert cached == fresh and cached["totals"]["answers"] == 48
    await db.close()
