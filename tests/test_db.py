"""Storage on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select

from bot.db import answers, asks, models, usage
from bot.db import chat_store as chats
from bot.db.engine import Database
from bot.db.models import Answer, ChatSeen

pytestmark = pytest.mark.asyncio


async def _db(url: str) -> Database:
    db = Database(url)
    await db.migrate()
    return db


async def test_migrations_apply_and_are_idempotent(db_url: str) -> None:
    db = await _db(db_url)
    await db.migrate()  # a second start must not fail
    assert await db.ping()
    await db.close()


async def test_user_and_chat_upsert_keep_settings(db_url: str) -> None:
    db = await _db(db_url)
    async with db.write() as s:
        await chats.upsert_user(s, chats.UserInfo(1, "Anna", "anna", "ru"))
        await chats.upsert_chat(s, chats.ChatInfo(1, "private"))
        await chats.set_user_fields(s, 1, language="en")
        await chats.set_chat_fields(s, 1, topic_filter="lora")
    async with db.write() as s:  # Telegram data changes, our settings stay
        user = await chats.upsert_user(s, chats.UserInfo(1, "Анна", None, "ru"))
        chat = await chats.upsert_chat(s, chats.ChatInfo(1, "private"))
    assert (user.first_name, user.language, chat.topic_filter) == ("Анна", "en", "lora")
    await db.close()


async def test_ask_answer_and_seen_counts(db_url: str) -> None:
    db = await _db(db_url)
    long_text = "ответ " * 800  # ~4800 chars: kept whole
    async with db.write() as s:
        await chats.upsert_user(s, chats.UserInfo(7, "U"))
        await chats.upsert_chat(s, chats.ChatInfo(7, "private"))
        ask = await asks.record_ask(s, 7, "q463", user_id=7, source="q", message_id=10)
        await asks.record_ask(s, 7, "q463", user_id=7, source="q", message_id=12)
        await answers.add_answer(s, answers.NewAnswer(ask=ask, question_id="q463", user_id=7, chat_id=7,
                                                      message_id=11, text=long_text))  # fmt: skip
    async with db.read() as s:
        assert await chats.seen_counts(s, 7) == {"q463": 2}
        chat = await chats.get_chat(s, 7)
        assert chat is not None and chat.pending_ask_id is not None
        found = await asks.ask_by_message(s, 7, 12)
        assert found is not None and found.id == chat.pending_ask_id
        latest = await answers.latest_answer(s, 7, "q463")
        assert latest is not None and latest.text == long_text
    await db.close()


async def test_concurrent_writers_do_not_lose_answers(db_url: str) -> None:
    """50 users answering at once: every answer stored, no 'database is locked'."""
    db = await _db(db_url)
    async with db.write() as s:
        for uid in range(50):
            await chats.upsert_user(s, chats.UserInfo(1000 + uid, "U"))
            await chats.upsert_chat(s, chats.ChatInfo(1000 + uid, "private"))

    async def user(uid: int) -> None:
        for i in range(5):
            async with db.write() as s:
                ask = await asks.record_ask(s, uid, f"q{i}", user_id=uid, source="q", message_id=i)
                await answers.add_answer(s, answers.NewAnswer(ask=ask, question_id=f"q{i}", user_id=uid, chat_id=uid,
                                                              message_id=100 + i, text=f"answer {i}"))  # fmt: skip

    await asyncio.gather(*(user(1000 + uid) for uid in range(50)))
    async with db.read() as s:
        count = (await s.execute(select(func.count()).select_from(Answer))).scalar_one()
        seen = (await s.execute(select(func.sum(ChatSeen.count)))).scalar_one()
    assert (count, seen) == (250, 250)
    await db.close()


async def _group_with_history(db: Database, chat_id: int, *, seen: int, settings: bool) -> None:
    from datetime import date

    from bot.db.models import Delivery, Interview

    async with db.write() as s:
        await chats.upsert_user(s, chats.UserInfo(41, "Anna"))
        await chats.upsert_chat(s, chats.ChatInfo(chat_id, "group" if chat_id > -(10**12) else "supergroup", "Study"))
        if settings:
            await chats.set_chat_fields(
                s, chat_id, language="en", timezone="Europe/Berlin", push_enabled=True, push_minute=570
            )
            s.add(Interview(user_id=41, chat_id=chat_id, status="open", topics="lora", size=5))
        for _ in range(seen):
            await asks.record_ask(s, chat_id, "q463", user_id=41, source="q", message_id=None)
        s.add(Delivery(chat_id=chat_id, local_date=date(2026, 12, 1), due_at=models.utcnow(), status="sent"))


@pytest.mark.parametrize("new_first", [False, True], ids=["old-group-first", "supergroup-first"])
async def test_a_group_that_becomes_a_supergroup_keeps_everything(db_url: str, new_first: bool) -> None:
    from bot.db.models import Ask, Chat, Delivery, Interview

    db = await _db(db_url)
    old, new = -4001, -1_000_000_004_001
    await _group_with_history(db, old, seen=2, settings=True)
    if new_first:  # the supergroup's service message came first: its row has defaults and asks
        await _group_with_history(db, new, seen=1, settings=False)
    for _ in range(2):  # both service messages: the second finds nothing left to move
        async with db.write() as s:
            await chats.migrate_chat(s, old, new)
    async with db.read() as s:
        assert await s.get(Chat, old) is None
        chat = await s.get(Chat, new)
        assert chat is not None
        assert (chat.language, chat.timezone, chat.push_enabled, chat.push_minute) == ("en", "Europe/Berlin", True, 570)
        assert await chats.seen_counts(s, new) == {"q463": 3 if new_first else 2}
        asks = await s.scalar(select(func.count()).select_from(Ask).where(Ask.chat_id == new))
        assert asks == (3 if new_first else 2)
        deliveries = await s.scalar(select(func.count()).select_from(Delivery).where(Delivery.chat_id == new))
        assert deliveries == 1  # one per date
        interview = await s.scalar(select(Interview.chat_id).where(Interview.status == "open"))
        assert interview == new
        left = await s.scalar(select(func.count()).select_from(Ask).where(Ask.chat_id == old))
        assert left == 0
    await db.close()


async def test_long_strings_and_nul_characters_are_stored_not_refused(db_url: str) -> None:
    """What passed on SQLite and failed on PostgreSQL ("database unavailable"): strings longer
    than their column and NUL characters."""
    from bot.db.models import Interview, User

    db = await _db(db_url)
    async with db.write() as s:
        await chats.upsert_user(s, chats.UserInfo(9, "An\x00na", "u" * 200, "x" * 40))
        await chats.upsert_chat(s, chats.ChatInfo(-9, "group", "Группа\x00" + "т" * 400))
        ask = await asks.record_ask(s, -9, "q463", user_id=9, source="q", message_id=1)
        await answers.add_answer(s, answers.NewAnswer(ask=ask, question_id="q463", user_id=9, chat_id=-9,
                                                      message_id=2, text="ответ\x00 с NUL"))  # fmt: skip
        s.add(Interview(user_id=9, chat_id=9, topics=",".join(["distributed"] * 30), size=1))
    async with db.read() as s:
        user = await s.get(User, 9)
        assert user is not None and user.first_name == "Anna" and len(user.username or "") == 64
        chat = await chats.get_chat(s, -9)
        assert (
            chat is not None and chat.title is not None and chat.title.startswith("Группа") and len(chat.title) <= 256
        )
        assert (await answers.latest_answer(s, 9, "q463")).text == "ответ с NUL"  # type: ignore[union-attr]
        topics = await s.scalar(select(Interview.topics))
        assert topics is not None and len(topics) == 256
    await db.close()


async def test_usage_counts_users_chats_subscriptions_and_answers_per_day(db_url: str) -> None:
    from datetime import timedelta

    db = await _db(db_url)
    now = models.utcnow()
    async with db.write() as s:
        for uid, days_ago in ((51, 0), (52, 3), (53, 40)):
            await chats.upsert_user(s, chats.UserInfo(uid, "U"))
            await chats.set_user_fields(s, uid, last_seen_at=now - timedelta(days=days_ago, minutes=1))
            await chats.upsert_chat(s, chats.ChatInfo(uid, "private"))
        await chats.upsert_chat(s, chats.ChatInfo(-51, "group", "G"))
        await chats.set_chat_fields(s, 51, push_enabled=True)
        await answers.add_answer(s, answers.NewAnswer(ask=None, question_id="q1", user_id=51, chat_id=51,
                                                      message_id=None, text="a", at=now - timedelta(days=1)))  # fmt: skip
        await answers.add_answer(s, answers.NewAnswer(ask=None, question_id="q1", user_id=52, chat_id=52,
                                                      message_id=None, text="b", at=now - timedelta(days=10)))  # fmt: skip
    async with db.read() as s:
        found = await usage.usage(s, now)
    assert found.active == {1: 1, 7: 2, 30: 2}
    assert found.chats == {"group": 1, "private": 3}
    assert found.subscribed == 1
    assert found.answers_per_day == {(now - timedelta(days=1)).strftime("%m-%d"): 1}
    await db.close()


async def test_planner_claims_once_reclaims_released_and_reveals_once(db_url: str) -> None:
    from datetime import UTC, date, datetime, timedelta

    from bot.db import deliveries
    from bot.db.models import Delivery, DeliveryStatus
    from bot.push.planner import PushPlanner

    db = await _db(db_url)
    now = datetime(2026, 3, 2, 10, 30, tzinfo=UTC)
    async with db.write() as s:
        await chats.upsert_chat(s, chats.ChatInfo(-61, "group", "G"))
        await chats.set_chat_fields(
            s, -61, push_enabled=True, timezone="UTC", push_minute=9 * 60, reveal_minute=10 * 60,
            next_push_at=datetime(2026, 3, 2, 9, 0, tzinfo=UTC), next_push_date=date(2026, 3, 2),
        )  # fmt: skip
    planner = PushPlanner(db, instance_id="a", default_zone="UTC", grace=timedelta(hours=6), lease=timedelta(minutes=5))
    first = await planner.plan(now, 10)
    assert [(c.chat_id, c.local_date) for c in first.claims] == [(-61, date(2026, 3, 2))]
    assert (await planner.plan(now, 10)).claims == []  # the chat's next push moved to the next day
    await planner.release([first.claims[0].delivery_id], now)
    again = await planner.plan(now, 10)
    assert [c.delivery_id for c in again.claims] == [first.claims[0].delivery_id] and again.reclaimed == 1
    async with db.write() as s:
        await deliveries.mark_sent(s, first.claims[0].delivery_id, 5, "q463", now)
    reveals = await planner.due_reveals(now)
    assert [(r.chat_id, r.question_id, r.message_id) for r in reveals] == [(-61, "q463", 5)]
    assert await planner.due_reveals(now) == []
    await planner.mark(first.claims[0].delivery_id, DeliveryStatus.FAILED, "test")
    async with db.read() as s:
        row = await s.get(Delivery, first.claims[0].delivery_id)
        assert row is not None and (row.status, row.error, row.attempts) == ("failed", "test", 2)
        assert await deliveries.last_delivery_date(s, -61) == date(2026, 3, 2)
    await db.close()


async def test_a_write_waiting_for_another_process_does_not_stall_other_chats(tmp_path: object) -> None:
    """SQLite runs on the event loop: while a CLI import (another process) holds the write lock, a
    write waits asleep, reads and other coroutines go on, and the write lands once the lock is gone."""
    import sys
    import time
    from pathlib import Path

    path = Path(str(tmp_path)) / "bot.db"
    db = await _db(f"sqlite:///{path}")
    holder = await asyncio.create_subprocess_exec(
        sys.executable, "-c", (
            "import sqlite3, sys, time\n"
            f"c = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
            "c.execute('BEGIN IMMEDIATE'); print('locked', flush=True); time.sleep(1.5); c.execute('COMMIT')\n"
        ),
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert holder.stdout is not None and (await holder.stdout.readline()).strip() == b"locked"
    ticks = 0

    async def other_chats() -> None:
        nonlocal ticks
        while not written.done():
            async with db.read() as s:  # a reader is never blocked by the writer (WAL)
                await s.execute(select(func.count()).select_from(Answer))
            ticks += 1
            await asyncio.sleep(0.01)

    async def write() -> float:
        started = time.monotonic()
        async with db.write() as s:
            await chats.upsert_user(s, chats.UserInfo(7, "Waiter"))
        return time.monotonic() - started

    written = asyncio.ensure_future(write())
    await asyncio.gather(written, other_chats())
    await asyncio.wait_for(holder.wait(), 10)
    assert written.result() >= 1.0  # it really waited for the other process
    assert ticks >= 30  # ...without blocking the loop (a blocked loop ticks once or twice)
    async with db.read() as s:
        assert (await s.execute(select(func.count()).select_from(models.User))).scalar_one() == 1
    await db.close()


async def test_many_units_of_work_open_at_once_do_not_wait_for_each_other(tmp_path: object) -> None:
    """SQLite's sessions run on the event loop: 40 read sessions held open across awaits (more than
    the pool keeps) must not block the loop waiting for a connection."""
    from pathlib import Path

    db = await _db(f"sqlite:///{Path(str(tmp_path)) / 'bot.db'}")
    release = asyncio.Event()

    async def reader() -> int:
        async with db.read() as s:
            await s.execute(select(func.count()).select_from(Answer))  # its connection is taken
            await release.wait()  # and held while the others take theirs
            return int((await s.execute(select(func.count()).select_from(Answer))).scalar_one())

    readers = [asyncio.ensure_future(reader()) for _ in range(40)]
    await asyncio.sleep(0.05)
    release.set()
    assert await asyncio.wait_for(asyncio.gather(*readers), 5) == [0] * 40
    await db.close()


async def test_prepared_reads_give_what_the_orm_gives(db_url: str) -> None:
    """The hot paths' prepared statements (on SQLite files compiled once and run on the sqlite3
    connection directly) return the same values, of the same types, as the ORM: time zones,
    booleans, NULLs, text."""
    from datetime import UTC, datetime

    from bot.db import cards
    from bot.db.models import Ask, Card, Chat, User

    db = await _db(db_url)
    at = datetime(2026, 12, 4, 21, 30, 15, 123456, tzinfo=UTC)
    async with db.write() as s:
        await chats.upsert_user(s, chats.UserInfo(5, "Анна", None, "ru"))
        await chats.upsert_chat(s, chats.ChatInfo(-5, "supergroup", "ML «клуб»"))
        await chats.set_chat_fields(
            s, -5, push_enabled=True, push_minute=540, next_push_at=at, timezone="Europe/Moscow"
        )
        ask = await asks.record_ask(s, -5, "q463", user_id=5, source="q", message_id=77)
        await cards.review_card(s, 5, "q463", self_grade=None, coverage=0.4, now=at)
        card = await cards.review_card(s, 5, "q463", self_grade=3, coverage=None, now=at)
    async with db.read() as s:
        pairs = [
            (await chats.read_chat(s, -5), await s.get(Chat, -5)),
            (await chats.read_user(s, 5), await s.get(User, 5)),
            (await asks.get_ask(s, ask.id), await s.get(Ask, ask.id)),
            (await asks.ask_by_message(s, -5, 77), await s.get(Ask, ask.id)),
        ]
        stored_card = await s.get(Card, (5, "q463"))
        assert await chats.read_chat(s, 404) is None and await asks.ask_by_message(s, -5, 78) is None
    for fast, orm in pairs:
        assert fast is not None and orm is not None
        for column in (c.key for c in type(orm).__table__.c):
            value, expected = getattr(fast, column), getattr(orm, column)
            assert (value, type(value)) == (expected, type(expected)), column
    chat = pairs[0][0]
    assert chat is not None and chat.next_push_at == at and chat.push_enabled is True and chat.language is None
    assert stored_card is not None and (card.reps, card.auto_rated, card.due) == (
        stored_card.reps, stored_card.auto_rated, stored_card.due,
    )  # fmt: skip
    assert card.reps == 1 and card.auto_rated is False  # the self-grade replaced the automatic rating
    await db.close()


async def test_a_prepared_write_that_breaks_a_rule_is_a_database_error(db_url: str) -> None:
    """A constraint broken by a prepared statement is SQLAlchemy's IntegrityError (what the
    callers catch), not the driver's own, and the transaction is rolled back."""
    from sqlalchemy.exc import IntegrityError

    from bot.db.models import Ask

    db = await _db(db_url)

    async def ask_in_a_chat_that_is_not_there() -> None:
        async with db.write() as s:
            await chats.upsert_chat(s, chats.ChatInfo(3, "private"))
            await asks.record_ask(s, 404, "q463", user_id=None, source="q")

    with pytest.raises(IntegrityError):
        await ask_in_a_chat_that_is_not_there()
    async with db.read() as s:
        assert await s.scalar(select(func.count()).select_from(Ask)) == 0
        assert await chats.read_chat(s, 3) is None
    await db.close()


