"""The Mini App's progress screen (bot/services/webapp_progress.py) on a database of its own: the cached
digest, extended with new answers and late grades, and the copy kept in the database (what a restart
or another instance starts from) say what a digest made from scratch says."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import text

from bot.catalog import Catalog
from bot.db import answers as answers_db
from bot.db import cards as cards_db
from bot.db import chat_store as chats_db
from bot.db.engine import Database
from bot.services import webapp_progress as webapp
from bot.services.webapp import Viewer
from tests.conftest import shipped_bank

UID = 5_001
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.build(shipped_bank())


async def add(db: Database, catalog: Catalog, rng: random.Random, n: int, *, graded: bool = True) -> list[int]:
    ids = []
    questions = list(catalog.bank.questions.values())[:12]
    async with db.write() as session:
        for _ in range(n):
            q = rng.choice(questions)
            covered = [i for i in range(len(q.key_points)) if rng.random() < 0.5]
            new = answers_db.NewAnswer(
                ask=None, question_id=q.id, user_id=UID, chat_id=UID, message_id=None, text="x",
                coverage=rng.random() if graded else None, covered=covered,
                at=NOW - timedelta(days=rng.randint(0, 60), hours=rng.randint(0, 23)),
            )  # fmt: skip
            answer = await answers_db.add_answer(session, new)
            ids.append(answer.id)
    return ids


async def test_extended_digest_equals_a_fresh_one(db_url: str, catalog: Catalog) -> None:
    """On SQLite and on PostgreSQL (the answers' hours are counted with each one's SQL)."""
    from bot.config import database_url

    db = Database(database_url(db_url))
    await db.migrate()
    rng = random.Random(3)
    async with db.write() as session:
        await chats_db.upsert_user(session, chats_db.UserInfo(UID, "Anna"))
    tz = ZoneInfo("Asia/Kolkata")  # +5:30: answers counted per quarter hour
    cache = webapp.ProgressCache()

    async def both() -> tuple[dict[str, Any], dict[str, Any]]:
        kwargs: dict[str, Any] = {"viewer": Viewer(UID, "ru", "Asia/Kolkata", tz, True), "now": NOW}
        return (
            await webapp.progress(db, catalog, cache=cache, **kwargs),
            await webapp.progress(db, catalog, reuse=False, **kwargs),
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


async def test_a_restart_starts_from_the_stored_digest(
    db_url: str, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new process (an empty cache) reads the digest kept in the database and adds the answers
    given since, instead of reading every answer again; a copy it cannot read is made again; /forget
    deletes it."""
    from bot.config import database_url
    from bot.services import user_data

    db = Database(database_url(db_url))
    await db.migrate()
    rng = random.Random(5)
    async with db.write() as session:
        await chats_db.upsert_user(session, chats_db.UserInfo(UID, "Anna"))
    kwargs: dict[str, Any] = {"viewer": Viewer(UID, "en", "Europe/Moscow", ZoneInfo("Europe/Moscow"), True), "now": NOW}
    await add(db, catalog, rng, 30)
    first = await webapp.progress(db, catalog, cache=webapp.ProgressCache(), **kwargs)
    assert first["totals"]["answers"] == 30
    async with db.read() as session:
        kept = await session.execute(text("select count(*) from progress_digests where user_id = :u"), {"u": UID})
    assert kept.scalar() == 1

    made_anew: list[int] = []
    real = webapp.webapp_db.answer_stats

    async def counted(*args: Any, **kw: Any) -> Any:
        made_anew.append(1)
        return await real(*args, **kw)

    monkeypatch.setattr(webapp.webapp_db, "answer_stats", counted)
    await add(db, catalog, rng, 4)
    restarted = await webapp.progress(db, catalog, cache=webapp.ProgressCache(), **kwargs)
    assert made_anew == []  # the stored copy, extended with the 4 new answers
    assert restarted == await webapp.progress(db, catalog, reuse=False, **kwargs)
    assert restarted["totals"]["answers"] == 34
    made_anew.clear()

    # another zone: its days differ, so the copy is not used (and is replaced)
    moved = {**kwargs, "viewer": Viewer(UID, "en", "America/New_York", ZoneInfo("America/New_York"), True)}
    await webapp.progress(db, catalog, cache=webapp.ProgressCache(), **moved)
    assert made_anew == [1]
    made_anew.clear()

    async with db.write() as session:
        await session.execute(text("update progress_digests set body = '{not json'"))
    broken = await webapp.progress(db, catalog, cache=webapp.ProgressCache(), **moved)
    assert made_anew == [1] and broken["totals"]["answers"] == 34

    await user_data.forget(db, user_id=UID)
    async with db.read() as session:
        kept = await session.execute(text("select count(*) from progress_digests"))
    assert kept.scalar() == 0
    await db.close()


def test_a_digest_survives_its_json() -> None:
    from collections import Counter
    from datetime import date

    from bot.core import stats

    d = webapp.Digest(
        count=3,
        newest=17,
        per_day=Counter({date(2026, 11, 30): 2, date(2026, 12, 1): 1}),
        summary={"q1": stats.QuestionSummary("q1", 2, 0.5, None), "q2": stats.QuestionSummary("q2", 1, None, 3)},
        graded=Counter({"q1": 2}),
        hits=Counter({("q1", 0): 2, ("q1", 2): 1}),
        pending=frozenset({17}),
    )
    assert webapp.load_digest(webapp.dump_digest(d)) == d
    assert webapp.load_digest('{"count": 1}') is None
