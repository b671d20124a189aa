"""Shared fixtures: the fake Bot API server, a bot process running against it, databases."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakebot import TOKEN, FakeTelegram

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT.parent / "shared" / "seeds"


class BotProcess:
    """``python -m bot run`` as a child process, pointed at the fake server."""

    def __init__(self, fake: FakeTelegram, workdir: Path, env: dict[str, str] | None = None) -> None:
        self.fake = fake
        self.workdir = workdir
        self.db_url = f"sqlite:///{workdir / 'bot.db'}"
        self.env = {
            **os.environ,
            "BOT_TOKEN": TOKEN,
            "TELEGRAM_API_URL": fake.url,
            "DATABASE_URL": self.db_url,
            "LOG_LEVEL": "INFO",
            "PYTHONUNBUFFERED": "1",
            "POLL_TIMEOUT": "1",  # a short long-poll so the process stops quickly
            **(env or {}),
        }
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = workdir / "bot.log"

    def start(self, wait: bool = True) -> BotProcess:
        calls_before = len(self.fake.calls_of("getUpdates"))
        self._log = open(self.log_path, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "run"], cwd=self.workdir, env=self.env,
            stdout=self._log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        if wait:
            self.fake.wait_for(
                lambda: len(self.fake.calls_of("getUpdates")) > calls_before or self.proc.poll() is not None,  # type: ignore[union-attr]
                timeout=60, what="the bot to start polling",
            )  # fmt: skip
            if self.proc.poll() is not None:
                raise AssertionError(f"bot exited at start:\n{self.log()}")
        return self

    def rows(self, sql: str, *args: object) -> list[tuple[Any, ...]]:
        """Query the bot's SQLite database (what the bot stored)."""
        import sqlite3

        with sqlite3.connect(self.db_url.removeprefix("sqlite:///")) as conn:
            return conn.execute(sql, args).fetchall()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._log.close()
        return self.proc.returncode


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeTelegram]:
    server = FakeTelegram().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def bot(fake: FakeTelegram, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BotProcess]:
    process = BotProcess(fake, tmp_path_factory.mktemp("bot")).start()
    yield process
    process.stop()
    log = process.log()
    assert TOKEN not in log, "the bot token leaked into the log"
    assert TOKEN.split(":")[1] not in log


_ids = iter(range(10_000, 10_000_000, 7))


@pytest.fixture
def uid() -> int:
    """A fresh user id per test (so tests sharing one bot process don't see each other)."""
    return next(_ids)


def wait_until(predicate, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


@pytest.fixture(scope="session")
def postgres() -> Iterator[object]:
    """A real PostgreSQL server for the session (skipped only where no binaries exist and
    REQUIRE_POSTGRES is unset; CI sets it)."""
    from tests.pg import PostgresServer

    try:
        server = PostgresServer().start()
    except FileNotFoundError as exc:
        if os.environ.get("REQUIRE_POSTGRES"):
            raise
        pytest.skip(str(exc))
    yield server
    server.stop()


_db_names = iter(range(1, 10_000))


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty database URL on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'test.db'}"
    server = request.getfixturevalue("postgres")
    return server.create_db(f"t{os.getpid()}_{next(_db_names)}")  # type: ignore[attr-defined,no-any-return]