async def test_inbox_done_marks_in_small_and_large_batches(db_url: str) -> None:
    """Done marks come one by one (what finished since the last write) or in a backlog's batch;
    either way exactly those updates stop being pending and lose their payload."""
    from datetime import UTC, datetime, timedelta

    from bot.db import inbox

    db = await _db(db_url)
    now = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
    async with db.write() as s:
        fresh = await inbox.store(s, [(i, f'{{"update_id": {i}}}') for i in range(1, 21)], "host-a", now)
        assert fresh == set(range(1, 21))
        assert await inbox.store(s, [(3, "{}"), (21, "{}")], "host-a", now) == {21}  # 3: a redelivery
    async with db.write() as s:
        await inbox.mark_done(s, [2, 3, 2], now)
    async with db.write() as s:
        await inbox.mark_done(s, range(5, 17), now)
    async with db.read() as s:
        left = await inbox.pending(s, host="host-a", orphaned_before=now - timedelta(minutes=2))
    assert [update_id for update_id, _ in left] == [1, 4, 17, 18, 19, 20, 21]
    assert left[0][1] == '{"update_id": 1}'
    await db.close()


async def test_prepared_statements_and_the_orm_share_one_transaction(db_url: str) -> None:
    """A unit of work that mixes prepared statements (on SQLite: the sqlite3 connection) with ORM
    objects (a Session made on demand over that same connection) commits or rolls back as one."""
    from bot.db.models import Ask, Interview

    db = await _db(db_url)
    async with db.write() as s:
        await chats.upsert_user(s, chats.UserInfo(8, "U"))
        await chats.upsert_chat(s, chats.ChatInfo(8, "private"))

    async def ask_and_plan(fail: bool) -> None:
        async with db.write() as s:
            await asks.record_ask(s, 8, "q463", user_id=None, source="q")  # prepared
            s.add(Interview(user_id=8, chat_id=8, topics="lora", size=1))  # ORM
            await s.flush()
            if fail:
                raise RuntimeError("the handler failed")

    with pytest.raises(RuntimeError):
        await ask_and_plan(fail=True)
    async with db.read() as s:
        assert (await s.scalar(select(func.count()).select_from(Ask)), await s.scalar(select(func.count()).select_from(Interview))) == (0, 0)  # fmt: skip
        assert (await chats.read_chat(s, 8)).pending_ask_id is None  # type: ignore[union-attr]
    await ask_and_plan(fail=False)
    async with db.read() as s:
        chat = await chats.read_chat(s, 8)  # prepared, then the ORM in the same read
        count = await s.scalar(select(func.count()).select_from(Interview))
        assert chat is not None and chat.pending_ask_id is not None and count == 1
        assert (await s.get(Ask, chat.pending_ask_id)) is not None
    await db.close()


