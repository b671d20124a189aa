"""Helpers for push tests: seed subscribed chats straight into a migrated database."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path


def migrate(db_url: str, cwd: Path) -> None:
    import os

    subprocess.run(
        [sys.executable, "-m", "bot", "migrate"],
        check=True,
        cwd=cwd,
        capture_output=True,
        env={**os.environ, "DATABASE_URL": db_url},
    )


def sqlite_path(db_url: str) -> str:
    return db_url.removeprefix("sqlite:///")


def seed_due_chats(
    db_url: str,
    chat_ids: list[int],
    *,
    due_ago: timedelta = timedelta(minutes=1),
    chat_type: str = "private",
    reveal_minute: int | None = None,
    push_kind: str = "question",
    now: datetime | None = None,
) -> None:
    """Chats subscribed to a daily push that became due ``due_ago`` ago (UTC zone; ``now``: the
    bot's clock, if the test set one)."""
    now = now or datetime.now(UTC)
    due = (now - due_ago).replace(tzinfo=None)
    minute = due.hour * 60 + due.minute
    rows = [
        (
            cid,
            chat_type,
            None,
            "UTC",
            1,
            minute,
            0,
            push_kind,
            reveal_minute,
            due.isoformat(sep=" "),
            due.date().isoformat(),
            now.replace(tzinfo=None).isoformat(sep=" "),
        )
        for cid in chat_ids
    ]
    with sqlite3.connect(sqlite_path(db_url)) as conn:
        conn.executemany(
            "insert into chats (id, type, title, timezone, push_enabled, push_minute, push_weekdays_only,"
            " push_kind, reveal_minute, next_push_at, next_push_date, created_at) values (?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )


def query(db_url: str, sql: str, *args: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(sqlite_path(db_url)) as conn:
        return conn.execute(sql, args).fetchall()