async def test_a_write_of_prepared_statements_is_kept_when_the_session_was_touched(tmp_path: object) -> None:
    """Looking at the ORM Session (``info``, ``is_active``) makes it; a unit of work that then runs
    only prepared statements is still committed."""
    from datetime import UTC, datetime

    from bot.db import inbox
    from bot.db.session import SqliteSession

    db = await _db(f"sqlite:///{tmp_path}/t.db")
    async with db.write() as s:
        assert isinstance(s, SqliteSession) and s.sync_session.info is not None
        await inbox.store(s, [(7, "{}")], "host", datetime.now(UTC))
    async with db.write() as s:
        await inbox.store(s, [(8, "{}")], "host", datetime.now(UTC))
        assert isinstance(s, SqliteSession) and s.sync_session.is_active
    async with db.read() as s:
        left = await inbox.pending(s, host="host", orphaned_before=datetime.now(UTC))
    assert [update_id for update_id, _ in left] == [7, 8]
    await db.close()


async def test_a_commit_that_fails_is_a_database_error(tmp_path: object) -> None:
    """A full disk shows up at COMMIT, when SQLite writes the pages: for a unit of work of prepared
    statements (the inbox's store) it is SQLAlchemy's OperationalError, which the inbox and the error
    handler treat as "the database is unavailable" (a bare sqlite3 error stopped the bot), and
    nothing of the unit is kept."""
    import resource
    import signal
    from datetime import UTC, datetime
    from pathlib import Path

    from sqlalchemy.exc import OperationalError

    from bot.db import inbox

    path = f"{tmp_path}/t.db"
    db = await _db(f"sqlite:///{path}")
    async with db.write() as s:
        await inbox.store(s, [(1, "{}")], "host", datetime.now(UTC))

    async def store_a_lot() -> None:
        async with db.write() as s:
            await inbox.store(s, [(i, "y" * 4000) for i in range(100, 140)], "host", datetime.now(UTC))

    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    old_limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    limit = max(Path(path).stat().st_size, Path(path + "-wal").stat().st_size) + 8192  # noqa: ASYNC240
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, old_limit[1]))
    try:
        with pytest.raises(OperationalError):
            await store_a_lot()
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old_limit)
        signal.signal(signal.SIGXFSZ, old_handler)
    async with db.read() as s:
        left = await inbox.pending(s, host="host", orphaned_before=datetime.now(UTC))
    assert [update_id for update_id, _ in left] == [1]
    await store_a_lot()  # the disk has room again: the same write goes through
    await db.close()


def test_schema_head_is_alembics_head() -> None:
    """A database at ``SCHEMA_HEAD`` starts without Alembic: the constant must name the newest migration."""
    from alembic.script import ScriptDirectory

    from bot.db.engine import SCHEMA_HEAD, alembic_config

    assert ScriptDirectory.from_config(alembic_config()).get_heads() == [SCHEMA_HEAD]


async def test_a_current_database_starts_without_alembic_and_a_new_one_is_migrated(tmp_path: object) -> None:
    import asyncio
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path}/fresh.db"
    db = await _db(url)  # a new database: migrated to the head
    assert await db.schema_version() is not None
    await db.close()
    code = (
        "import asyncio, sys\n"
        "from bot.db.engine import Database\n"
        f"db = Database({url!r})\n"
        "asyncio.run(db.migrate())\n"
        "print('alembic' in sys.modules)\n"
    )
    run = [sys.executable, "-c", code]
    out = await asyncio.to_thread(subprocess.run, run, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
